// A request fuzzer for `waste serve`: thousands of generated requests, valid and hostile,
// over every route (Chat Completions, Completions, Responses, Messages, count_tokens,
// models, health, stored responses, unknown paths and methods), streaming and not, several
// at once, with clients that hang up mid-stream. It fails on
//   - a crash (the server exits) or a hang (a request unanswered for 60 s);
//   - an answer that is not a reply or a JSON error in its API's shape (an SSE stream must
//     hold only JSON events and end: [DONE], message_stop, response.completed, or an error);
//   - markup: the text of any of the container's special tokens in what the model wrote
//     (content, reasoning, tool names and arguments), except on the raw completions route
//     when the request asked for special tokens (skip_special_tokens: false). On that route
//     a tokenizer.json's added tokens that it does not mark special (Qwen's <think>,
//     DeepSeek's <｜User｜>) are text, as in Hugging Face's decode(skip_special_tokens=True)
//     and vLLM; the chat routes never show them.
// Every request is drawn from one seeded generator, so a failure names the seed and the
// request's index, and the same command replays it.
// Soak (--soak SECONDS): the same requests, drawn for that long by --workers clients at once
// (16 by default in a soak), clients that cancel a request (hang up before its answer) or
// leave mid-stream, bodies past the limit; the server's resident memory is sampled every
// second and must stay bounded: its median over the second half of the run at most 10 % +
// 32 MiB above its median over the first half (a leak grows for as long as the requests come).
// usage: node fuzz_serve.mjs WASTE_CLI MODEL[,MODEL…] [REQUESTS_PER_MODEL] [SEED]
//                            [--soak SECONDS] [--workers N]
//   MODEL: a container folder, or tiny:ARCH for a tiny container `waste mktiny --container
//   --arch ARCH` makes into a temporary folder (removed at the end).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import path from 'node:path';
import { createInterface } from 'node:readline';

const argv = process.argv.slice(2);
function flag(name, fallback) {
  const i = argv.indexOf(name);
  if (i < 0) return fallback;
  const v = Number(argv[i + 1]);
  argv.splice(i, 2);
  return v;
}
const soakSeconds = flag('--soak', 0);
const kWorkers = flag('--workers', soakSeconds > 0 ? 16 : 4); // requests in flight at once
const [cli, modelList, countArg = '1200', seedArg = '1'] = argv;
const perModel = Number(countArg);
const baseSeed = Number(seedArg);
const kHang = 60000;    // ms a request may take before it counts as a hang

// mulberry32: small, seeded, the same in every Node version.
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---------------------------------------------------------------------------------------
// Request generation
// ---------------------------------------------------------------------------------------

// The reference MCP server's tools (@modelcontextprotocol/server-everything), as a chat
// offers them: open objects, enums, defaults, a $schema keyword.
const kEverythingTools = [
  ['echo', { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object',
             properties: { message: { type: 'string', description: 'Message to echo' } }, required: ['message'] }],
  ['get-annotated-message', { type: 'object', properties: {
      messageType: { type: 'string', enum: ['error', 'success', 'debug'] },
      includeImage: { default: false, type: 'boolean' } }, required: ['messageType'] }],
  ['get-env', { type: 'object', properties: {} }],
  ['get-sum', { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }],
  ['get-structured-content', { type: 'object', properties: {
      location: { type: 'string', enum: ['New York', 'Chicago', 'Los Angeles'] } }, required: ['location'] }],
  ['trigger-long-running-operation', { type: 'object', properties: {
      duration: { default: 10, type: 'number' }, steps: { default: 5, type: 'number' } } }],
  ['strict', { type: 'object', properties: { n: { type: 'integer' }, tags: { type: 'array', items: { type: 'string',
      maxLength: 4 }, maxItems: 2 } }, required: ['n', 'tags'], additionalProperties: false }],
];

