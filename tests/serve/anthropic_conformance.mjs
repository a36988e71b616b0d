// `waste serve` driven by the official `@anthropic-ai/sdk` npm client, the way applications
// use it: messages.create (whole and as a raw event stream), the messages.stream helper that
// assembles events into the final message, a forced tool_use parsed by the SDK and its
// tool_result sent back, stop_sequences, countTokens, and the SDK's typed errors
// (AuthenticationError 401, BadRequestError 400) with Anthropic's error body.
//
// usage: node anthropic_conformance.mjs CLIENT_PREFIX WASTE_CLI MODEL_DIR [ARCH]
//   CLIENT_PREFIX: an `npm install --prefix` folder holding @anthropic-ai/sdk
//   (sdk_client.sh installs it). ARCH: the architecture of a tiny model made for the test
//   (deepseek-v3, kimi-k2, qwen3-moe, qwen3.5-moe, deepseek-v32, deepseek-v4: formats that
//   reason before a forced tool_use when thinking is asked for, which must then come with a
//   thinking block; gpt-oss: harmony, where that block may be missing; qwen3-next;
//   glm-moe-dsa: GLM-4.7's layout). Exits 0 when every check passes.
import path from 'node:path';
import assert from 'node:assert/strict';
import { loadPackage, startServe, stepper, stopServe, waitReady } from './serve_process.mjs';

const [prefix, cli, model, arch] = process.argv.slice(2);
const thinks = ['deepseek-v3', 'kimi-k2', 'qwen3-moe', 'qwen3.5-moe', 'deepseek-v32', 'deepseek-v4'].includes(arch);
// Formats that write each argument of a call as its own element (GLM, Qwen3.5, DSML) take
// more tokens for a call's markup (V3.2's tiny vocabulary spells each DSML tag in many).
const callTokens = ['glm-moe-dsa', 'qwen3.5-moe', 'deepseek-v32', 'deepseek-v4'].includes(arch) ? 320 : 120;
// gpt-oss's harmony reasons first too, but its analysis channel may stay empty: a thinking
// block, when there is one, comes before the tool_use.
const harmony = arch === 'gpt-oss';
const { module: sdk, version } = loadPackage(prefix, '@anthropic-ai/sdk');
const Anthropic = sdk.Anthropic ?? sdk.default ?? sdk;
const name = arch ?? path.basename(model);
const step = stepper();

const key = 'sk-ant-conformance';
const { server, root } = await startServe(cli, model, key, 2048);
const id = (await waitReady(root)).model;
step(`@anthropic-ai/sdk ${version} on node ${process.version} against ${root} (${name})`);

// The SDK sends the key as x-api-key and its anthropic-version header.
const client = new Anthropic({ baseURL: root, apiKey: key, maxRetries: 0, timeout: 120000 });

const tools = [{ name: 'get_weather', description: 'Weather for a city',
                 input_schema: { type: 'object', properties: { city: { type: 'string', maxLength: 12 }, unit: { enum: ['c', 'f'] } },
                                 required: ['city', 'unit'], additionalProperties: false } }];
const text = (m) => m.content.filter((b) => b.type === 'text').map((b) => b.text).join('');

async function expectError(promise, Type, status, type) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof Type, `expected ${Type.name}, got ${e?.constructor?.name}: ${e?.message}`);
    assert.ok(e instanceof Anthropic.APIError);
    assert.equal(e.status, status);
    assert.equal(e.error.type, 'error');
    assert.equal(e.error.error.type, type);
    assert.ok(e.error.error.message.length > 0);
    return e;
  }
  throw new Error(`expected ${Type.name}`);
}

