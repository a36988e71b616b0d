#include "text/tokenizer.hpp"

#include "text/piece_splitter.hpp"
#include "text/pretokenizer.hpp"
#include "text/unicode_props.hpp"
#include "waste/waste.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace waste::text {

namespace {

constexpr int32_t kMaxRank = 1 << 26;     // far above any real vocabulary; bounds the id table
constexpr size_t kWindowBytes = 1024;      // the reference encodes long pieces in windows

// Standard-alphabet base64; stops at '=', skips characters outside the alphabet.
std::string base64Decode(std::string_view s)
{
    std::string out;
    uint32_t acc = 0;
    int bits = 0;
    for (char ch : s) {
        int v;
        if (ch >= 'A' && ch <= 'Z')
            v = ch - 'A';
        else if (ch >= 'a' && ch <= 'z')
            v = ch - 'a' + 26;
        else if (ch >= '0' && ch <= '9')
            v = ch - '0' + 52;
        else if (ch == '+')
            v = 62;
        else if (ch == '/')
            v = 63;
        else if (ch == '=')
            break;
        else
            continue;
        acc = (acc << 6) | static_cast<uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((acc >> bits) & 0xFF));
        }
    }
    return out;
}

// C atoi: optional leading whitespace and sign, digits until the first non-digit, 0 on garbage.
int64_t atoiLike(std::string_view s)
{
    size_t i = 0;
    while (i < s.size() && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')))
        ++i;
    bool neg = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    int64_t v = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i)
        v = std::min<int64_t>(v * 10 + (s[i] - '0'), INT64_C(1) << 40);
    return neg ? -v : v;
}

std::string readFile(const std::filesystem::path &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(ErrorCode::Io, path.string() + ": cannot open for reading");
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad())
        throw Error(ErrorCode::Io, path.string() + ": read failed");
    return std::move(ss).str();
}

// Reads specials.json the way the reference does: textually. For every "id" key the
// integer after the colon, then the raw characters between the quotes that follow
// the next "text" key (escapes are kept as written).
std::vector<SpecialToken> scanSpecials(std::string_view json)
{
    std::vector<SpecialToken> out;
    size_t pos = 0;
    while ((pos = json.find("\"id\"", pos)) != std::string_view::npos) {
        pos += 4;
        const size_t colon = json.find(':', pos);
        if (colon == std::string_view::npos)
            break;
        size_t numEnd = colon + 1;
        while (numEnd < json.size() && json[numEnd] != ',' && json[numEnd] != '}' && json[numEnd] != '\n')
            ++numEnd;
        const int64_t id = atoiLike(json.substr(colon + 1, numEnd - colon - 1));
        const size_t key = json.find("\"text\"", colon);
        if (key == std::string_view::npos)
            break;
        const size_t open = json.find('"', key + 6);
        if (open == std::string_view::npos)
            break;
        size_t close = open + 1;
        while (close < json.size() && json[close] != '"')
            close += (json[close] == '\\' && close + 1 < json.size()) ? 2 : 1;
        if (close >= json.size())
            break;
        std::string text(json.substr(open + 1, close - open - 1));
        pos = close + 1;
        if (text.empty() || id < 0 || id >= kMaxRank)
            continue;
        out.push_back({static_cast<int32_t>(id), std::move(text)});
    }
    return out;
}

} // namespace

bool Tokenizer::present(const std::string &dir)
{
    namespace fs = std::filesystem;
    return fs::exists(fs::path(dir) / "tokenizer.json") || fs::exists(fs::path(dir) / "tokenizer.model") ||
           fs::exists(fs::path(dir) / "tiktoken.model");
}

std::string_view Tokenizer::tiktokenSplitPattern(std::string_view arch)
{
    return arch == "kimi-k2" ? std::string_view(kKimiK2SplitPattern) : std::string_view();
}

