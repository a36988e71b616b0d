#include "convert/tiny_family_tokenizers.hpp"

#include "convert/file_io.hpp"
#include "convert/tiny_tokenizer.hpp"
#include "text/byte_level.hpp"
#include "text/deepseek_markers.hpp"
#include "text/piece_splitter.hpp"

#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>
#include <vector>

namespace waste::convert {

namespace {

using ojson = nlohmann::ordered_json;

// Training text, written for this purpose: prose with contractions, code, Chinese,
// Japanese and Korean, emoji, numbers and whitespace runs, so every split rule of the
// families' patterns has pieces to learn from.
const char *kFamilyCorpus =
    "The model streams its experts from the disk, and it doesn't keep them all in memory.\n"
    "We'll read one record per expert; they're aligned to 4096 bytes, so a read is one pread.\n"
    "I'm sure you've seen 12345 tokens/s on 2 cores, or 1,234,567 bytes in 0.25 seconds.\n"
    "int main(int argc, char **argv) {\n    for (int i = 0; i < argc; ++i)\n        printf(\"%s\\n\", argv[i]);\n    return 0;\n}\n"
    "def route(scores, k=8):\n    top = sorted(range(len(scores)), key=lambda i: -scores[i])[:k]\n    return {i: scores[i] for i in top}\n"
    "if (x != y && y >= 0) { z = x << 2; } // shift and compare\n"
    "\t\tindented with tabs,    and    runs of    spaces.\n\n\n"
    "模型把专家放在磁盘上，只在需要时读取。中文文本没有空格，分词要靠字典。\n"
    "日本語のテキストも試します。カタカナとひらがなが混ざっています。\n"
    "한국어 문장도 조금 넣습니다. 토큰은 바이트 단위로 나뉩니다.\n"
    "Emoji 😀🎉👍🏽 and symbols ±×÷ € £ ¥ © ® ™ — fine.\n"
    "Ünïcödé wörds like café, naïve, façade, Straße and Ελληνικά or русский текст.\n"
    "Numbers: 3.14159, 2718281828, 1e-5, 0x1F, 2026-12-02 00:40 UTC.\n"
    "CAPITALS and camelCase and snake_case and kebab-case and PascalCase words.\n"
    "The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs.\n";

struct Family {
    bool tiktoken = false;  // kimi-k2: tiktoken.model
    bool nfc = false;       // Qwen: NFC normalizer
    bool ignoreMerges = false;
    std::vector<std::string> splits; // tokenizer.json Split patterns, in order (or the tiktoken pattern)
    std::vector<std::pair<std::string, bool>> specials; // text, special (false: a plain added token)
    // gpt-oss: the specials at the release's own ids (o200k_harmony), past the learned
    // words, instead of right after them; fixedVocab is then the vocabulary size.
    std::vector<int32_t> fixedIds;
    int32_t fixedVocab = 0;
    std::string bos, eos, pad;
    std::vector<std::string> stops; // further stop tokens config.json lists after eos (GLM-4.5)
    std::string chatTemplate;
    std::string tokenizerClass;
};

// The split rules the releases ship (their tokenizer.json pre_tokenizer / tiktoken pat_str).
const char *kDeepSeekDigits = "\\p{N}{1,3}";
const char *kDeepSeekCjk = "[\xE4\xB8\x80-\xE9\xBE\xA5\xE3\x81\x80-\xE3\x82\x9F\xE3\x82\xA0-\xE3\x83\xBF]+";
const char *kDeepSeekMain = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
                            "| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char *kQwenSplit = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
                         "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// Qwen3.5's: Qwen's rule with combining marks in the letter runs (tokenization_qwen3_5.py).
const char *kQwen35Split = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}"
                           "| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// GLM-4.5's: Qwen's rule with digits in runs of up to three (llama.cpp's "chatglm-bpe").
const char *kGlmSplit = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
                        "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char *kO200kSplit =
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// Compact chat templates in each family's format (system prompt, turns, generation
// prompt), written here; the engine renders conversations with its own template
// functions (engine/src/text), selected by arch.
const char *kDeepSeekTemplate =
    "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'system' %}{{ m['content'] }}"
    "{% elif m['role'] == 'user' %}<\xEF\xBD\x9CUser\xEF\xBD\x9C>{{ m['content'] }}"
    "{% elif m['role'] == 'assistant' %}<\xEF\xBD\x9C" "Assistant\xEF\xBD\x9C></think>{{ m['content'] }}<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}<\xEF\xBD\x9C" "Assistant\xEF\xBD\x9C><think>\n{% endif %}";
// The engine tells a family's two releases apart by what their templates do
// (text/chat_format.hpp): V3.1's reads a `thinking` switch, K2-Thinking's writes <think>.
const char *kDeepSeekV31Template =
    "{% if not thinking is defined %}{% set thinking = false %}{% endif %}"
    "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'system' %}{{ m['content'] }}"
    "{% elif m['role'] == 'user' %}<\xEF\xBD\x9CUser\xEF\xBD\x9C>{{ m['content'] }}"
    "{% elif m['role'] == 'assistant' %}<\xEF\xBD\x9C" "Assistant\xEF\xBD\x9C></think>{{ m['content'] }}<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}<\xEF\xBD\x9C" "Assistant\xEF\xBD\x9C>"
    "{% if thinking %}<think>{% else %}</think>{% endif %}{% endif %}";
const char *kKimiThinkingTemplate =
    "{% for m in messages %}{% if m['role'] == 'system' %}<|im_system|>system<|im_middle|>"
    "{% elif m['role'] == 'user' %}<|im_user|>user<|im_middle|>{% else %}<|im_assistant|>assistant<|im_middle|><think></think>{% endif %}"
    "{{ m['content'] }}<|im_end|>{% endfor %}{% if add_generation_prompt %}<|im_assistant|>assistant<|im_middle|>{% endif %}";
const char *kKimiInstructTemplate =
    "{% for m in messages %}{% if m['role'] == 'system' %}<|im_system|>system<|im_middle|>"
    "{% elif m['role'] == 'user' %}<|im_user|>user<|im_middle|>{% else %}<|im_assistant|>assistant<|im_middle|>{% endif %}"
    "{{ m['content'] }}<|im_end|>{% endfor %}{% if add_generation_prompt %}<|im_assistant|>assistant<|im_middle|>{% endif %}";
const char *kQwenTemplate =
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
// Qwen3.5's layout (docs/architectures/qwen3.5-moe.md): ChatML with an open think block as
// the generation prompt.
const char *kQwen35Template =
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] | trim }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}";
// GLM-4.5's layout (docs/architectures/glm4-moe.md): [gMASK]<sop>, a role marker and a newline
// before each message, an empty think block on assistant turns.
const char *kGlmTemplate =
    "[gMASK]<sop>{% for m in messages %}{% if m['role'] == 'system' %}<|system|>\n{{ m['content'] }}"
    "{% elif m['role'] == 'user' %}<|user|>\n{{ m['content'] }}"
    "{% else %}<|assistant|>\n<think></think>\n{{ m['content'] }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}";