class Gen {
  constructor(seed, specials) {
    this.r = prng(seed);
    this.specials = specials;
  }
  int(lo, hi) { return lo + Math.floor(this.r() * (hi - lo + 1)); }
  // One of `good`, or in a hostile request sometimes one of `bad`: most requests are valid,
  // so the model runs on most of them; a third carry wrong values here and there.
  v(good, bad) { return this.hostileNow && bad.length && this.chance(0.3) ? this.pick(bad) : this.pick(good); }
  pick(xs) { return xs[Math.floor(this.r() * xs.length)]; }
  chance(p) { return this.r() < p; }

  text() {
    const parts = ['Hello', 'What is 2+2?', 'Tell me about woodchucks.', 'ünïcødé ✓ 🙂', 'a "quoted" \\ line\n',
                   '', ' ', '{"json": true}', '<tool_call>{"name":"echo"}</tool_call>', '<think>hmm</think>',
                   'x'.repeat(this.int(1, 400))];
    let s = '';
    for (let i = this.int(1, 3); i > 0; --i) {
      s += this.pick(parts);
      if (this.specials.length && this.chance(0.15)) s += this.pick(this.specials); // markup in what users type
    }
    return s;
  }
  weird() {
    return this.pick([null, true, 0, -1, 1e308, 'str', [], {}, [1, 'a'], { a: { b: [] } }, 'ÿ'.repeat(3)]);
  }
  maxTokens(forced) {
    if (this.hostileNow && this.chance(0.2)) return this.pick([0, -5, 1e12, '12', null, 2.5]);
    return forced && this.chance(0.5) ? this.int(60, 160) : this.int(1, 24);
  }
  sampling(body) {
    if (this.chance(0.6)) body.temperature = this.v([0, 0.7, 1, 2, 1e-30, 0.01], [-1, 3, 'hot']);
    if (this.chance(0.5)) body.top_p = this.v([0, 1e-9, 0.5, 0.95, 1], [1.5, -0.1]);
    if (this.chance(0.3)) body.top_k = this.v([0, 1, 2, 40, 1 << 20], [-3, 1e9]);
    if (this.chance(0.4)) body.seed = this.int(0, 1e6);
  }
  schema(depth = 0) {
    if (depth > 2 || this.chance(0.3))
      return this.pick([{ type: 'string' }, { type: 'integer' }, { type: 'number' }, { type: 'boolean' },
                        { type: 'null' }, { enum: ['a', 'b', 7] }, { const: 'k' }, { type: ['string', 'null'] },
                        { type: 'string', maxLength: 3 }]);
    if (this.hostileNow && this.chance(0.1)) return this.weird();                 // not a schema at all
    if (this.hostileNow && this.chance(0.05)) return { $ref: '#/$defs/missing' };  // a reference to nowhere
    if (this.chance(0.3)) return { type: 'array', items: this.schema(depth + 1), maxItems: this.int(0, 3) };
    if (this.chance(0.1)) return { anyOf: [this.schema(depth + 1), this.schema(depth + 1)] };
    const properties = {};
    const names = ['a', 'name', 'ünï', 'q"uote', 'x'.repeat(this.int(1, 30))];
    for (let i = this.int(0, 3); i > 0; --i) properties[this.pick(names)] = this.schema(depth + 1);
    const s = { type: 'object', properties };
    if (this.chance(0.6)) s.required = Object.keys(properties).filter(() => this.chance(0.7));
    if (this.chance(0.5)) s.additionalProperties = this.chance(0.7) ? false : this.schema(depth + 1);
    return s;
  }
  tools() {
    const list = [];
    for (let i = this.int(1, 4); i > 0; --i) {
      if (this.chance(0.6)) {
        const [name, parameters] = this.pick(kEverythingTools);
        list.push({ name, parameters });
      } else {
        list.push({ name: this.v(['f', 'lookup', 'do-it', 'x'.repeat(this.int(1, 64))], ['ünï', 'x'.repeat(65), '']),
                    parameters: this.schema() });
      }
    }
    return list;
  }
  // A chat/Responses tool_choice (Messages has its own shape).
  toolChoice(names) {
    return this.v(['auto', 'none', 'required', { type: 'function', function: { name: this.pick(names) } }],
                  [{ type: 'function', function: { name: 'not-a-tool' } }, 'sometimes', { type: 'function' }]);
  }
  image() {
    // A 1×1 PNG, a non-image, and broken data URLs.
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    return this.v([`data:image/png;base64,${png}`], ['data:image/png;base64,bm90IGFuIGltYWdl',
                  'data:image/png;base64,!!!', 'data:text/plain,hello', 'http://127.0.0.1:9/x.png', '/etc/passwd', '']);
  }