Tokenizer Tokenizer::load(const std::string &containerDir, int32_t bos, int32_t eos, std::string_view arch)
{
    namespace fs = std::filesystem;
    const fs::path dir(containerDir);
    if (const fs::path json = dir / "tokenizer.json"; fs::exists(json)) {
        const fs::path configPath = dir / "tokenizer_config.json";
        const std::string config = fs::exists(configPath) ? readFile(configPath) : std::string();
        try {
            return fromHfJson(readFile(json), config, eos);
        } catch (const Error &e) {
            throw Error(e.code(), json.string() + ": " + e.what());
        }
    }
    fs::path rankPath = dir / "tokenizer.model";
    if (!fs::exists(rankPath))
        rankPath = dir / "tiktoken.model";
    if (!fs::exists(rankPath))
        throw Error(ErrorCode::Format, (dir / "tokenizer.model").string() +
                                           ": missing (nor tiktoken.model); the container has no tokenizer");
    const std::string ranks = readFile(rankPath);
    const fs::path specialsPath = dir / "specials.json";
    const std::string specials = fs::exists(specialsPath) ? readFile(specialsPath) : std::string();
    try {
        return fromData(ranks, specials, bos, eos, tiktokenSplitPattern(arch));
    } catch (const Error &e) {
        throw Error(e.code(), rankPath.string() + ": " + e.what());
    }
}

Tokenizer Tokenizer::fromData(std::string_view rankFile, std::string_view specialsJson, int32_t bos, int32_t eos,
                              std::string_view splitPattern)
{
    Tokenizer t;
    if (!splitPattern.empty()) {
        // tiktoken encodes the pattern's matches, whole; what lies between them is dropped.
        auto splitter = std::make_shared<PieceSplitter>();
        splitter->addSplit(splitPattern, SplitBehavior::Removed, true);
        t.m_splitter = std::move(splitter);
        t.m_windows = false;
    }
    int32_t maxRank = -1;
    size_t pos = 0;
    std::vector<std::pair<int32_t, std::string>> lines;
    while (pos < rankFile.size()) {
        size_t end = rankFile.find('\n', pos);
        if (end == std::string_view::npos)
            end = rankFile.size();
        const std::string_view line = rankFile.substr(pos, end - pos);
        pos = end + 1;
        const size_t space = line.find(' ');
        if (space == std::string_view::npos)
            continue;
        const int64_t rank = atoiLike(line.substr(space + 1));
        ++t.m_rankCount; // every line with a space counts, like the reference's n_tokens
        if (rank < 0)
            continue; // an id can never be negative; such a line only counts
        if (rank >= kMaxRank)
            throw Error(ErrorCode::Format, "rank " + std::to_string(rank) + " is out of range (at most " +
                                               std::to_string(kMaxRank - 1) + ")");
        std::string bytes = base64Decode(line.substr(0, space));
        maxRank = std::max(maxRank, static_cast<int32_t>(rank));
        lines.emplace_back(static_cast<int32_t>(rank), std::move(bytes));
    }
    if (t.m_rankCount == 0)
        throw Error(ErrorCode::Format, "no token lines (expected 'BASE64 RANK' per line)");

    t.m_bytes.assign(static_cast<size_t>(maxRank + 1), std::string());
    std::vector<bool> haveRank(static_cast<size_t>(maxRank + 1), false);
    t.m_ranks.reserve(lines.size());
    for (auto &[rank, bytes] : lines) {
        if (!haveRank[static_cast<size_t>(rank)]) {
            haveRank[static_cast<size_t>(rank)] = true;
            t.m_bytes[static_cast<size_t>(rank)] = bytes;
        }
        t.m_ranks.emplace(std::move(bytes), rank); // emplace keeps the first line's rank
    }

    t.finishSpecials(scanSpecials(specialsJson));

    t.m_bos = bos >= 0 ? bos : t.m_rankCount;
    t.m_eos = eos > 0 ? eos : t.m_rankCount + 2;
    int32_t limit = std::max({maxRank + 1, t.m_bos + 1, t.m_eos + 1});
    for (const SpecialToken &s : t.m_specials)
        limit = std::max(limit, s.id + 1);
    t.m_vocabSize = limit;
    return t;
}

