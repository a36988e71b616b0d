#include "text/piece_splitter.hpp"

#include "text/unicode_props.hpp"

namespace waste::text {

const char *const kKimiK2SplitPattern =
    "[\\p{Han}]+"
    "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]+"
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]*"
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    "|\\p{N}{1,3}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
    "|\\s*[\\r\\n]+"
    "|\\s+(?!\\S)"
    "|\\s+";

namespace {

// GPT-2's pattern, which ByteLevel applies when use_regex is set.
constexpr const char *kGpt2Pattern = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

struct Part {
    size_t begin, end; // byte offsets
    bool delimiter;
};

} // namespace

void PieceSplitter::addSplit(std::string_view pattern, SplitBehavior behavior, bool invert)
{
    m_steps.push_back({std::make_unique<SplitRegex>(pattern), behavior, invert});
}

void PieceSplitter::addByteLevel(bool addPrefixSpace, bool useRegex)
{
    if (addPrefixSpace)
        m_steps.push_back({nullptr, SplitBehavior::Isolated, false});
    if (useRegex)
        addSplit(kGpt2Pattern, SplitBehavior::Isolated, false);
}

std::vector<std::string> PieceSplitter::split(std::string_view text) const
{
    std::vector<std::string> pieces;
    if (!text.empty())
        pieces.emplace_back(text);
    for (const Step &step : m_steps) {
        std::vector<std::string> next;
        for (std::string &piece : pieces) {
            if (!step.regex) {
                next.push_back(piece[0] == ' ' ? std::move(piece) : " " + piece);
                continue;
            }
            const unicode::Decoded d = unicode::decodeUtf8(piece);
            std::vector<Part> parts;
            size_t at = 0;
            for (const SplitRegex::Match &m : step.regex->findAll(d.cps)) {
                const size_t b = d.offsets[m.begin], e = d.offsets[m.end];
                if (b > at)
                    parts.push_back({at, b, step.invert});
                parts.push_back({b, e, !step.invert});
                at = e;
            }
            if (at < piece.size())
                parts.push_back({at, piece.size(), step.invert});
            // Apply the behaviour: which byte ranges become pieces.
            std::vector<std::pair<size_t, size_t>> out;
            bool mergeIntoNext = false;
            for (const Part &p : parts) {
                switch (step.behavior) {
                case SplitBehavior::Removed:
                    if (!p.delimiter)
                        out.emplace_back(p.begin, p.end);
                    break;
                case SplitBehavior::Isolated:
                    out.emplace_back(p.begin, p.end);
                    break;
                case SplitBehavior::MergedWithPrevious:
                    if (p.delimiter && !out.empty())
                        out.back().second = p.end;
                    else
                        out.emplace_back(p.begin, p.end);
                    break;
                case SplitBehavior::MergedWithNext:
                    if (mergeIntoNext)
                        out.back().second = p.end;
                    else
                        out.emplace_back(p.begin, p.end);
                    mergeIntoNext = p.delimiter;
                    break;
                case SplitBehavior::Contiguous:
                    if (p.delimiter && mergeIntoNext)
                        out.back().second = p.end;
                    else
                        out.emplace_back(p.begin, p.end);
                    mergeIntoNext = p.delimiter;
                    break;
                }
            }
            for (const auto &[b, e] : out)
                if (e > b)
                    next.push_back(piece.substr(b, e - b));
        }
        pieces = std::move(next);
    }
    return pieces;
}

} // namespace waste::text