  chat() {
    const forcedTools = this.chance(0.35);
    const body = { model: this.pick(['m', 'x', '']), messages: [] };
    if (this.chance(0.3)) body.messages.push({ role: this.pick(['system', 'developer']), content: this.text() });
    for (let i = this.int(0, 3); i > 0; --i) {
      const role = this.v(['user', 'user', 'assistant', 'tool'], ['robot']);
      const m = { role, content: this.text() };
      if (role === 'user' && this.chance(0.15))
        m.content = [{ type: 'text', text: this.text() }, { type: this.v(['image_url'], ['input_audio', 'x']),
                                                              image_url: { url: this.image() } }];
      if (role === 'assistant' && this.chance(0.3))
        m.tool_calls = [{ id: 'call_1', type: 'function',
                          function: { name: 'echo', arguments: this.pick(['{"message":"hi"}', '{', '', '[]']) } }];
      if (role === 'tool') m.tool_call_id = this.pick(['call_1', '', undefined]);
      if (this.hostileNow && this.chance(0.05)) m.content = this.weird();
      body.messages.push(m);
    }
    body.messages.push({ role: 'user', content: this.text() });
    if (this.hostileNow && this.chance(0.05)) body.messages = this.weird();
    body.max_tokens = this.maxTokens(forcedTools);
    this.sampling(body);
    if (this.chance(0.2)) body.stop = this.v(['\n', ['a', 'b'], ['x'.repeat(300)]], [['a', ''], Array(17).fill('z'), 5]);
    if (this.chance(0.1)) body.n = this.v([1], [2]);
    if (this.chance(0.1)) body.logit_bias = { 5: 100, 7: -100 };
    if (this.chance(0.5)) {
      body.stream = true;
      if (this.chance(0.5)) body.stream_options = { include_usage: this.chance(0.5) };
    }
    if (forcedTools || this.chance(0.3)) {
      const tools = this.tools();
      body.tools = tools.map((t) => ({ type: 'function', function: { name: t.name, description: 'a tool',
                                                                   parameters: t.parameters } }));
      body.tool_choice = forcedTools ? this.pick(['required', { type: 'function', function: { name: tools[0].name } }])
                                     : this.toolChoice(tools.map((t) => t.name));
    } else if (this.chance(0.2)) {
      body.response_format = this.v([{ type: 'json_object' }, { type: 'text' },
                                     { type: 'json_schema', json_schema: { name: 's', schema: this.schema() } },
                                     { type: 'json_schema', json_schema: { name: 's', strict: true, schema: { type: 'object' } } }],
                                    [{ type: 'json' }, { type: 'json_schema' }]);
      if (body.max_tokens < 40 && this.chance(0.7)) body.max_tokens = this.int(40, 120);
    }
    return { method: 'POST', path: '/v1/chat/completions', body };
  }

  completion() {
    const body = { model: 'm', prompt: this.v([this.text(), [this.text()]], [[1, 2, 3], [], '', this.weird()]),
                   max_tokens: this.maxTokens(false) };
    this.sampling(body);
    if (this.chance(0.5)) body.stream = true;
    if (this.chance(0.3)) body.skip_special_tokens = this.v([true, false], ['no']);
    if (this.chance(0.1)) body.echo = true;
    if (this.chance(0.1)) body.logprobs = this.int(0, 5);
    return { method: 'POST', path: this.pick(['/v1/completions', '/completions']), body };
  }