const char *kHarmonyTemplate =
    "<|start|>system<|message|>Reasoning: {{ reasoning_effort | default('medium') }}\n\n"
    "# Valid channels: analysis, commentary, final. Channel must be included for every message.<|end|>"
    "{% for m in messages %}{% if m['role'] == 'assistant' %}<|start|>assistant<|channel|>final<|message|>{{ m['content'] }}<|end|>"
    "{% elif m['role'] == 'user' %}<|start|>user<|message|>{{ m['content'] }}<|end|>"
    "{% else %}<|start|>developer<|message|># Instructions\n\n{{ m['content'] }}<|end|>{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|start|>assistant{% endif %}";

Family familyOf(std::string_view family, bool releaseIds, std::string_view chatTemplate)
{
    // DeepSeek-V3.2 keeps V3's vocabulary, GLM-5 GLM-4.5's layout (docs/architectures/dsa.md).
    const std::string_view arch = family == "deepseek-v32" ? "deepseek-v3" : family == "glm-moe-dsa" ? "glm4-moe" : family;
    if (family == "deepseek-v32" && !chatTemplate.empty())
        throw Error(ErrorCode::Argument, "no tiny '" + std::string(chatTemplate) +
                                             "' chat template for arch 'deepseek-v32' (its release ships none)");
    Family f;
    const bool deepseekTemplate = chatTemplate.empty() || chatTemplate == "deepseek-r1" || chatTemplate == "deepseek-v3.1";
    const bool kimiTemplate = chatTemplate.empty() || chatTemplate == "kimi-k2-thinking" || chatTemplate == "kimi-k2-instruct";
    if ((arch == "deepseek-v3" && !deepseekTemplate) || (arch == "kimi-k2" && !kimiTemplate) ||
        (arch != "deepseek-v3" && arch != "kimi-k2" && !chatTemplate.empty()))
        throw Error(ErrorCode::Argument, "no tiny '" + std::string(chatTemplate) + "' chat template for arch '" +
                                             std::string(arch) +
                                             "' (deepseek-v3: deepseek-r1 or deepseek-v3.1; kimi-k2: kimi-k2-thinking or "
                                             "kimi-k2-instruct; the other families have one)");
    if (arch == "deepseek-v3") {
        f.splits = {kDeepSeekDigits, kDeepSeekCjk, kDeepSeekMain};
        using namespace text::deepseek;
        f.specials = {{kBos, true}, {kEos, true}, {marker(" pad "), true}, {kUser, false}, {kAssistant, false},
                      {"<think>", false}, {"</think>", false}, {kCallsBegin, false}, {kCallsEnd, false},
                      {kCallBegin, false}, {kCallEnd, false}, {kOutputsBegin, false}, {kOutputsEnd, false},
                      {kOutputBegin, false}, {kOutputEnd, false}, {kSep, false}};
        f.bos = kBos;
        f.eos = kEos;
        f.pad = kEos;
        f.chatTemplate = chatTemplate == "deepseek-v3.1" ? kDeepSeekV31Template : kDeepSeekTemplate;
        f.tokenizerClass = "LlamaTokenizerFast";
    } else if (arch == "deepseek-v4") {
        // DeepSeek V4 keeps V3's tokenizer.json layout and split rules; its prompt encoder
        // (encoding_dsv4.py, Python, no Jinja) adds the latest-reminder role and the DSML
        // marker, one token each. The release ships no chat template.
        f.splits = {kDeepSeekDigits, kDeepSeekCjk, kDeepSeekMain};
        using namespace text::deepseek;
        f.specials = {{kBos, true}, {kEos, true}, {kUser, false}, {kAssistant, false}, {"<think>", false},
                      {"</think>", false}, {kLatestReminder, false},
                      {kDsml, false}};
        f.bos = kBos;
        f.eos = kEos;
        f.pad = kEos;
        f.tokenizerClass = "LlamaTokenizerFast";
    } else if (arch == "kimi-k2") {
        f.tiktoken = true;
        f.splits = {text::kKimiK2SplitPattern};
        // [BOS] [EOS] <|im_end|> first, as in the release, so BOS is the rank count and EOS
        // the rank count + 2 (the engine's rule for rank files).
        f.specials = {{"[BOS]", true}, {"[EOS]", true}, {"<|im_end|>", true}, {"<|im_user|>", true},
                      {"<|im_assistant|>", true}, {"<|im_system|>", true}, {"<|im_middle|>", true},
                      {"<|tool_calls_section_begin|>", true}, {"<|tool_calls_section_end|>", true},
                      {"<|tool_call_begin|>", true}, {"<|tool_call_argument_begin|>", true}, {"<|tool_call_end|>", true},
                      {"<think>", true}, {"</think>", true}, {"[UNK]", true}, {"[PAD]", true}};
        f.bos = "[BOS]";
        f.eos = "<|im_end|>";
        f.pad = "[PAD]";
        f.chatTemplate = chatTemplate == "kimi-k2-instruct" ? kKimiInstructTemplate : kKimiThinkingTemplate;
        f.tokenizerClass = "TikTokenTokenizer";
    } else if (arch == "qwen3-moe" || arch == "qwen3-next") {
        f.nfc = true;
        f.splits = {kQwenSplit};
        f.specials = {{"<|endoftext|>", true}, {"<|im_start|>", true}, {"<|im_end|>", true},
                      {"<tool_call>", false}, {"</tool_call>", false}, {"<tool_response>", false},
                      {"</tool_response>", false}, {"<think>", false}, {"</think>", false}};
        f.eos = "<|im_end|>";
        f.pad = "<|endoftext|>";
        f.chatTemplate = kQwenTemplate;
        f.tokenizerClass = "Qwen2Tokenizer";
    } else if (arch == "qwen3.5-moe") {
        f.nfc = true;
        f.splits = {kQwen35Split};
        // The release's specials in its order from <|endoftext|> (248044): the vision
        // placeholders at +9 .. +13, <think> at +24, as the released configs name them.
        f.specials = {{"<|endoftext|>", true},   {"<|im_start|>", true},     {"<|im_end|>", true},
                      {"<|object_ref_start|>", true}, {"<|object_ref_end|>", true}, {"<|box_start|>", true},
                      {"<|box_end|>", true},     {"<|quad_start|>", true},   {"<|quad_end|>", true},
                      {"<|vision_start|>", true}, {"<|vision_end|>", true},  {"<|vision_pad|>", true},
                      {"<|image_pad|>", true},   {"<|video_pad|>", true},    {"<tool_call>", false},
                      {"</tool_call>", false},   {"<|fim_prefix|>", false},  {"<|fim_middle|>", false},
                      {"<|fim_suffix|>", false}, {"<|fim_pad|>", false},     {"<|repo_name|>", false},
                      {"<|file_sep|>", false},   {"<tool_response>", false}, {"</tool_response>", false},
                      {"<think>", false},        {"</think>", false}};
        f.eos = "<|im_end|>";
        f.pad = "<|endoftext|>";
        f.stops = {"<|endoftext|>"}; // generation_config.json stops on both
        f.chatTemplate = kQwen35Template;
        f.tokenizerClass = "Qwen2Tokenizer";
    } else if (arch == "glm4-moe") {
        f.splits = {kGlmSplit};
        // The release's specials in its order (<|endoftext|> 151329 first); the tool-call
        // tags are single tokens there too.
        f.specials = {{"<|endoftext|>", true}, {"[MASK]", true}, {"[gMASK]", true}, {"[sMASK]", true}, {"<sop>", true},
                      {"<eop>", true}, {"<|system|>", true}, {"<|user|>", true}, {"<|assistant|>", true},
                      {"<|observation|>", true}, {"<think>", false}, {"</think>", false}, {"<tool_call>", false},
                      {"</tool_call>", false}, {"<tool_response>", false}, {"</tool_response>", false},
                      {"<arg_key>", false}, {"</arg_key>", false}, {"<arg_value>", false}, {"</arg_value>", false},
                      {"/nothink", false}};
        f.eos = "<|endoftext|>";
        f.pad = "<|endoftext|>";
        f.stops = {"<|user|>", "<|observation|>"};
        f.chatTemplate = kGlmTemplate;
        f.tokenizerClass = "PreTrainedTokenizerFast";
    } else if (arch == "gpt-oss") {
        f.ignoreMerges = true;
        f.splits = {kO200kSplit};
        // o200k_harmony: o200k_base's <|endoftext|> 199999 and <|endofprompt|> 200018, the
        // harmony specials, and every other id up to 201087 reserved.
        const std::map<int32_t, std::string> named = {
            {199998, "<|startoftext|>"}, {199999, "<|endoftext|>"}, {200002, "<|return|>"},
            {200003, "<|constrain|>"},   {200005, "<|channel|>"},   {200006, "<|start|>"},
            {200007, "<|end|>"},         {200008, "<|message|>"},   {200012, "<|call|>"},
            {200018, "<|endofprompt|>"}};
        for (int32_t id = 199998; id < 201088; ++id) {
            const auto it = named.find(id);
            if (!releaseIds && it == named.end())
                continue;
            f.specials.emplace_back(it != named.end() ? it->second : "<|reserved_" + std::to_string(id) + "|>", true);
            if (releaseIds)
                f.fixedIds.push_back(id);
        }
        f.fixedVocab = releaseIds ? 201088 : 0;
        f.bos = "<|startoftext|>";
        f.eos = "<|return|>";
        f.pad = "<|endoftext|>";
        f.chatTemplate = kHarmonyTemplate;
        f.tokenizerClass = "PreTrainedTokenizerFast";
    } else {
        throw Error(ErrorCode::Argument, "no tiny tokenizer for arch '" + std::string(arch) +
                                             "' (deepseek-v3, deepseek-v32, deepseek-v4, kimi-k2, qwen3-moe, qwen3-next, "
                                             "qwen3.5-moe, gpt-oss, glm4-moe, glm-moe-dsa)");
    }
    // DeepSeek-V3.2 renders chats with its Python encoder (encoding_dsv32.py), not Jinja:
    // its tokenizer_config.json has no chat_template.
    if (family == "deepseek-v32")
        f.chatTemplate.clear();
    return f;
}

