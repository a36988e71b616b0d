#include "cache/synthetic_trace.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace waste::cache {

namespace {

// splitmix64: portable, so a seed gives the same trace everywhere.
struct Rng {
    uint64_t s;
    uint64_t next()
    {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    double uniform() { return double(next() >> 11) * 0x1.0p-53; }
    int below(int n) { return int(uniform() * n); }
};

} // namespace

RoutingTrace zipfDriftTrace(const SyntheticTraceSpec &spec, const SyntheticObserver &observe)
{
    if (spec.tokens < 1 || spec.layers < 1 || spec.experts < 1 || spec.topK < 1 || spec.topK > spec.experts)
        throw Error(ErrorCode::Argument, "synthetic trace: need tokens, layers, experts >= 1 and 1 <= top-k <= experts");
    Rng rng{spec.seed};
    const int E = spec.experts, K = spec.topK;
    std::vector<std::vector<int>> rankOf(size_t(spec.layers), std::vector<int>(size_t(E))); // rank -> expert
    for (auto &perm : rankOf) {
        for (int i = 0; i < E; ++i)
            perm[size_t(i)] = i;
        for (int i = E - 1; i > 0; --i)
            std::swap(perm[size_t(i)], perm[size_t(rng.below(i + 1))]);
    }
    std::vector<double> weight(static_cast<size_t>(E));
    for (int r = 0; r < E; ++r)
        weight[size_t(r)] = 1.0 / std::pow(double(r + 1), spec.zipf);

    RoutingTrace t;
    t.layers = spec.layers;
    t.experts = E;
    t.topK = K;
    std::vector<std::vector<int>> previous(size_t(spec.layers));
    std::vector<char> taken(static_cast<size_t>(E));
    for (int tok = 0; tok < spec.tokens; ++tok) {
        const double reuse = std::min(1.0, spec.locality * 2.0 * rng.uniform()); // this token's similarity
        std::vector<std::vector<int>> layers(size_t(spec.layers));
        for (int l = 0; l < spec.layers; ++l) {
            auto &perm = rankOf[size_t(l)];
            const int swaps = int(spec.drift) + (rng.uniform() < spec.drift - std::floor(spec.drift) ? 1 : 0);
            for (int s = 0; s < swaps; ++s) {
                const int a = rng.below(E);
                const int b = std::clamp(a + rng.below(9) - 4, 0, E - 1);
                std::swap(perm[size_t(a)], perm[size_t(b)]);
            }
            std::fill(taken.begin(), taken.end(), 0);
            auto &ids = layers[size_t(l)];
            for (int e : previous[size_t(l)])
                if (int(ids.size()) < K && rng.uniform() < reuse) {
                    ids.push_back(e);
                    taken[size_t(e)] = 1;
                }
            while (int(ids.size()) < K) {
                double total = 0;
                for (int r = 0; r < E; ++r)
                    if (!taken[size_t(perm[size_t(r)])])
                        total += weight[size_t(r)];
                double x = rng.uniform() * total;
                int pick = -1;
                for (int r = 0; r < E; ++r) {
                    const int e = perm[size_t(r)];
                    if (taken[size_t(e)])
                        continue;
                    pick = e;
                    x -= weight[size_t(r)];
                    if (x <= 0)
                        break;
                }
                ids.push_back(pick);
                taken[size_t(pick)] = 1;
            }
            std::sort(ids.begin(), ids.end()); // as routers' traces list them
            previous[size_t(l)] = ids;
        }
        if (observe)
            observe(tok, layers, rankOf);
        t.tokens.push_back(std::move(layers));
    }
    return t;
}

std::vector<double> zipfPickChance(const SyntheticTraceSpec &spec)
{
    std::vector<double> weight(size_t(std::max(0, spec.experts)));
    double total = 0;
    for (size_t r = 0; r < weight.size(); ++r)
        total += weight[r] = 1.0 / std::pow(double(r + 1), spec.zipf);
    for (double &w : weight)
        w = 1.0 - std::pow(1.0 - w / total, double(spec.topK));
    return weight;
}

RoutingTrace traceTail(const RoutingTrace &trace, size_t skip)
{
    RoutingTrace t = trace;
    t.tokens.erase(t.tokens.begin(), t.tokens.begin() + std::min(skip, t.tokens.size()));
    return t;
}

RoutingTrace traceHead(const RoutingTrace &trace, size_t keep)
{
    RoutingTrace t = trace;
    t.tokens.resize(std::min(keep, t.tokens.size()));
    return t;
}

} // namespace waste::cache
