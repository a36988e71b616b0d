// Compares the engine's ids (family_tokenizer_ids) with a reference implementation:
// @huggingface/tokenizers on the tokenizer.json families, js-tiktoken on Kimi K2's
// tiktoken.model and on gpt-oss (its tokenizer.json read as o200k_harmony is: ranks, the
// o200k split pattern, the specials at their ids). Which one runs follows the package
// installed under PREFIX.
// usage: node reference_ids.mjs PREFIX FAMILY_TOKENIZER_IDS OUT_DIR
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { existsSync } from 'node:fs';

const [prefix, helper, outDir] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const corpusPath = join(here, 'corpus.json');
const corpus = JSON.parse(readFileSync(corpusPath, 'utf8'));
const hf = existsSync(join(prefix, 'node_modules/@huggingface/tokenizers/package.json'));
const archs = hf ? ['deepseek-v3', 'qwen3-moe', 'qwen3-next', 'qwen3.5-moe', 'gpt-oss', 'glm4-moe'] : ['kimi-k2', 'gpt-oss'];

mkdirSync(outDir, { recursive: true });
execFileSync(helper, [outDir, corpusPath, ...archs], { stdio: 'inherit' });

let failures = 0;
const fail = (msg) => { console.error('FAIL ' + msg); failures++; };
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
const show = (s) => JSON.stringify(s).slice(0, 80);

// Kimi K2's split pattern (tokenization_kimi.py) in JavaScript's syntax: the class
// intersection `[X&&[^\p{Han}]]` becomes a negative lookahead before X, and the
// case-insensitive contraction group is spelled out.
const notHan = (cls) => `(?:(?!\\p{Script=Han})[${cls}])`;
const contraction = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
const upper = notHan('\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}'), lower = notHan('\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}');
const kimiK2Pattern = [
  '\\p{Script=Han}+',
  `[^\\r\\n\\p{L}\\p{N}]?${upper}*${lower}+${contraction}?`,
  `[^\\r\\n\\p{L}\\p{N}]?${upper}+${lower}*${contraction}?`,
  '\\p{N}{1,3}',
  ' ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*',
  '\\s*[\\r\\n]+',
  '\\s+(?!\\S)',
  '\\s+',
].join('|');

// o200k's split pattern (tiktoken's o200k_base pat_str) with the contraction group spelled out.
const upperO = '[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]', lowerO = '[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]';
const o200kPattern = [
  `[^\\r\\n\\p{L}\\p{N}]?${upperO}*${lowerO}+${contraction}?`,
  `[^\\r\\n\\p{L}\\p{N}]?${upperO}+${lowerO}*${contraction}?`,
  '\\p{N}{1,3}',
  ' ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*',
  '\\s*[\\r\\n]+',
  '\\s+(?!\\S)',
  '\\s+',
].join('|');

// GPT-2's byte-level alphabet, reversed: a tokenizer.json vocabulary word -> its bytes.
const byteOfChar = new Map();
{
  const printable = [];
  for (let b = 33; b <= 126; ++b) printable.push(b);
  for (let b = 161; b <= 172; ++b) printable.push(b);
  for (let b = 174; b <= 255; ++b) printable.push(b);
  let extra = 0;
  for (let b = 0; b < 256; ++b)
    byteOfChar.set(String.fromCodePoint(printable.includes(b) ? b : 256 + extra++), b);
}
const wordBytes = (word) => Buffer.from([...word].map((c) => byteOfChar.get(c)));

for (const arch of archs) {
  const base = join(outDir, arch);
  const ours = JSON.parse(readFileSync(join(base, 'ids.json'), 'utf8'));
  if (!ours.roundtrip) fail(`${arch}: decode(encode(text)) is not the text`);
  if (ours.eos !== ours.written_eos || ours.bos !== ours.written_bos)
    fail(`${arch}: BOS/EOS ${ours.bos}/${ours.eos} loaded, ${ours.written_bos}/${ours.written_eos} written`);
  let reference, referencePlain = null, added;
  if (hf) {
    const mod = await import(pathToFileURL(join(prefix, 'node_modules/@huggingface/tokenizers/dist/tokenizers.mjs')).href);
    const json = JSON.parse(readFileSync(join(base, 'container/tokenizer.json'), 'utf8'));
    const config = JSON.parse(readFileSync(join(base, 'container/tokenizer_config.json'), 'utf8'));
    const tok = new mod.Tokenizer(json, config);
    reference = (text) => Array.from(tok.encode(text, { add_special_tokens: false }).ids);
    added = json.added_tokens.map((t) => t.content);
  } else if (arch === 'gpt-oss') {
    const mod = await import(pathToFileURL(join(prefix, 'node_modules/js-tiktoken/dist/lite.js')).href);
    const json = JSON.parse(readFileSync(join(base, 'container/tokenizer.json'), 'utf8'));
    const byRank = [];
    for (const [word, id] of Object.entries(json.model.vocab)) byRank[id] = wordBytes(word).toString('base64');
    const specials = {};
    for (const t of json.added_tokens) specials[t.content] = t.id;
    const enc = new mod.Tiktoken({ pat_str: o200kPattern, special_tokens: specials, bpe_ranks: '! 0 ' + byRank.join(' ') });
    reference = (text) => enc.encode(text, 'all');
    referencePlain = (text) => enc.encode(text, [], []);
    added = Object.keys(specials);
  } else {
    const mod = await import(pathToFileURL(join(prefix, 'node_modules/js-tiktoken/dist/lite.js')).href);
    const lines = readFileSync(join(base, 'container/tokenizer.model'), 'utf8').split('\n').filter(Boolean);
    const byRank = [];
    for (const line of lines) { const [b64, rank] = line.split(' '); byRank[Number(rank)] = b64; }
    const specials = {};
    for (const s of JSON.parse(readFileSync(join(base, 'container/specials.json'), 'utf8'))) specials[s.text] = s.id;
    const enc = new mod.Tiktoken({ pat_str: kimiK2Pattern, special_tokens: specials, bpe_ranks: '! 0 ' + byRank.join(' ') });
    reference = (text) => enc.encode(text, 'all');
    referencePlain = (text) => enc.encode(text, [], []);
    added = Object.keys(specials);
  }
  corpus.forEach((text, i) => {
    const want = reference(text);
    if (!same(ours.markup[i], want))
      fail(`${arch} markup ${show(text)}:\n  engine    ${JSON.stringify(ours.markup[i])}\n  reference ${JSON.stringify(want)}`);
    if (referencePlain) {
      const wantPlain = referencePlain(text);
      if (!same(ours.plain[i], wantPlain))
        fail(`${arch} plain ${show(text)}:\n  engine    ${JSON.stringify(ours.plain[i])}\n  reference ${JSON.stringify(wantPlain)}`);
    }
    if (!added.some((a) => text.includes(a)) && !same(ours.plain[i], ours.markup[i]))
      fail(`${arch}: ${show(text)} has no added token but plain and markup ids differ`);
  });
  console.log(`${arch}: ${corpus.length} texts compared with ${hf ? '@huggingface/tokenizers' : 'js-tiktoken'}`);
}
if (failures) {
  console.error(`${failures} mismatches`);
  process.exit(1);
}
console.log('all ids match the reference');
