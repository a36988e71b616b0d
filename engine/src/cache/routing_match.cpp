#include "cache/routing_match.hpp"

#include <algorithm>

namespace waste::cache {

RoutingMatch::RoutingMatch(int layers, int experts)
    : m_layers(layers),
      m_experts(experts),
      m_history(size_t(kHistory) * size_t(layers)),
      m_score(kHistory, 0.0),
      m_mark(size_t(layers) * size_t(experts), 0),
      m_now(size_t(experts), 0)
{
}

void RoutingMatch::mark(int64_t pass, uint8_t bit, bool on)
{
    if (!validPass(pass))
        return;
    for (int l = 0; l < m_layers; ++l)
        for (int e : picks(pass, l)) {
            uint8_t &m = m_mark[size_t(l) * size_t(m_experts) + size_t(e)];
            m = on ? uint8_t(m | bit) : uint8_t(m & ~bit);
        }
}

void RoutingMatch::setSources(int64_t ahead, int64_t behind)
{
    m_previousAhead = m_ahead;
    m_previousBehind = m_behind;
    mark(m_ahead, Ahead, false);
    mark(m_behind, Behind, false);
    m_ahead = ahead;
    m_behind = behind;
    mark(m_ahead, Ahead, true);
    mark(m_behind, Behind, true);
}

void RoutingMatch::beginPass()
{
    setSources(-1, -1); // before the history the marks came from moves on
    ++m_pass;
    for (int l = 0; l < m_layers; ++l)
        m_history[size_t(m_pass % kHistory) * size_t(m_layers) + size_t(l)].clear();
    std::fill(m_score.begin(), m_score.end(), 0.0);
    setSources(m_match < 0 ? -1 : m_match + 1, -1);
}

bool RoutingMatch::observe(int layer, std::span<const int> experts)
{
    auto &now = m_history[size_t(m_pass % kHistory) * size_t(m_layers) + size_t(layer)];
    for (int e : experts)
        if (!m_now[size_t(e)] && std::find(now.begin(), now.end(), e) == now.end()) {
            m_now[size_t(e)] = 1;
            now.push_back(e);
        }
    for (int e : now)
        m_now[size_t(e)] = 1; // (a layer told twice in one pass: score against all its picks)
    int64_t best = -1;
    double bestScore = 0;
    const double share = 1.0 / double(std::max<size_t>(1, now.size()));
    for (int64_t u = std::max<int64_t>(1, m_pass - kHistory + 1); u < m_pass; ++u) {
        int common = 0;
        for (int e : picks(u, layer))
            common += m_now[size_t(e)];
        double &score = m_score[size_t(u % kHistory)];
        score = score * kLayerKeep + double(common) * share;
        if (score > 0 && score >= bestScore) {
            bestScore = score;
            best = u;
        }
    }
    for (int e : now)
        m_now[size_t(e)] = 0;
    if (best >= 0 && validPass(m_ahead) && m_ahead < m_pass && m_score[size_t(m_ahead % kHistory)] * kSwitchRatio >= bestScore)
        best = m_ahead;
    m_match = best;
    if (m_behind == m_pass) // this pass is its own successor source: its newest layer counts too
        for (int e : now)
            m_mark[size_t(layer) * size_t(m_experts) + size_t(e)] |= Behind;
    const int64_t behind = best < 0 ? -1 : best + 1;
    if (best == m_ahead && behind == m_behind)
        return false;
    setSources(best, behind);
    return true;
}

} // namespace waste::cache