void Tokenizer::finishSpecials(std::vector<SpecialToken> specials)
{
    for (const SpecialToken &sp : specials) {
        m_specialText.emplace(sp.id, sp.text); // decoding uses the first entry for an id
        m_specialFlag.emplace(sp.id, sp.special);
    }
    // Matching tries longer texts first (stable: file order among equal lengths).
    std::stable_sort(specials.begin(), specials.end(),
                     [](const SpecialToken &a, const SpecialToken &b) { return a.text.size() > b.text.size(); });
    for (const SpecialToken &sp : specials)
        if (!sp.special)
            m_plainAdded.push_back(sp);
    m_specials = std::move(specials);
}

int32_t Tokenizer::rankOf(std::string_view bytes) const
{
    const auto it = m_ranks.find(bytes);
    return it == m_ranks.end() ? -1 : it->second;
}

bool Tokenizer::isSpecial(int32_t id) const
{
    const auto it = m_specialFlag.find(id);
    return it != m_specialFlag.end() && it->second;
}

int32_t Tokenizer::specialId(std::string_view text) const
{
    for (const SpecialToken &s : m_specials)
        if (s.text == text)
            return s.id;
    return -1;
}

std::string_view Tokenizer::piece(int32_t id) const
{
    if (const auto it = m_specialText.find(id); it != m_specialText.end())
        return it->second;
    if (id >= 0 && static_cast<size_t>(id) < m_bytes.size())
        return m_bytes[static_cast<size_t>(id)];
    return {};
}

std::string Tokenizer::decode(std::span<const int32_t> ids) const
{
    std::string out;
    for (int32_t id : ids)
        out += piece(id);
    return out;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool markup) const
{
    std::vector<int32_t> out;
    encodeTo(text, markup, out);
    return out;
}

void Tokenizer::encodeTo(std::string_view text, bool markup, std::vector<int32_t> &out) const
{
    encodeWith(markup ? m_specials : m_plainAdded, text, out);
}

void Tokenizer::encodeWith(const std::vector<SpecialToken> &added, std::string_view text, std::vector<int32_t> &out) const
{
    if (added.empty()) {
        encodePlain(text, out);
        return;
    }
    // Next occurrence of each added token at or after the cursor, refreshed lazily.
    constexpr size_t npos = std::string_view::npos;
    std::vector<size_t> next(added.size());
    for (size_t i = 0; i < added.size(); ++i)
        next[i] = text.find(added[i].text);
    size_t cursor = 0;
    const auto isWs = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
    while (cursor < text.size()) {
        size_t bestPos = npos;
        size_t best = 0;
        for (size_t i = 0; i < added.size(); ++i) {
            if (next[i] != npos && next[i] < cursor)
                next[i] = text.find(added[i].text, cursor);
            // Sorted longest first, so strict < keeps the longest at an equal start.
            if (next[i] < bestPos) {
                bestPos = next[i];
                best = i;
            }
        }
        if (bestPos == npos)
            break;
        size_t before = bestPos, after = bestPos + added[best].text.size();
        if (added[best].lstrip)
            while (before > cursor && isWs(text[before - 1]))
                --before;
        if (added[best].rstrip)
            while (after < text.size() && isWs(text[after]))
                ++after;
        encodePlain(text.substr(cursor, before - cursor), out);
        out.push_back(added[best].id);
        cursor = after;
    }
    if (cursor < text.size())
        encodePlain(text.substr(cursor), out);
}

void Tokenizer::encodePlain(std::string_view text, std::vector<int32_t> &out) const
{
    if (m_splitter) {
        const std::string normalized = m_nfc ? unicode::nfc(text) : std::string();
        for (const std::string &piece : m_splitter->split(m_nfc ? std::string_view(normalized) : text))
            encodePiece(piece, out);
        return;
    }
    while (!text.empty()) {
        const size_t n = nextPieceLength(text);
        encodePiece(text.substr(0, n), out);
        text.remove_prefix(n);
    }
}