  responses() {
    const forced = this.chance(0.3);
    const body = { model: 'm', max_output_tokens: this.maxTokens(forced) };
    body.input = this.v([this.text(), [{ role: 'user', content: this.text() }],
                         [{ role: 'user', content: [{ type: 'input_text', text: this.text() },
                                                    { type: 'input_image', image_url: this.image() }] }]],
                        [[{ type: 'function_call_output', call_id: 'call_x', output: 'ok' }], [], this.weird()]);
    if (this.chance(0.3)) body.instructions = this.text();
    this.sampling(body);
    delete body.top_k;
    if (this.chance(0.5)) body.stream = true;
    if (this.chance(0.2)) body.store = this.chance(0.5);
    if (this.hostileNow && this.chance(0.1)) body.previous_response_id = this.pick(['resp_missing', '', 7]);
    if (forced || this.chance(0.2)) {
      const tools = this.tools();
      body.tools = tools.map((t) => ({ type: 'function', name: t.name, parameters: t.parameters }));
      body.tool_choice = forced ? this.pick(['required', { type: 'function', name: tools[0].name }])
                                : this.v(['auto', 'none'], [{ type: 'function', name: 'nope' }, 3]);
    } else if (this.chance(0.2)) {
      body.text = { format: this.v([{ type: 'json_object' }, { type: 'json_schema', name: 's', schema: this.schema() },
                                    { type: 'text' }], ['x']) };
      if (body.max_output_tokens < 40) body.max_output_tokens = this.int(40, 120);
    }
    return { method: 'POST', path: '/v1/responses', body };
  }