text::PieceSplitter splitterOf(const Family &f)
{
    text::PieceSplitter s;
    for (const std::string &p : f.splits)
        s.addSplit(p, f.tiktoken ? text::SplitBehavior::Removed : text::SplitBehavior::Isolated, f.tiktoken);
    return s;
}

struct Learned {
    std::vector<std::string> tokens;           // id -> bytes
    std::vector<std::pair<int, int>> merges;   // in rank order
};

// Byte-pair learning over the family's pieces: the most frequent adjacent pair (ties: the
// lowest pair) becomes the next token, up to `maxMerges`.
Learned learn(const Family &f, int maxMerges)
{
    Learned l;
    for (int b = 0; b < 256; ++b)
        l.tokens.push_back(std::string(1, static_cast<char>(b)));
    std::set<std::string> known(l.tokens.begin(), l.tokens.end());
    std::map<std::vector<int>, int> words;
    for (const std::string &p : splitterOf(f).split(kFamilyCorpus)) {
        std::vector<int> ids;
        for (unsigned char c : p)
            ids.push_back(c);
        ++words[ids];
    }
    std::set<std::pair<int, int>> skipped;
    while (static_cast<int>(l.merges.size()) < maxMerges) {
        std::map<std::pair<int, int>, int> counts;
        for (const auto &[w, n] : words)
            for (size_t i = 0; i + 1 < w.size(); ++i)
                counts[{w[i], w[i + 1]}] += n;
        std::pair<int, int> best{-1, -1};
        int bestCount = 1; // a pair seen once teaches nothing
        for (const auto &[pair, n] : counts)
            if (n > bestCount && !skipped.count(pair)) {
                best = pair;
                bestCount = n;
            }
        if (best.first < 0)
            break;
        const std::string bytes = l.tokens[size_t(best.first)] + l.tokens[size_t(best.second)];
        if (known.count(bytes)) { // the same bytes by another route
            skipped.insert(best);
            continue;
        }
        const int id = static_cast<int>(l.tokens.size());
        l.tokens.push_back(bytes);
        l.merges.push_back(best);
        known.insert(bytes);
        std::map<std::vector<int>, int> next;
        for (const auto &[w, n] : words) {
            std::vector<int> out;
            for (size_t i = 0; i < w.size(); ++i) {
                if (i + 1 < w.size() && w[i] == best.first && w[i + 1] == best.second) {
                    out.push_back(id);
                    ++i;
                } else {
                    out.push_back(w[i]);
                }
            }
            next[out] += n;
        }
        words = std::move(next);
    }
    return l;
}

