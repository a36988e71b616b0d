#include "cache/known_odds_replay.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <limits>
#include <string>

namespace waste::cache {

namespace {

class KnownOddsCache {
public:
    KnownOddsCache(KnownOddsRun &run, const SyntheticTraceSpec &spec, const std::vector<double> &fresh, double reuse)
        : m_run(run), m_layers(spec.layers), m_experts(spec.experts), m_fresh(fresh), m_reuse(reuse),
          m_slotKey(size_t(run.slots), -1), m_slotAt(size_t(run.slots), -1), m_protected(size_t(run.slots), 0),
          m_where(size_t(spec.layers) * size_t(spec.experts), -1), m_lastPick(m_where.size(), -2),
          m_layerSlots(size_t(spec.layers)), m_least(size_t(spec.layers), -1), m_leastValid(size_t(spec.layers), 0)
    {
    }

    // Token `token` routes `layers`; rank[layer][expert] is the generator's popularity rank.
    void serve(int token, const std::vector<std::vector<int>> &layers, const std::vector<std::vector<int>> &rank)
    {
        m_token = token;
        m_rank = &rank;
        std::fill(m_leastValid.begin(), m_leastValid.end(), 0); // new ranks, new "token before"
        for (int l = 0; l < m_layers; ++l) {
            m_layer = l;
            const auto &ids = layers[size_t(l)];
            protect(l, ids, 1); // the layer's resident records wait for their acquire
            for (int e : ids) {
                const int key = l * m_experts + e;
                ++m_run.accesses;
                int slot = m_where[size_t(key)];
                if (slot >= 0) {
                    ++m_run.hits;
                    m_protected[size_t(slot)] = 0;
                } else {
                    slot = claim();
                    m_where[size_t(key)] = slot;
                    m_slotKey[size_t(slot)] = key;
                    m_slotAt[size_t(slot)] = int(m_layerSlots[size_t(l)].size());
                    m_layerSlots[size_t(l)].push_back(slot);
                }
                m_lastPick[size_t(key)] = token;
                m_leastValid[size_t(l)] = 0; // a record of the layer was unprotected, filled or re-picked
            }
            protect(l, ids, 0);
            m_leastValid[size_t(l)] = 0; // its records' next chance is now in the next pass
        }
    }

private:
    void protect(int layer, const std::vector<int> &ids, char on)
    {
        for (int e : ids) {
            const int slot = m_where[size_t(layer) * size_t(m_experts) + size_t(e)];
            if (slot >= 0)
                m_protected[size_t(slot)] = on;
        }
        m_leastValid[size_t(layer)] = 0;
    }

    // The chance that the record in `slot` is picked at its next chance.
    double odds(int slot) const
    {
        const int key = m_slotKey[size_t(slot)];
        const int l = key / m_experts, e = key % m_experts;
        const double q = m_fresh[size_t((*m_rank)[size_t(l)][size_t(e)])];
        const bool reused = m_lastPick[size_t(key)] == (l > m_layer ? m_token - 1 : m_token);
        return reused ? m_reuse + (1.0 - m_reuse) * q : q;
    }

    // Within a layer every record waits as long for its next chance: the least p is the
    // least p / d, kept per layer until the layer's records, ranks or position change.
    int leastOf(int layer, bool respectProtection)
    {
        if (respectProtection && m_leastValid[size_t(layer)])
            return m_least[size_t(layer)];
        int best = -1;
        double bestOdds = std::numeric_limits<double>::infinity();
        for (int s : m_layerSlots[size_t(layer)]) {
            if (respectProtection && m_protected[size_t(s)])
                continue;
            const double p = odds(s);
            if (p < bestOdds) {
                bestOdds = p;
                best = s;
            }
        }
        if (respectProtection) {
            m_least[size_t(layer)] = best;
            m_leastValid[size_t(layer)] = 1;
        }
        return best;
    }