  messages(countOnly) {
    const forced = this.chance(0.3);
    const body = { model: 'm', messages: [] };
    for (let i = this.int(0, 2); i > 0; --i) {
      body.messages.push({ role: 'user', content: this.text() });
      body.messages.push({ role: 'assistant', content: this.pick([this.text(), [{ type: 'text', text: this.text() }],
        [{ type: 'tool_use', id: 'toolu_1', name: 'echo', input: { message: 'x' } }]]) });
    }
    body.messages.push({ role: 'user', content: this.v([this.text(),
      [{ type: 'text', text: this.text() }],
      [{ type: 'tool_result', tool_use_id: 'toolu_1', content: this.text() }]],
      [[{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: this.image().split(',')[1] ?? '' } }],
       [{ type: 'document' }], this.weird()]) });
    if (this.hostileNow && this.chance(0.05)) body.messages = this.weird();
    if (this.chance(0.3)) body.system = this.v([this.text(), [{ type: 'text', text: this.text() }]], [5]);
    if (!countOnly) body.max_tokens = this.maxTokens(forced);
    if (!countOnly && this.hostileNow && this.chance(0.05)) delete body.max_tokens;
    this.sampling(body);
    if (body.temperature !== undefined && this.chance(0.5)) body.temperature = this.pick([0, 0.5, 1, 1.5]);
    if (this.chance(0.15)) body.stop_sequences = this.v([['\n'], [this.text()]], [[''], 'x']);
    if (!countOnly && this.chance(0.5)) body.stream = true;
    if (this.chance(0.15)) body.thinking = this.v([{ type: 'enabled', budget_tokens: this.int(1024, 2000) },
                                                   { type: 'disabled' }], [{ type: 'enabled' }, { type: 'enabled', budget_tokens: 3 }]);
    if (forced || this.chance(0.2)) {
      const tools = this.tools();
      body.tools = tools.map((t) => ({ name: t.name, description: 'a tool', input_schema: t.parameters }));
      body.tool_choice = forced ? this.pick([{ type: 'any' }, { type: 'tool', name: tools[0].name }])
                                : this.v([{ type: 'auto' }, { type: 'none' }], [{ type: 'tool', name: 'nope' }, 'any']);
    }
    return { method: 'POST', path: countOnly ? '/v1/messages/count_tokens' : '/v1/messages', body,
             headers: { 'anthropic-version': '2023-06-01' } };
  }

  other() {
    return this.pick([
      { method: 'GET', path: '/health' }, { method: 'GET', path: '/v1/models' }, { method: 'GET', path: '/models/m' },
      { method: 'GET', path: `/v1/models/${encodeURIComponent(this.text().slice(0, 40)) || 'x'}` },
      { method: 'GET', path: '/v1/responses/resp_missing' }, { method: 'DELETE', path: '/v1/responses/resp_x' },
      { method: 'GET', path: '/v1/chat/completions' }, { method: 'PUT', path: '/v1/messages', body: {} },
      { method: 'OPTIONS', path: '/v1/chat/completions' }, { method: 'GET', path: '/v1/../../etc/passwd' },
      { method: 'POST', path: '/v1/nothing', body: {} }, { method: 'GET', path: '/' },
      { method: 'POST', path: '/v1/embeddings', body: { input: 'x' } },
    ]);
  }

  // Bodies no JSON parser should take whole.
  hostile(req) {
    const k = this.int(0, 6);
    if (k === 0) req.raw = Buffer.from('{"messages": [');
    else if (k === 1) req.raw = Buffer.from([0xff, 0xfe, 0x00, 0x7b, 0x22]);
    else if (k === 2) req.raw = Buffer.from('[1, 2, 3]');
    else if (k === 3) req.raw = Buffer.from('"just a string"');
    else if (k === 4) req.raw = Buffer.from(JSON.stringify(req.body).replace(/"messages"/, '"messages":1,"x"'));
    else if (k === 5) req.raw = Buffer.alloc(this.int(1, 4) * 16 * 1024 * 1024 + 7, 0x61); // past any body limit
    else req.raw = Buffer.from(JSON.stringify(req.body).slice(0, this.int(1, 20)));
    if (this.chance(0.2)) req.headers = { ...(req.headers ?? {}), 'content-type': 'text/plain' };
    return req;
  }

  request() {
    this.hostileNow = this.chance(0.35);
    const x = this.r();
    let req = x < 0.34 ? this.chat() : x < 0.46 ? this.completion() : x < 0.62 ? this.responses()
            : x < 0.8 ? this.messages(false) : x < 0.88 ? this.messages(true) : this.other();
    if (req.body && this.hostileNow && this.chance(0.2)) req = this.hostile(req);
    if (req.body?.stream === true && this.chance(0.12)) req.hangUpAfter = this.int(1, 3); // leaves mid-stream
    else if (req.body && this.chance(0.06)) req.cancelAfterMs = this.int(1, 300);      // gives up waiting
    return req;
  }
}

// ---------------------------------------------------------------------------------------
// Checking answers
// ---------------------------------------------------------------------------------------

// What the model wrote, by route: the strings that must hold no markup.
function writtenStrings(route, obj, out) {
  const add = (v) => { if (typeof v === 'string') out.push(v); else if (v && typeof v === 'object') out.push(JSON.stringify(v)); };
  if (!obj || typeof obj !== 'object') return;
  if (route === 'chat') {
    for (const c of obj.choices ?? []) {
      const m = c.message ?? c.delta ?? {};
      add(m.content); add(m.reasoning_content);
      for (const t of m.tool_calls ?? []) { add(t.function?.name); add(t.function?.arguments); }
    }
  } else if (route === 'completions') {
    for (const c of obj.choices ?? []) add(c.text);
  } else if (route === 'responses') {
    const item = (it) => {
      if (!it) return;
      for (const p of it.content ?? []) add(p.text);
      for (const p of it.summary ?? []) add(p.text);
      add(it.arguments); add(it.name);
    };
    for (const it of obj.output ?? []) item(it);
    add(obj.output_text);
    if (typeof obj.type === 'string') { add(obj.delta); add(obj.text); add(obj.arguments); item(obj.item); }
    if (obj.response) for (const it of obj.response.output ?? []) item(it);
  } else if (route === 'messages') {
    const block = (b) => { if (b) { add(b.text); add(b.thinking); add(b.input); add(b.name); } };
    for (const b of obj.content ?? []) block(b);
    if (obj.delta) { add(obj.delta.text); add(obj.delta.thinking); add(obj.delta.partial_json); }
    block(obj.content_block);
    if (obj.message) for (const b of obj.message.content ?? []) block(b);
  }
}

