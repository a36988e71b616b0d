// Tokenizer::fromHfJson: reads a Hugging Face tokenizer.json of the byte-level BPE kind the
// DeepSeek-V3, Qwen3 and gpt-oss releases ship. What it holds beyond that kind (another
// model type, a normalizer or pre-tokenizer step not listed here) is refused by name, so a
// tokenizer is never applied with rules it does not have.
#include "text/byte_level.hpp"
#include "text/piece_splitter.hpp"
#include "text/tokenizer.hpp"
#include "waste/waste.hpp"

#include <nlohmann/json.hpp>

namespace waste::text {

namespace {

using Json = nlohmann::json;

[[noreturn]] void refuse(const std::string &what) { throw Error(ErrorCode::Format, what); }

std::string typeOf(const Json &j) { return j.is_object() && j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>() : ""; }

bool flag(const Json &j, const char *key, bool dflt)
{
    const auto it = j.find(key);
    return it != j.end() && it->is_boolean() ? it->get<bool>() : dflt;
}

// Whether the normalizer is NFC (true) or absent (false).
bool readNormalizer(const Json &n)
{
    if (n.is_null())
        return false;
    const std::string type = typeOf(n);
    if (type == "NFC")
        return true;
    if (type == "Sequence" && n.contains("normalizers") && n["normalizers"].is_array()) {
        bool nfc = false;
        for (const Json &step : n["normalizers"]) {
            if (!readNormalizer(step))
                refuse("normalizer '" + typeOf(step) + "' is not supported (only NFC)");
            nfc = true;
        }
        return nfc;
    }
    refuse("normalizer '" + type + "' is not supported (only NFC)");
}

SplitBehavior behaviorOf(const Json &step)
{
    const std::string b = step.value("behavior", std::string("Isolated"));
    if (b == "Removed")
        return SplitBehavior::Removed;
    if (b == "Isolated")
        return SplitBehavior::Isolated;
    if (b == "MergedWithPrevious")
        return SplitBehavior::MergedWithPrevious;
    if (b == "MergedWithNext")
        return SplitBehavior::MergedWithNext;
    if (b == "Contiguous")
        return SplitBehavior::Contiguous;
    refuse("Split behavior '" + b + "' is unknown");
}

// Escapes a literal so the split regex matches it as written.
std::string literalPattern(const std::string &s)
{
    std::string out;
    for (char c : s) {
        if (std::string_view("\\^$.|?*+()[]{}&-").find(c) != std::string_view::npos)
            out.push_back('\\');
        out.push_back(c);
    }
    return out;
}

void readPreTokenizer(const Json &p, PieceSplitter &splitter, bool &byteLevel)
{
    if (p.is_null())
        return;
    const std::string type = typeOf(p);
    if (type == "Sequence" && p.contains("pretokenizers") && p["pretokenizers"].is_array()) {
        for (const Json &step : p["pretokenizers"])
            readPreTokenizer(step, splitter, byteLevel);
    } else if (type == "Split") {
        const Json &pat = p.value("pattern", Json::object());
        std::string regex;
        if (pat.contains("Regex") && pat["Regex"].is_string())
            regex = pat["Regex"].get<std::string>();
        else if (pat.contains("String") && pat["String"].is_string())
            regex = literalPattern(pat["String"].get<std::string>());
        else
            refuse("a Split pre-tokenizer without a Regex or String pattern");
        splitter.addSplit(regex, behaviorOf(p), flag(p, "invert", false));
    } else if (type == "ByteLevel") {
        splitter.addByteLevel(flag(p, "add_prefix_space", true), flag(p, "use_regex", true));
        byteLevel = true;
    } else {
        refuse("pre-tokenizer '" + type + "' is not supported (only Sequence, Split, ByteLevel)");
    }
}

// A token given as "text" or {"content": "text"} in tokenizer_config.json.
std::string tokenText(const Json &v)
{
    if (v.is_string())
        return v.get<std::string>();
    if (v.is_object() && v.contains("content") && v["content"].is_string())
        return v["content"].get<std::string>();
    return {};
}

} // namespace

Tokenizer Tokenizer::fromHfJson(std::string_view tokenizerJson, std::string_view tokenizerConfigJson, int32_t eos)
{
    Json j;
    try {
        j = Json::parse(tokenizerJson);
    } catch (const Json::exception &e) {
        refuse(std::string("not valid JSON (") + e.what() + ")");
    }
    if (!j.is_object() || !j.contains("model") || !j["model"].is_object())
        refuse("no 'model' object; not a Hugging Face tokenizer.json");
    const Json &model = j["model"];
    if (typeOf(model) != "BPE" && !(typeOf(model).empty() && model.contains("merges")))
        refuse("model type '" + typeOf(model) + "' is not supported (only byte-level BPE)");
    for (const char *key : {"continuing_subword_prefix", "end_of_word_suffix"})
        if (model.contains(key) && model[key].is_string() && !model[key].get<std::string>().empty())
            refuse(std::string("BPE with a ") + key + " is not supported (only byte-level BPE)");
    if (flag(model, "byte_fallback", false))
        refuse("BPE with byte_fallback (a SentencePiece vocabulary) is not supported (only byte-level BPE)");

    Tokenizer t;
    t.m_mergeRules = true;
    t.m_windows = false;
    t.m_ignoreMerges = flag(model, "ignore_merges", false);
    t.m_nfc = readNormalizer(j.value("normalizer", Json()));
    auto splitter = std::make_shared<PieceSplitter>();
    bool byteLevel = false;
    readPreTokenizer(j.value("pre_tokenizer", Json()), *splitter, byteLevel);
    if (!byteLevel)
        refuse("no ByteLevel pre-tokenizer: only byte-level vocabularies are supported");
    t.m_splitter = std::move(splitter);

    // The vocabulary: byte-level spellings -> ids.
    if (!model.contains("vocab") || !model["vocab"].is_object())
        refuse("model.vocab is missing");
    int32_t maxId = -1;
    std::vector<std::pair<int32_t, std::string>> entries;
    entries.reserve(model["vocab"].size());
    for (auto it = model["vocab"].begin(); it != model["vocab"].end(); ++it) {
        if (!it.value().is_number_integer())
            refuse("model.vocab['" + it.key() + "'] is not an integer id");
        const int64_t id = it.value().get<int64_t>();
        if (id < 0 || id >= (int64_t(1) << 26))
            refuse("model.vocab['" + it.key() + "'] = " + std::to_string(id) + " is out of range");
        std::optional<std::string> bytes = fromByteLevel(it.key());
        if (!bytes)
            continue; // not a byte-level spelling (an added token listed in the vocabulary): never produced by BPE
        maxId = std::max(maxId, static_cast<int32_t>(id));
        entries.emplace_back(static_cast<int32_t>(id), std::move(*bytes));
    }
    t.m_rankCount = static_cast<int32_t>(model["vocab"].size());
    t.m_bytes.assign(size_t(maxId + 1), std::string());
    t.m_ranks.reserve(entries.size());
    for (auto &[id, bytes] : entries) {
        t.m_bytes[size_t(id)] = bytes;
        t.m_ranks.emplace(std::move(bytes), id);
    }

    // Merges, in rank order: "left right" strings or [left, right] pairs.
    if (model.contains("merges") && model["merges"].is_array()) {
        int32_t rank = 0;
        for (const Json &m : model["merges"]) {
            std::string left, right;
            if (m.is_string()) {
                const std::string s = m.get<std::string>();
                const size_t sp = s.find(' ');
                if (sp == std::string::npos)
                    refuse("merge '" + s + "' is not 'left right'");
                left = s.substr(0, sp);
                right = s.substr(sp + 1);
            } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
                left = m[0].get<std::string>();
                right = m[1].get<std::string>();
            } else {
                refuse("merge " + std::to_string(rank) + " is neither 'left right' nor [left, right]");
            }
            const auto l = fromByteLevel(left), r = fromByteLevel(right);
            const int32_t li = l ? t.rankOf(*l) : -1, ri = r ? t.rankOf(*r) : -1;
            const int32_t joined = l && r ? t.rankOf(*l + *r) : -1;
            if (li < 0 || ri < 0 || joined < 0)
                refuse("merge " + std::to_string(rank) + " ('" + left + "' '" + right + "') uses a word not in the vocabulary");
            t.m_merges.emplace((uint64_t(uint32_t(li)) << 32) | uint32_t(ri), std::make_pair(rank, joined));
            ++rank;
        }
    }

