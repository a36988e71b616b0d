// The parts every Node test of `waste serve` shares: start the server on a free port and
// read the one JSON line it prints (its URL), wait until the model is loaded, load an SDK
// from the folder sdk_client.sh installed it into, and stop the server, which must exit 0
// on SIGTERM.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { createInterface } from 'node:readline';
import path from 'node:path';
import assert from 'node:assert/strict';

// `waste serve MODEL` with a key: resolves to { server, base (…/v1), root (without /v1) }.
// Each server keeps its prompt cache in a folder of its own, removed when it exits: what one
// run kept must not turn the next run's first request into a cached one.
export async function startServe(cli, model, key, ctx) {
  const cache = mkdtempSync(path.join(os.tmpdir(), 'waste-serve-cache-'));
  const server = spawn(cli, ['serve', model, '--port', '0', '--api-key', key, '--ctx', String(ctx),
                             '--prompt-cache', cache],
                       { stdio: ['ignore', 'pipe', 'inherit'] });
  server.once('exit', () => rmSync(cache, { recursive: true, force: true }));
  const hello = await new Promise((resolve, reject) => {
    createInterface({ input: server.stdout }).once('line', (l) => resolve(JSON.parse(l)));
    server.once('exit', (code) => reject(new Error(`waste serve exited with ${code}`)));
  });
  return { server, base: hello.url, root: hello.url.replace(/\/v1$/, '') };
}

// Polls /health every 100 ms until it answers 200 (the model is loaded); returns its body.
// `whileLoading(response)` sees every other answer (a test may check it is 503).
export async function waitReady(root, tries = 600, whileLoading = () => {}) {
  for (let i = 0; i < tries; ++i) {
    const r = await fetch(`${root}/health`);
    if (r.status === 200) return r.json();
    whileLoading(r);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the model never became ready');
}

// An npm package from an `npm install --prefix` folder: { module, version }.
export function loadPackage(prefix, name) {
  const require = createRequire(path.join(path.resolve(prefix), 'package.json'));
  const version = JSON.parse(readFileSync(path.join(prefix, 'node_modules', name, 'package.json'), 'utf8')).version;
  return { module: require(name), version };
}

// Progress lines stamped with the seconds since the test began.
export function stepper() {
  const started = Date.now();
  return (what) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${what}`);
}

// SIGTERM, then the server must shut down cleanly.
export async function stopServe(server) {
  const exited = new Promise((resolve) => server.once('exit', (c) => resolve(c)));
  server.kill('SIGTERM');
  assert.equal(await exited, 0);
}