function routeOf(p) {
  if (p.includes('chat/completions')) return 'chat';
  if (p.endsWith('/completions')) return 'completions';
  if (p.includes('count_tokens')) return 'count';
  if (p.includes('/messages')) return 'messages';
  if (p.includes('/responses')) return 'responses';
  return 'other';
}

function isErrorBody(route, j) {
  if (route === 'messages' || route === 'count')
    return j && j.type === 'error' && typeof j.error?.type === 'string' && typeof j.error?.message === 'string';
  return j && typeof j.error === 'object' && typeof j.error.message === 'string' && j.error.message.length > 0;
}

function send(port, req) {
  return new Promise((resolve) => {
    const data = req.raw ?? (req.body !== undefined ? Buffer.from(JSON.stringify(req.body)) : null);
    const headers = { ...(data ? { 'content-type': 'application/json', 'content-length': data.length } : {}),
                      ...(req.headers ?? {}) };
    const started = Date.now();
    let settled = false;
    const done = (r) => { if (!settled) { settled = true; clearTimeout(timer); resolve({ ...r, ms: Date.now() - started }); } };
    const timer = setTimeout(() => { done({ hang: true }); r.destroy(); }, kHang);
    if (req.cancelAfterMs) setTimeout(() => { if (!settled) { done({ cancelled: true }); r.destroy(); } }, req.cancelAfterMs);
    const r = http.request({ host: '127.0.0.1', port, method: req.method, path: req.path, headers, agent: false }, (res) => {
      const chunks = [];
      let events = 0;
      res.on('data', (c) => {
        chunks.push(c);
        if (req.hangUpAfter && ++events >= req.hangUpAfter) { done({ hungUp: true, status: res.statusCode }); res.destroy(); }
      });
      res.on('end', () => done({ status: res.statusCode, type: res.headers['content-type'] ?? '',
                                 body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => done({ status: res.statusCode, reset: true }));
    });
    r.on('error', (e) => done({ netError: e.code ?? String(e) }));
    if (data) r.write(data);
    r.end();
  });
}

function check(req, res, specials, problems, tag, plainAdded) {
  const route = routeOf(req.path);
  const fail = (what) => problems.push(`${tag} ${req.method} ${req.path}: ${what}`);
  if (res.hang) return fail('no answer within 60 s (a hang)');
  if (res.hungUp || res.cancelled) return;
  if (res.netError) {
    // A body past the limit may be refused before it is all sent: the server may close then.
    if (req.raw && req.raw.length > 8 * 1024 * 1024 && ['EPIPE', 'ECONNRESET'].includes(res.netError)) return;
    return fail(`connection failed: ${res.netError}`);
  }
  if (res.reset) return fail('the connection was reset mid-answer');
  const written = [];
  const keepsMarkup = route === 'completions' && req.body && req.body.skip_special_tokens === false;
  if (res.type.startsWith('text/event-stream')) {
    if (res.status !== 200) fail(`a stream with status ${res.status}`);
    const events = res.body.split('\n\n').filter((e) => e.trim().length);
    let ended = false;
    for (const e of events) {
      const lines = e.split('\n').filter((l) => !l.startsWith(':')); // comments keep a stream alive
      const dataLine = lines.find((l) => l.startsWith('data: '));
      if (!dataLine) { if (lines.length) fail(`an SSE event without data: ${e.slice(0, 120)}`); continue; }
      const payload = dataLine.slice(6);
      if (payload === '[DONE]') { ended = true; continue; }
      let j;
      try { j = JSON.parse(payload); } catch { fail(`an SSE event that is not JSON: ${payload.slice(0, 120)}`); continue; }
      if (j.error || j.type === 'error' || j.type === 'message_stop' || j.type === 'response.completed' ||
          j.type === 'response.failed' || j.type === 'response.incomplete')
        ended = true;
      writtenStrings(route, j, written);
    }
    if (!ended) fail(`a stream that never ended: ${res.body.slice(-200)}`);
  } else {
    if (res.status === 204 && res.body === '') return; // a CORS preflight: no body
    let j;
    try { j = JSON.parse(res.body); } catch {
      return fail(`status ${res.status} with a body that is not JSON: ${res.body.slice(0, 160)}`);
    }
    if (res.status >= 400 && !isErrorBody(route, j)) fail(`status ${res.status} without an error body: ${res.body.slice(0, 200)}`);
    if (res.status >= 500 && res.status !== 503) fail(`a server error: ${res.body.slice(0, 300)}`);
    if (res.status === 200) writtenStrings(route, j, written);
    if (process.env.FUZZ_SHOW_ERRORS && res.status >= 400) console.log(`${tag} ${route} ${res.status} ${res.body.slice(0, 160)}`);
  }
  if (!keepsMarkup)
    for (const s of written)
      for (const sp of specials)
        if (s.includes(sp) && !(route === 'completions' && plainAdded.has(sp))) {
          fail(`markup ${sp} in what the model wrote: ${s.slice(0, 200)}`);
          return;
        }
}

// ---------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------

async function startServe(model) {
  // A prompt cache of this run's own (in the scratch folder), not the user's.
  const cache = mkdtempSync(path.join(scratch, 'prompt-cache-'));
  const server = spawn(cli, ['serve', model, '--port', '0', '--ctx', '4096', '--max-tokens', '64',
                             '--prompt-cache', cache],
                       { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  server.stderr.on('data', (d) => { stderr = (stderr + d).slice(-4000); });
  const hello = await new Promise((resolve, reject) => {
    createInterface({ input: server.stdout }).once('line', (l) => resolve(JSON.parse(l)));
    server.once('exit', (code) => reject(new Error(`waste serve exited with ${code}: ${stderr}`)));
  });
  const port = Number(hello.port);
  for (let i = 0; i < 600; ++i) {
    const r = await send(port, { method: 'GET', path: '/health' });
    if (r.status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { server, port, stderr: () => stderr };
}

// tiny:ARCH → a container made now.
const scratch = mkdtempSync(path.join(os.tmpdir(), 'waste-fuzz-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));
function containerOf(spec) {
  if (!spec.startsWith('tiny:')) return spec;
  const arch = spec.slice(5);
  const dir = path.join(scratch, `${arch}.waste`);
  const made = spawnSync(cli, ['mktiny', dir, '--container', '--arch', arch], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`waste mktiny --arch ${arch} failed: ${made.stderr}`);
  return dir;
}

let failed = 0;
for (const [mi, spec] of modelList.split(',').entries()) {
  const model = containerOf(spec);
  let specials = [];
  try {
    specials = JSON.parse(readFileSync(path.join(model, 'specials.json'), 'utf8')).map((s) => s.text)
      .filter((t) => t.length >= 3);
  } catch { /* a container without specials.json: nothing to leak */ }
  // The added tokens tokenizer.json does not mark special: text on the raw completions route.
  const plainAdded = new Set();
  try {
    for (const t of JSON.parse(readFileSync(path.join(model, 'tokenizer.json'), 'utf8')).added_tokens ?? [])
      if (t.special === false) plainAdded.add(t.content);
  } catch { /* no tokenizer.json: every entry of specials.json is special */ }
  const seed = baseSeed * 1000 + mi;
  const gen = new Gen(seed, specials);
  const requests = soakSeconds > 0 ? [] : Array.from({ length: perModel }, () => gen.request());
  const { server, port, stderr } = await startServe(model);
  let exitCode = null;
  server.once('exit', (code, signal) => { exitCode = signal ?? code; });
  const problems = [];
  const statuses = {};
  let next = 0, answered = 0;
  const started = Date.now();
  const soakEnd = started + soakSeconds * 1000;
  // Resident memory of the server (kB), once a second while the requests come.
  const rss = [];
  const sampler = setInterval(() => {
    try {
      const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'));
      if (m) rss.push({ t: Date.now() - started, kb: Number(m[1]) });
    } catch { /* it exited: the workers say so */ }
  }, 1000);
  const more = () => (soakSeconds > 0 ? Date.now() < soakEnd : next < requests.length);
  async function worker() {
    while (more() && exitCode === null) {
      const i = next++;
      const req = soakSeconds > 0 ? gen.request() : requests[i];
      const res = await send(port, req);
      ++answered;
      const key = `${routeOf(req.path)} ${res.hang ? 'hang' : res.hungUp ? 'hung-up' : res.cancelled ? 'cancelled'
                                           : res.status ?? res.netError}`;
      statuses[key] = (statuses[key] ?? 0) + 1;
      check(req, res, specials, problems, `[seed ${seed} #${i}]`, plainAdded);
      if (exitCode !== null) problems.push(`[seed ${seed} #${i}] the server exited (${exitCode}) during this request`);
    }
  }
  await Promise.all(Array.from({ length: kWorkers }, worker));
  clearInterval(sampler);
  if (soakSeconds > 0 && rss.length >= 8) {
    // The typical resident size of each half: its median, since a body past the limit is
    // buffered whole before the 413 (Qt's HTTP server reads a request before its handler runs)
    // and makes a spike of up to 64 MiB per client that is freed at once. A leak raises the
    // median for as long as the requests come.
    const h = Math.floor(rss.length / 2);
    const median = (xs) => { const v = xs.map((x) => x.kb).sort((a, b) => a - b); return v[Math.floor(v.length / 2)]; };
    const first = median(rss.slice(0, h)), last = median(rss.slice(h)), peak = Math.max(...rss.map((x) => x.kb));
    console.log(`  resident memory: median ${(first / 1024).toFixed(1)} MiB in the first half, ` +
                `${(last / 1024).toFixed(1)} in the second, ${(peak / 1024).toFixed(1)} at the peak (${rss.length} samples)`);
    if (process.env.SOAK_SHOW_RSS) console.log(rss.map((x) => (x.kb / 1024).toFixed(0)).join(' '));
    if (last > first * 1.1 + 32 * 1024)
      problems.push(`resident memory grew from ${(first / 1024).toFixed(1)} to ${(last / 1024).toFixed(1)} MiB over the soak`);
  }
  const health = exitCode === null ? await send(port, { method: 'GET', path: '/health' }) : null;
  if (!health || health.status !== 200) problems.push(`the server is not healthy after the run: ${health?.status}`);
  if (exitCode === null) {
    const exited = new Promise((resolve) => server.once('exit', (c, s) => resolve(s ?? c)));
    server.kill('SIGTERM');
    const code = await exited;
    if (code !== 0) problems.push(`SIGTERM ended the server with ${code}`);
  }
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`${path.basename(model)}: ${answered} requests in ${secs} s, ${kWorkers} at once, seed ${seed}`);
  for (const k of Object.keys(statuses).sort()) console.log(`  ${k}: ${statuses[k]}`);
  for (const p of problems.slice(0, 40)) console.log(`FAIL ${p}`);
  if (problems.length > 40) console.log(`… and ${problems.length - 40} more`);
  if (problems.length) console.log(`server stderr (tail):\n${stderr()}`);
  failed += problems.length;
}
console.log(failed ? `${failed} problems` : 'ok: 0 crashes, 0 hangs, 0 malformed answers, 0 markup leaks');
process.exit(failed ? 1 : 0);
