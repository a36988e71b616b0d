// `waste serve` does not keep large request bodies on idle connections. Qt 6.4's HTTP server
// reads a whole body before it is answered and keeps it until the next request on that
// connection, so a keep-alive connection left idle held its last large body for as long as the
// client kept it open: with Node's agent (which reuses its most recent socket) the server held
// 33 MiB after ten bodies of 16-48 MiB, and the soak's 16 clients made that 57 MiB. The server
// now closes the connection of a request whose body is 1 MiB or more
// (HttpExchange::closeWhenAnswered). After those bodies (two at a time) and forty small
// requests, closing the client's idle connections must give back less than 8 MiB: what the
// server still held for them. (Its size against the start is not compared: glibc keeps some
// freed memory for reuse, from nothing to 29 MiB from one run to the next.)
//
// usage: node large_bodies.mjs WASTE_CLI CONTAINER
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { startServe, waitReady, stopServe, stepper } from './serve_process.mjs';

const [cli, model] = process.argv.slice(2);
const step = stepper();
const key = 'large-bodies-key';
const { server, base, root } = await startServe(cli, model, key, 512);
await waitReady(root);
const url = new URL(`${base}/chat/completions`);
const residentMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))[1]) / 1024;

// One POST on a connection kept alive, as clients keep theirs; resolves to its status.
const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
function post(body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ agent, host: url.hostname, port: url.port, path: url.pathname, method: 'POST',
                               headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` } },
                             (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });
    req.on('error', reject);
    req.end(body);
  });
}
const small = JSON.stringify({ messages: [{ role: 'user', content: 'Hello' }], max_tokens: 2 });
const settle = () => new Promise((resolve) => setTimeout(resolve, 1000));

let problems = 0;
for (let i = 0; i < 20; ++i) await post(small);
await settle();
const before = residentMiB();
step(`before: ${before.toFixed(1)} MiB resident`);
let peak = before;
for (const mib of [16, 32, 48, 16, 32]) {
  const body = Buffer.alloc(mib * 1024 * 1024, 0x61); // not JSON: answered 400 after it is read
  const statuses = await Promise.all([post(body), post(body)]);
  peak = Math.max(peak, residentMiB());
  if (statuses.some((s) => s !== 400)) { console.log(`FAIL a ${mib} MiB body was answered ${statuses}`); ++problems; }
}
for (let i = 0; i < 40; ++i) {
  const s = await post(small);
  if (s !== 200) { console.log(`FAIL a small request after the large ones was answered ${s}`); ++problems; break; }
}
await settle();
const after = residentMiB();
step(`after: ${after.toFixed(1)} MiB resident (${peak.toFixed(1)} at the peak)`);
agent.destroy(); // the client's idle connections close
await settle();
const closed = residentMiB();
step(`the client's connections closed: ${closed.toFixed(1)} MiB resident`);
if (after - closed > 8) {
  console.log(`FAIL the server held ${(after - closed).toFixed(1)} MiB for idle connections`);
  ++problems;
}
await stopServe(server);
console.log(problems ? `${problems} problems` : 'ok: no large body was held for an idle connection');
process.exit(problems ? 1 : 0);
