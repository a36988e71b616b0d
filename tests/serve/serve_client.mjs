// `waste serve` against Node's fetch: health while loading and when ready, auth, errors,
// a chat completion, an SSE stream read incrementally (usage chunk, [DONE]), a client
// aborting mid-stream, and a clean exit on SIGTERM.
// usage: node serve_client.mjs WASTE_CLI MODEL_DIR
import assert from 'node:assert/strict';
import { startServe, stopServe, waitReady } from './serve_process.mjs';

const [cli, model] = process.argv.slice(2);
const key = 'sk-node-test';
const { server, base, root } = await startServe(cli, model, key, 1024); // base: http://127.0.0.1:PORT/v1
const auth = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };

try {
  const health = await waitReady(root, 300, (r) => assert.equal(r.status, 503));
  assert.equal(health.status, 'ok');

  // Errors: OpenAI error objects.
  let r = await fetch(`${base}/models`);
  assert.equal(r.status, 401);
  assert.equal((await r.json()).error.code, 'invalid_api_key');
  r = await fetch(`${base}/nothing`, { headers: auth });
  assert.equal(r.status, 404);
  assert.ok((await r.json()).error.message.length > 0);
  r = await fetch(`${base}/chat/completions`, { method: 'POST', headers: auth, body: '{"messages": [' });
  assert.equal(r.status, 400);
  r = await fetch(`${base}/chat/completions`, { method: 'POST', headers: auth,
                                                 body: JSON.stringify({ messages: [], temperature: 9 }) });
  assert.equal(r.status, 400);

  r = await fetch(`${base}/models`, { headers: auth });
  const models = await r.json();
  assert.equal(models.object, 'list');
  const id = models.data[0].id;

  // Non-streaming chat.
  const body = { model: id, messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 12, temperature: 0 };
  r = await fetch(`${base}/chat/completions`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
  assert.equal(r.status, 200);
  const whole = await r.json();
  assert.equal(whole.object, 'chat.completion');
  const text = whole.choices[0].message.content;
  assert.equal(typeof text, 'string');
  assert.ok(['stop', 'length'].includes(whole.choices[0].finish_reason));
  assert.equal(whole.usage.total_tokens, whole.usage.prompt_tokens + whole.usage.completion_tokens);

  // Streaming chat, read as it arrives.
  r = await fetch(`${base}/chat/completions`, {
    method: 'POST', headers: auth,
    body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }) });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/event-stream/);
  const decoder = new TextDecoder();
  let buffer = '', streamed = '', events = [];
  for await (const piece of r.body) {
    buffer += decoder.decode(piece, { stream: true });
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      assert.ok(event.startsWith('data: '), event);
      events.push(event.slice(6));
    }
  }
  assert.equal(buffer, '');
  assert.equal(events.at(-1), '[DONE]');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
  for (const c of chunks) {
    assert.equal(c.object, 'chat.completion.chunk');
    if (c.choices.length) streamed += c.choices[0].delta.content ?? '';
  }
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  // The stream repeats the prompt just read, so it may report it cached: compare the rest.
  const uncached = ({ prompt_tokens_details, ...rest }) => rest;
  assert.deepEqual(uncached(chunks.at(-1).usage), uncached(whole.usage));
  assert.equal(streamed, text);

  // A client that aborts mid-stream: the server cancels and serves the next one.
  const ac = new AbortController();
  r = await fetch(`${base}/completions`, {
    method: 'POST', headers: auth, signal: ac.signal,
    body: JSON.stringify({ prompt: 'Once upon a time', max_tokens: 900, temperature: 1, seed: 3, stream: true }) });
  const reader = r.body.getReader();
  await reader.read();
  ac.abort();
  await reader.read().catch(() => {});
  const t0 = Date.now();
  r = await fetch(`${base}/completions`, { method: 'POST', headers: auth,
                                           body: JSON.stringify({ prompt: 'Hi', max_tokens: 2 }) });
  assert.equal(r.status, 200);
  assert.equal((await r.json()).object, 'text_completion');
  console.log(`next request answered ${Date.now() - t0} ms after the abort`);
} finally {
  await stopServe(server);
}
console.log('serve_node_fetch: ok');
