#include "text/framed_json_constraint.hpp"

#include <algorithm>
#include <limits>

namespace waste::text {

namespace {

[[noreturn]] void badFrame(const std::string &what)
{
    throw Error(ErrorCode::Argument, "constrained decoding: " + what);
}

// Whether a document of `schema` can start with anything but an object or array (a
// value that could always go on, so only a markup token could end it).
bool mayBeScalar(const std::shared_ptr<const Schema> &schema)
{
    const JsonRecognizer rec(schema);
    for (int b = 0; b < 256; ++b) {
        if (b == '{' || b == '[' || b == ' ' || b == '\t' || b == '\n' || b == '\r')
            continue;
        JsonRecognizer::State s = rec.initial();
        if (rec.feed(s, static_cast<uint8_t>(b)))
            return true;
    }
    return false;
}

} // namespace

FramedJsonConstraint::FramedJsonConstraint(std::shared_ptr<const TokenTrie> trie, Reasoning reasoning,
                                           std::vector<Branch> branches, int maxTokens, int32_t eos)
    : m_trie(std::move(trie)), m_reasoning(std::move(reasoning)), m_branches(std::move(branches)),
      m_maxTokens(maxTokens), m_eos(eos)
{
    if (m_branches.empty())
        badFrame("no branch to follow");
    const Reasoning &r = m_reasoning;
    if (r.allowed) {
        if (r.close.empty() || ordinary(r.close[0]))
            badFrame("free reasoning needs a markup token that closes it");
        if (r.optional && (r.open.empty() || ordinary(r.open[0])))
            badFrame("optional reasoning needs a markup token that opens it");
    }
    int64_t longest = 0;
    for (const Branch &b : m_branches) {
        if (b.suffix.empty() || !b.schema == !b.arguments)
            badFrame("a branch needs a schema or an argument list, and a suffix");
        if (b.schema && ordinary(b.suffix[0]) && mayBeScalar(b.schema))
            badFrame("a document followed by text must be a JSON object or array (the schema allows other values)");
        // The document written one byte-token at a time (every byte is a token).
        int64_t body = 0;
        if (b.schema) {
            const JsonRecognizer rec(b.schema);
            body = rec.minRemaining(rec.initial());
        } else {
            body = ArgumentListConstraint::minimumTokens(*b.arguments);
        }
        const int64_t minimum = int64_t(b.prefix.size()) + body + int64_t(b.suffix.size());
        longest = std::max(longest, minimum);
    }
    const int64_t around = r.allowed ? int64_t(r.open.size() + r.close.size()) : 0;
    const int64_t required = r.allowed && !r.optional ? longest + around : longest;
    if (maxTokens > 0 && required > maxTokens)
        throw Error(ErrorCode::Argument, "max_tokens " + std::to_string(maxTokens) +
                                             " is too small for the required output structure: it needs at least " +
                                             std::to_string(required) + " tokens",
                    "max_tokens");
    if (r.allowed)
        m_freeCap = maxTokens > 0 ? static_cast<int>(std::max<int64_t>(-1, (maxTokens - longest - around) / 2))
                                  : std::numeric_limits<int>::max();
    if (r.allowed && !r.optional) {
        m_phase = r.open.empty() ? Phase::Free : Phase::Open;
        return;
    }
    m_mayOpen = r.allowed && m_freeCap >= 0; // with no room left, the answer starts at once
    startBranches();
}

bool FramedJsonConstraint::ordinary(int32_t token) const
{
    return token >= 0 && static_cast<size_t>(token) < m_trie->vocabSize() && !m_trie->bytes(token).empty();
}

void FramedJsonConstraint::allow(std::vector<bool> &mask, int32_t id)
{
    if (id < 0)
        return;
    if (static_cast<size_t>(id) >= mask.size())
        mask.resize(static_cast<size_t>(id) + 1, false);
    mask[static_cast<size_t>(id)] = true;
}

void FramedJsonConstraint::refuse(int32_t token)
{
    throw Error(ErrorCode::Argument,
                "constrained decoding: token " + std::to_string(token) + " does not continue the required structure");
}

void FramedJsonConstraint::startBranches()
{
    m_live.clear();
    for (size_t i = 0; i < m_branches.size(); ++i)
        m_live.push_back(i);
    m_pos = 0;
    m_phase = Phase::Prefix;
    enterJsonIfReady();
}

void FramedJsonConstraint::enterJsonIfReady()
{
    if (m_phase != Phase::Prefix)
        return;
    for (size_t i : m_live) {
        const Branch &b = m_branches[i];
        if (m_pos < b.prefix.size())
            continue;
        m_branch = i;
        m_phase = Phase::Json;
        if (b.arguments) { // its own budget: what is left once the whole suffix is kept
            const int budget =
                m_maxTokens > 0 ? std::max(1, m_maxTokens - m_used - static_cast<int>(b.suffix.size())) : 0;
            m_arguments = std::make_unique<ArgumentListConstraint>(m_trie, b.arguments, budget);
            return;
        }
        m_textEnd = ordinary(b.suffix[0]);
        // The document's own budget: what is left once the suffix after its first token is
        // kept (the document reserves one token for its end: suffix[0]).
        int budget = 0;
        if (m_maxTokens > 0)
            budget = std::max(1, m_maxTokens - m_used - static_cast<int>(b.suffix.size() - 1));
        m_json = std::make_unique<JsonConstraint>(m_trie, m_textEnd ? -1 : b.suffix[0], b.schema, budget);
        return;
    }
}

void FramedJsonConstraint::allowed(std::vector<bool> &mask)
{
    std::fill(mask.begin(), mask.end(), false);
    switch (m_phase) {
    case Phase::Open:
        allow(mask, m_reasoning.open[m_pos]);
        break;
    case Phase::Free:
        if (m_free < m_freeCap) {
            if (mask.size() < m_trie->vocabSize())
                mask.resize(m_trie->vocabSize(), false);
            for (size_t id = 0; id < m_trie->vocabSize(); ++id)
                if (!m_trie->bytes(static_cast<int32_t>(id)).empty())
                    mask[id] = true;
        }
        allow(mask, m_reasoning.close[0]);
        break;
    case Phase::Close:
        allow(mask, m_reasoning.close[m_pos]);
        break;
    case Phase::Prefix:
        for (size_t i : m_live)
            allow(mask, m_branches[i].prefix[m_pos]);
        break;
    case Phase::Json:
        if (m_arguments)
            m_arguments->allowed(mask);
        else
            m_json->allowed(mask);
        break;
    case Phase::Suffix:
        allow(mask, m_branches[m_branch].suffix[m_pos]);
        break;
    case Phase::Done:
        allow(mask, m_eos);
        break;
    }
    if (m_mayOpen)
        allow(mask, m_reasoning.open[0]);
}

void FramedJsonConstraint::accept(int32_t token)
{
    ++m_used;
    const bool mayOpen = m_mayOpen;
    m_mayOpen = false;
    if (mayOpen && token == m_reasoning.open[0]) {
        m_json.reset();
        m_arguments.reset();
        m_pos = 1;
        m_phase = m_reasoning.open.size() == 1 ? Phase::Free : Phase::Open;
        return;
    }
    switch (m_phase) {
    case Phase::Open:
        if (token != m_reasoning.open[m_pos])
            refuse(token);
        if (++m_pos == m_reasoning.open.size())
            m_phase = Phase::Free;
        break;
    case Phase::Free:
        if (token == m_reasoning.close[0]) {
            m_pos = 1;
            if (m_reasoning.close.size() == 1)
                startBranches();
            else
                m_phase = Phase::Close;
        } else if (!ordinary(token) || m_free >= m_freeCap) {
            refuse(token);
        } else {
            ++m_free;
        }
        break;
    case Phase::Close:
        if (token != m_reasoning.close[m_pos])
            refuse(token);
        if (++m_pos == m_reasoning.close.size())
            startBranches();
        break;
    case Phase::Prefix: {
        std::vector<size_t> still;
        for (size_t i : m_live)
            if (m_branches[i].prefix[m_pos] == token)
                still.push_back(i);
        if (still.empty())
            refuse(token);
        m_live = std::move(still);
        ++m_pos;
        enterJsonIfReady();
        break;
    }
    case Phase::Json: {
        const Branch &b = m_branches[m_branch];
        if (m_arguments) {
            m_arguments->accept(token);
            if (m_arguments->complete()) {
                m_phase = Phase::Suffix;
                m_pos = 0;
            }
            break;
        }
        m_json->accept(token);
        if (!m_textEnd && token == b.suffix[0]) {
            m_phase = b.suffix.size() == 1 ? Phase::Done : Phase::Suffix;
            m_pos = 1;
        } else if (m_textEnd && m_json->closed()) {
            m_phase = Phase::Suffix;
            m_pos = 0;
        }
        break;
    }
    case Phase::Suffix: {
        const Branch &b = m_branches[m_branch];
        if (token != b.suffix[m_pos])
            refuse(token);
        if (++m_pos == b.suffix.size())
            m_phase = Phase::Done;
        break;
    }
    case Phase::Done:
        break;
    }
}

} // namespace waste::text