    // Added tokens: matched before splitting; special ones only in markup.
    std::vector<SpecialToken> added;
    if (j.contains("added_tokens") && j["added_tokens"].is_array()) {
        for (const Json &a : j["added_tokens"]) {
            if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || !a.contains("content") ||
                !a["content"].is_string())
                refuse("an added_tokens entry without an integer id and a content string");
            const int64_t id = a["id"].get<int64_t>();
            if (id < 0 || id >= (int64_t(1) << 26))
                refuse("added token id " + std::to_string(id) + " is out of range");
            if (flag(a, "single_word", false))
                refuse("added token '" + a["content"].get<std::string>() + "' has single_word, which is not supported");
            SpecialToken s;
            s.id = static_cast<int32_t>(id);
            s.text = a["content"].get<std::string>();
            s.special = flag(a, "special", false);
            s.lstrip = flag(a, "lstrip", false);
            s.rstrip = flag(a, "rstrip", false);
            if (!s.text.empty()) {
                maxId = std::max(maxId, s.id);
                added.push_back(std::move(s));
            }
        }
    }
    t.finishSpecials(std::move(added));

    // BOS and EOS from tokenizer_config.json, by text.
    t.m_bos = -1;
    t.m_eos = -1;
    if (!tokenizerConfigJson.empty()) {
        Json c;
        try {
            c = Json::parse(tokenizerConfigJson);
        } catch (const Json::exception &e) {
            refuse(std::string("tokenizer_config.json is not valid JSON (") + e.what() + ")");
        }
        const auto idOf = [&](const std::string &text) -> int32_t {
            if (text.empty())
                return -1;
            if (const int32_t s = t.specialId(text); s >= 0)
                return s;
            return t.rankOf(text);
        };
        if (c.is_object()) {
            t.m_bos = idOf(tokenText(c.value("bos_token", Json())));
            t.m_eos = idOf(tokenText(c.value("eos_token", Json())));
        }
    }
    if (eos > 0)
        t.m_eos = eos;
    t.m_vocabSize = std::max({maxId + 1, t.m_bos + 1, t.m_eos + 1});
    return t;
}

} // namespace waste::text