try {
  // Whole, greedy.
  const ask = { model: id, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello there' }],
                max_tokens: 16, temperature: 0 };
  const whole = await client.messages.create(ask);
  assert.equal(whole.type, 'message');
  assert.equal(whole.role, 'assistant');
  assert.match(whole.id, /^msg_/);
  assert.ok(['end_turn', 'max_tokens'].includes(whole.stop_reason));
  assert.ok(whole.usage.input_tokens > 0);
  assert.ok(whole.usage.output_tokens <= 16);
  step(`messages.create: ${JSON.stringify(text(whole))} (${whole.stop_reason})`);

  // The raw event stream and the stream helper give the same message.
  const raw = await client.messages.create({ ...ask, stream: true });
  const types = [];
  let streamed = '';
  for await (const event of raw) {
    types.push(event.type);
    if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') streamed += event.delta.text;
  }
  assert.equal(types[0], 'message_start');
  assert.equal(types.at(-1), 'message_stop');
  assert.equal(types.at(-2), 'message_delta');
  assert.equal(streamed, text(whole));
  const helper = client.messages.stream(ask);
  let helperText = '';
  helper.on('text', (t) => { helperText += t; });
  const final = await helper.finalMessage();
  assert.equal(text(final), text(whole));
  assert.equal(helperText, text(whole));
  assert.equal(final.stop_reason, whole.stop_reason);
  assert.deepEqual(final.usage.output_tokens, whole.usage.output_tokens);
  step(`messages stream: ${types.length} events, same text; messages.stream helper: same message`);

  // Thinking, when the model thinks: thinking blocks with a signature, before the text.
  const thought = await client.messages.create({ ...ask, max_tokens: 64, thinking: { type: 'enabled', budget_tokens: 1024 } });
  for (const b of thought.content.filter((c) => c.type === 'thinking')) assert.ok(b.signature.length > 0);
  step(`thinking: ${thought.content.map((b) => b.type).join(', ')}`);

  // A forced tool_use, parsed; streamed through the helper; its result sent back.
  const toolAsk = { model: id, messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools,
                    tool_choice: { type: 'tool', name: 'get_weather' }, max_tokens: callTokens, temperature: 1 };
  const called = await client.messages.create(toolAsk);
  assert.equal(called.stop_reason, 'tool_use');
  const use = called.content.find((b) => b.type === 'tool_use');
  assert.equal(use.name, 'get_weather');
  assert.match(use.id, /^toolu_/);
  assert.deepEqual(Object.keys(use.input).sort(), ['city', 'unit']);
  assert.ok([...use.input.city].length <= 12 && ['c', 'f'].includes(use.input.unit));
  if (thinks) { // with thinking asked for, the format reasons first: a thinking block before the tool_use
    // (unseeded sampling may close the think block at once, which leaves no thinking block:
    // a tool_use alone is retried, at most three times)
    let thoughtCall;
    for (let attempt = 0; attempt < 3; ++attempt) {
      thoughtCall = await client.messages.create({ ...toolAsk, thinking: { type: 'enabled', budget_tokens: 1024 } });
      const types = thoughtCall.content.map((b) => b.type);
      if (types.length === 1 && types[0] === 'tool_use') continue;
      break;
    }
    assert.deepEqual(thoughtCall.content.map((b) => b.type), ['thinking', 'tool_use'], JSON.stringify(thoughtCall.content));
    assert.equal(thoughtCall.content[1].name, 'get_weather');
  } else if (harmony) {
    const thoughtCall = await client.messages.create({ ...toolAsk, thinking: { type: 'enabled', budget_tokens: 1024 } });
    const types = thoughtCall.content.map((b) => b.type);
    assert.ok(types.at(-1) === 'tool_use' && types.slice(0, -1).every((t) => t === 'thinking'), JSON.stringify(thoughtCall.content));
    assert.equal(thoughtCall.content.at(-1).name, 'get_weather');
  }
  const streamedUse = (await client.messages.stream({ ...toolAsk, tool_choice: { type: 'any' } }).finalMessage())
    .content.find((b) => b.type === 'tool_use');
  assert.equal(streamedUse.name, 'get_weather');
  assert.equal(typeof streamedUse.input.city, 'string');
  const answered = await client.messages.create({
    model: id, tools, max_tokens: 8, temperature: 0,
    messages: [...toolAsk.messages, { role: 'assistant', content: called.content },
               { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny, 20 C' }] }] });
  assert.equal(answered.type, 'message');
  step(`tool_use: get_weather(${JSON.stringify(use.input)}), streamed, tool_result round trip`);

  // stop_sequences: a piece of the greedy answer (letters, first seen past its start) ends it there.
  const storyAsk = { ...ask, max_tokens: 40, messages: [{ role: 'user', content: 'Tell me a story.' }] };
  const story = text(await client.messages.create(storyAsk));
  let stop = null;
  for (let at = 2; at + 3 <= story.length && !stop; ++at) {
    const piece = story.slice(at, at + 3);
    if (story.indexOf(piece) === at && /^[A-Za-z0-9]+$/.test(piece)) stop = piece;
  }
  if (stop) {
    const cut = await client.messages.create({ ...storyAsk, stop_sequences: [stop] });
    assert.equal(cut.stop_reason, 'stop_sequence');
    assert.equal(cut.stop_sequence, stop);
    assert.ok(story.startsWith(text(cut)));
    step(`stop_sequences: stopped at ${JSON.stringify(stop)}`);
  } else {
    step(`stop_sequences: not checked, the answer ${JSON.stringify(story)} has no piece to stop at`);
  }

  // countTokens: the prompt a message request would feed.
  const counted = await client.messages.countTokens({ model: id, system: ask.system, messages: ask.messages });
  assert.equal(counted.input_tokens, whole.usage.input_tokens + (whole.usage.cache_read_input_tokens ?? 0));
  step(`countTokens: ${counted.input_tokens}`);

  // Errors, as the SDK's typed exceptions.
  const stranger = new Anthropic({ baseURL: root, apiKey: 'sk-wrong', maxRetries: 0 });
  await expectError(stranger.messages.create(ask), Anthropic.AuthenticationError, 401, 'authentication_error');
  await expectError(client.messages.create({ ...ask, temperature: 3 }), Anthropic.BadRequestError, 400,
                    'invalid_request_error');
  await expectError(client.messages.create({ ...ask, messages: [] }), Anthropic.BadRequestError, 400,
                    'invalid_request_error');
  await expectError(client.messages.create({ ...toolAsk, tool_choice: { type: 'tool', name: 'nope' } }),
                    Anthropic.BadRequestError, 400, 'invalid_request_error');
  step('errors: AuthenticationError 401, BadRequestError 400 in Anthropic\'s error shape');
} finally {
  await stopServe(server);
}
step(`anthropic conformance on ${name}: ok`);