ojson splitStep(const std::string &pattern)
{
    return {{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}, {"invert", false}};
}

ojson byteLevel(const char *type)
{
    ojson b = {{"type", type}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}};
    return b;
}

} // namespace

bool hasTinyFamilyTokenizer(std::string_view arch)
{
    return arch == "deepseek-v3" || arch == "deepseek-v4" || arch == "kimi-k2" || arch == "qwen3-moe" || arch == "qwen3-next" ||
           arch == "qwen3.5-moe" || arch == "gpt-oss" || arch == "glm4-moe" || arch == "deepseek-v32" || arch == "glm-moe-dsa";
}

TinyFamilyTokenizer tinyFamilyTokenizer(std::string_view arch, int vocabSize, bool releaseIds,
                                        std::string_view chatTemplate)
{
    const Family f = familyOf(arch, releaseIds, chatTemplate);
    const int nSpecials = static_cast<int>(f.specials.size());
    if (vocabSize < 384)
        throw Error(ErrorCode::Argument, "a tiny " + std::string(arch) + " tokenizer needs a vocabulary of at least 384 (got " +
                                             std::to_string(vocabSize) + ")");
    const bool fixed = !f.fixedIds.empty();
    const Learned l = learn(f, vocabSize - 256 - (fixed ? 0 : nSpecials));
    const int base = static_cast<int>(l.tokens.size()); // the specials follow the learned words
    const auto specialId = [&](int i) { return fixed ? f.fixedIds[size_t(i)] : base + i; };
    TinyFamilyTokenizer out;
    out.vocabSize = fixed ? f.fixedVocab : vocabSize;
    const auto idOf = [&](const std::string &text) {
        for (int i = 0; i < nSpecials; ++i)
            if (f.specials[size_t(i)].first == text)
                return specialId(i);
        return -1;
    };
    out.bosId = f.bos.empty() ? -1 : idOf(f.bos);
    out.eosId = idOf(f.eos);
    out.padId = idOf(f.pad);
    out.stopIds.push_back(out.eosId);
    for (const std::string &stop : f.stops)
        out.stopIds.push_back(idOf(stop));

    ojson addedDecoder = ojson::object();
    for (int i = 0; i < nSpecials; ++i)
        addedDecoder[std::to_string(specialId(i))] = {{"content", f.specials[size_t(i)].first}, {"lstrip", false},
                                                  {"normalized", false}, {"rstrip", false}, {"single_word", false},
                                                  {"special", f.specials[size_t(i)].second}};
    ojson tc;
    tc["add_bos_token"] = !f.bos.empty() && !f.tiktoken;
    tc["add_eos_token"] = false;
    tc["added_tokens_decoder"] = addedDecoder;
    tc["bos_token"] = f.bos.empty() ? ojson() : ojson(f.bos);
    if (!f.chatTemplate.empty()) // DeepSeek V4 ships none
        tc["chat_template"] = f.chatTemplate;
    tc["clean_up_tokenization_spaces"] = false;
    tc["eos_token"] = f.eos;
    tc["model_max_length"] = 131072;
    tc["pad_token"] = f.pad;
    tc["tokenizer_class"] = f.tokenizerClass;
    out.files["tokenizer_config.json"] = tc.dump(2) + "\n";

    if (f.tiktoken) {
        std::string ranks;
        for (size_t id = 0; id < l.tokens.size(); ++id)
            ranks += base64Encode(l.tokens[id]) + " " + std::to_string(id) + "\n";
        out.files["tiktoken.model"] = ranks;
        return out;
    }

    ojson j;
    j["version"] = "1.0";
    j["truncation"] = nullptr;
    j["padding"] = nullptr;
    ojson added = ojson::array();
    for (int i = 0; i < nSpecials; ++i)
        added.push_back({{"id", specialId(i)}, {"content", f.specials[size_t(i)].first}, {"single_word", false},
                         {"lstrip", false}, {"rstrip", false}, {"normalized", false},
                         {"special", f.specials[size_t(i)].second}});
    j["added_tokens"] = added;
    j["normalizer"] = f.nfc ? ojson{{"type", "NFC"}} : ojson();
    ojson steps = ojson::array();
    for (const std::string &p : f.splits)
        steps.push_back(splitStep(p));
    steps.push_back(byteLevel("ByteLevel"));
    j["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", steps}};
    j["post_processor"] = byteLevel("ByteLevel");
    j["decoder"] = byteLevel("ByteLevel");
    ojson vocab = ojson::object();
    for (size_t id = 0; id < l.tokens.size(); ++id)
        vocab[text::toByteLevel(l.tokens[id])] = id;
    ojson merges = ojson::array();
    for (const auto &[a, b] : l.merges)
        merges.push_back({text::toByteLevel(l.tokens[size_t(a)]), text::toByteLevel(l.tokens[size_t(b)])});
    j["model"] = {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", nullptr},
                  {"end_of_word_suffix", nullptr}, {"fuse_unk", false}, {"byte_fallback", false},
                  {"ignore_merges", f.ignoreMerges}, {"vocab", vocab}, {"merges", merges}};
    out.files["tokenizer.json"] = j.dump(1) + "\n";
    return out;
}

TinyFamilyTokenizer writeTinyFamilyTokenizer(const std::string &dir, std::string_view arch, int vocabSize)
{
    TinyFamilyTokenizer t = tinyFamilyTokenizer(arch, vocabSize);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
        throw Error(ErrorCode::Io, dir + ": cannot create the directory (" + ec.message() + ")");
    for (const auto &[name, data] : t.files)
        writeFileAtomic(joinPath(dir, name), data);
    return t;
}

} // namespace waste::convert