    int pick(bool respectProtection)
    {
        int best = -1;
        double bestValue = std::numeric_limits<double>::infinity();
        for (int l = 0; l < m_layers; ++l) {
            const int s = leastOf(l, respectProtection);
            if (s < 0)
                continue;
            const double d = double(l > m_layer ? l - m_layer : l - m_layer + m_layers) / m_layers;
            if (odds(s) / d < bestValue) {
                bestValue = odds(s) / d;
                best = s;
            }
        }
        return best;
    }

    int claim()
    {
        if (m_used < m_run.slots)
            return m_used++;
        int slot = pick(true);
        if (slot < 0) // only the layer's own hits are left: give way
            slot = pick(false);
        const int layer = m_slotKey[size_t(slot)] / m_experts;
        auto &list = m_layerSlots[size_t(layer)];
        list[size_t(m_slotAt[size_t(slot)])] = list.back();
        m_slotAt[size_t(list.back())] = m_slotAt[size_t(slot)];
        list.pop_back();
        m_leastValid[size_t(layer)] = 0;
        m_where[size_t(m_slotKey[size_t(slot)])] = -1;
        m_protected[size_t(slot)] = 0;
        return slot;
    }

    KnownOddsRun &m_run;
    int m_layers, m_experts;
    const std::vector<double> &m_fresh;
    double m_reuse;
    int m_used = 0;
    int m_token = 0, m_layer = 0;
    const std::vector<std::vector<int>> *m_rank = nullptr;
    std::vector<int> m_slotKey;
    std::vector<int> m_slotAt;     // the slot's index in its layer's list
    std::vector<char> m_protected;
    std::vector<int> m_where;
    std::vector<int> m_lastPick;   // token of the record's last pick
    std::vector<std::vector<int>> m_layerSlots;
    std::vector<int> m_least;      // per layer: its unprotected slot with the least p, -1 none
    std::vector<char> m_leastValid;
};

} // namespace

void knownOddsReplay(const SyntheticTraceSpec &spec, std::vector<KnownOddsRun> &runs)
{
    for (const KnownOddsRun &run : runs)
        if (run.slots < 1 || run.first + run.count > size_t(std::max(0, spec.tokens)))
            throw Error(ErrorCode::Argument, "known-odds replay: need at least one slot and tokens inside the trace (got " +
                                                 std::to_string(run.slots) + " slots, tokens " + std::to_string(run.first) +
                                                 " + " + std::to_string(run.count) + " of " + std::to_string(spec.tokens) + ")");
    const std::vector<double> fresh = zipfPickChance(spec);
    // E[min(1, 2 locality U)]: the token's reuse chance as the generator draws it.
    const double a = 2.0 * spec.locality;
    const double reuse = a <= 1.0 ? a / 2.0 : 1.0 - 1.0 / (2.0 * a);
    std::vector<KnownOddsCache> caches;
    caches.reserve(runs.size());
    for (KnownOddsRun &run : runs) {
        run.hits = run.accesses = 0;
        caches.emplace_back(run, spec, fresh, reuse);
    }
    std::vector<std::vector<int>> rank(size_t(spec.layers), std::vector<int>(size_t(spec.experts)));
    zipfDriftTrace(spec, [&](int token, const std::vector<std::vector<int>> &layers,
                             const std::vector<std::vector<int>> &rankToExpert) {
        bool ranked = false;
        for (size_t i = 0; i < runs.size(); ++i) {
            if (size_t(token) < runs[i].first || size_t(token) >= runs[i].first + runs[i].count)
                continue;
            if (!ranked) {
                for (size_t l = 0; l < rank.size(); ++l)
                    for (size_t r = 0; r < rankToExpert[l].size(); ++r)
                        rank[l][size_t(rankToExpert[l][r])] = int(r);
                ranked = true;
            }
            caches[i].serve(token, layers, rank);
        }
    });
}

} // namespace waste::cache