void Tokenizer::encodePiece(std::string_view piece, std::vector<int32_t> &out) const
{
    if (m_mergeRules) {
        mergeByRules(piece, out);
        return;
    }
    if (piece.size() <= kWindowBytes || !m_windows) {
        bytePairMerge(piece, out);
        return;
    }
    // Independent windows of at most kWindowBytes, not ending inside a UTF-8 sequence.
    size_t start = 0;
    while (start < piece.size()) {
        size_t end = std::min(start + kWindowBytes, piece.size());
        if (end < piece.size()) {
            size_t e = end;
            while (e > start && (static_cast<unsigned char>(piece[e]) & 0xC0) == 0x80)
                --e;
            if (e > start)
                end = e;
        }
        bytePairMerge(piece.substr(start, end - start), out);
        start = end;
    }
}

void Tokenizer::bytePairMerge(std::string_view piece, std::vector<int32_t> &out) const
{
    if (piece.empty())
        return;
    if (const int32_t whole = rankOf(piece); whole >= 0) {
        out.push_back(whole);
        return;
    }
    // starts[i] = byte offset where part i begins; parts are [starts[i], starts[i+1]).
    std::vector<size_t> starts(piece.size() + 1);
    for (size_t i = 0; i <= piece.size(); ++i)
        starts[i] = i;
    constexpr int32_t kNone = INT32_MAX;
    auto pairRank = [&](size_t i) -> int32_t { // rank of part i joined with part i+1
        if (i + 2 >= starts.size())
            return kNone;
        const int32_t r = rankOf(piece.substr(starts[i], starts[i + 2] - starts[i]));
        return r < 0 ? kNone : r;
    };
    std::vector<int32_t> ranks(starts.size());
    for (size_t i = 0; i < ranks.size(); ++i)
        ranks[i] = pairRank(i);
    for (;;) {
        int32_t bestRank = kNone;
        size_t best = 0;
        for (size_t i = 0; i + 2 < starts.size(); ++i) {
            if (ranks[i] < bestRank) { // strict: leftmost wins ties
                bestRank = ranks[i];
                best = i;
            }
        }
        if (bestRank == kNone)
            break;
        starts.erase(starts.begin() + static_cast<std::ptrdiff_t>(best) + 1);
        ranks.erase(ranks.begin() + static_cast<std::ptrdiff_t>(best) + 1);
        ranks[best] = pairRank(best);
        if (best > 0)
            ranks[best - 1] = pairRank(best - 1);
    }
    for (size_t i = 0; i + 1 < starts.size(); ++i) {
        const int32_t r = rankOf(piece.substr(starts[i], starts[i + 1] - starts[i]));
        out.push_back(r < 0 ? 0 : r);
    }
}

// tokenizer.json's BPE: start from single bytes; repeatedly apply the merge of lowest rank
// among adjacent pairs (leftmost on ties); a pair without a merge rule never joins, even
// when the joined bytes are a vocabulary word.
void Tokenizer::mergeByRules(std::string_view piece, std::vector<int32_t> &out) const
{
    if (piece.empty())
        return;
    if (m_ignoreMerges)
        if (const int32_t whole = rankOf(piece); whole >= 0) {
            out.push_back(whole);
            return;
        }
    std::vector<int32_t> parts;
    parts.reserve(piece.size());
    for (size_t i = 0; i < piece.size(); ++i)
        if (const int32_t id = rankOf(piece.substr(i, 1)); id >= 0)
            parts.push_back(id); // a byte outside the vocabulary is dropped, as the library does without unk
    const auto rule = [&](size_t i) -> const std::pair<int32_t, int32_t> * {
        const auto it = m_merges.find((uint64_t(uint32_t(parts[i])) << 32) | uint32_t(parts[i + 1]));
        return it == m_merges.end() ? nullptr : &it->second;
    };
    while (parts.size() > 1) {
        const std::pair<int32_t, int32_t> *best = nullptr;
        size_t at = 0;
        for (size_t i = 0; i + 1 < parts.size(); ++i) {
            const auto *r = rule(i);
            if (r && (!best || r->first < best->first)) {
                best = r;
                at = i;
            }
        }
        if (!best)
            break;
        parts[at] = best->second;
        parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(at) + 1);
    }
    out.insert(out.end(), parts.begin(), parts.end());
}

} // namespace waste::text
