#include "session/read_history.hpp"

#include <algorithm>

namespace waste::session {

void ReadHistory::clear()
{
    m_tokens.clear();
    m_checkpoints.clear();
}

void ReadHistory::append(std::span<const int32_t> tokens, int32_t mediaToken)
{
    for (int32_t t : tokens)
        m_tokens.push_back(mediaToken >= 0 && t == mediaToken ? kUnmatchable : t);
}

void ReadHistory::mark(const model::State &s)
{
    if (m_capacity <= 0 || s.pos == 0 || s.lastLogits.empty())
        return;
    if (std::any_of(m_checkpoints.begin(), m_checkpoints.end(), [&](const Checkpoint &c) { return c.pos == s.pos; }))
        return; // already holds this state (see the header)
    Checkpoint fresh;
    if (int(m_checkpoints.size()) >= m_capacity) { // the oldest goes; its buffers are reused
        fresh = std::move(m_checkpoints.front());
        m_checkpoints.erase(m_checkpoints.begin());
    }
    m_checkpoints.push_back(std::move(fresh));
    Checkpoint *cp = &m_checkpoints.back();
    ++m_copies;
    cp->pos = s.pos;
    cp->recurrent.resize(s.layers.size());
    for (size_t L = 0; L < s.layers.size(); ++L) {
        const model::LayerState &from = s.layers[L];
        model::LayerState &to = cp->recurrent[L];
        to.S = from.S;
        to.convQ = from.convQ;
        to.convK = from.convK;
        to.convV = from.convV;
        if (from.kvRing) { // a sliding window's ring is overwritten as positions go on
            to.keys = from.keys;
            to.values = from.values;
            to.kvRing = true;
        }
    }
    cp->logits = s.lastLogits;
}

size_t ReadHistory::commonPrefix(std::span<const int32_t> prompt) const
{
    const size_t n = std::min(prompt.size(), m_tokens.size());
    size_t k = 0;
    while (k < n && m_tokens[k] != kUnmatchable && m_tokens[k] == prompt[k])
        ++k;
    return k;
}

int ReadHistory::checkpointFor(std::span<const int32_t> prompt) const
{
    const size_t common = commonPrefix(prompt);
    int best = -1;
    for (size_t i = 0; i < m_checkpoints.size(); ++i) {
        const int pos = m_checkpoints[i].pos;
        if (pos > 0 && size_t(pos) <= common && (best < 0 || pos > m_checkpoints[size_t(best)].pos))
            best = int(i);
    }
    return best;
}

bool ReadHistory::positionalOnly(const model::State &s)
{
    return !s.layers.empty() && std::all_of(s.layers.begin(), s.layers.end(), [](const model::LayerState &l) {
        return l.S.empty() && l.convQ.empty() && l.convK.empty() && l.convV.empty() && !l.kvRing;
    });
}

int ReadHistory::cutPoint(std::span<const int32_t> prompt, const model::State &s) const
{
    if (prompt.empty() || !positionalOnly(s) || size_t(s.pos) != m_tokens.size())
        return 0;
    // The logits at a cut are not kept: the prompt's last token is always read again.
    return int(std::min(commonPrefix(prompt), prompt.size() - 1));
}

int ReadHistory::reusable(std::span<const int32_t> prompt, const model::State &s) const
{
    const size_t live = m_tokens.size();
    if (live > 0 && size_t(s.pos) == live && !s.lastLogits.empty() && commonPrefix(prompt) == live)
        return int(live); // the prompt extends what the state read
    const int cp = checkpointFor(prompt);
    return std::max(cp < 0 ? 0 : m_checkpoints[size_t(cp)].pos, cutPoint(prompt, s));
}

int ReadHistory::reuse(std::span<const int32_t> prompt, model::State &s)
{
    const int n = reusable(prompt, s);
    if (n == 0) {
        s.reset();
        clear();
        return 0;
    }
    if (size_t(n) == m_tokens.size() && size_t(s.pos) == m_tokens.size() && !s.lastLogits.empty())
        return n;
    const int at = checkpointFor(prompt);
    if (at < 0 || m_checkpoints[size_t(at)].pos != n) {
        // A cut of a state that is only rows by position: the rows before n stay, what comes
        // after is read again (and overwritten); no logits until the next token is read.
        s.pos = n;
        s.lastLogits.clear();
        m_tokens.resize(size_t(n));
        std::erase_if(m_checkpoints, [n](const Checkpoint &c) { return c.pos > n; });
        return n;
    }
    const Checkpoint &cp = m_checkpoints[size_t(at)];
    for (size_t L = 0; L < s.layers.size(); ++L) {
        model::LayerState &to = s.layers[L];
        const model::LayerState &from = cp.recurrent[L];
        std::copy(from.S.begin(), from.S.end(), to.S.begin());
        std::copy(from.convQ.begin(), from.convQ.end(), to.convQ.begin());
        std::copy(from.convK.begin(), from.convK.end(), to.convK.begin());
        std::copy(from.convV.begin(), from.convV.end(), to.convV.begin());
        if (from.kvRing) {
            std::copy(from.keys.begin(), from.keys.end(), to.keys.begin());
            std::copy(from.values.begin(), from.values.end(), to.values.begin());
        }
    }
    s.pos = n;
    s.lastLogits = cp.logits;
    m_tokens.resize(size_t(n));
    std::erase_if(m_checkpoints, [n](const Checkpoint &c) { return c.pos > n; });
    return n;
}

void ReadHistory::assign(std::vector<int32_t> tokens, std::vector<Checkpoint> checkpoints)
{
    m_tokens = std::move(tokens);
    m_checkpoints = std::move(checkpoints);
    while (int(m_checkpoints.size()) > std::max(m_capacity, 0))
        m_checkpoints.erase(m_checkpoints.begin());
}

} // namespace waste::session
