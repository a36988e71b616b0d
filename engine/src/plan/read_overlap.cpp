#include "plan/read_overlap.hpp"

#include <algorithm>
#include <cmath>

namespace waste::plan {

namespace {

double binomial(int n, int i, double p)
{
    double c = 1;
    for (int j = 1; j <= i; ++j)
        c = c * double(n - i + j) / double(j);
    return c * std::pow(p, i) * std::pow(1 - p, n - i);
}

} // namespace

double landing(const LayerReads &r, int j) { return r.latency + double(j - 1) * r.recordSeconds; }

double layerStall(const LayerReads &r, int misses, int early)
{
    const int k = std::max(r.topK, misses + early);
    // Early reads were issued during the previous layer: whatever of them outlasts that
    // layer's compute is waited for before this one's records are consumed (a simplification:
    // the engine consumes them as they land, like the demand reads).
    const double earlyWait = early > 0 ? std::max(0.0, landing(r, early) - r.layerSeconds) : 0;
    // Hits, and early reads, computed first while the demand reads are in flight; then each
    // demand read when it has landed and the previous record is done.
    double t = r.hookSeconds + earlyWait + double(k - misses) * r.expertSeconds;
    for (int j = 1; j <= misses; ++j)
        t = std::max(t, landing(r, j)) + r.expertSeconds;
    return t - (r.hookSeconds + double(k) * r.expertSeconds);
}

double expectedLayerStall(const LayerReads &r)
{
    const int k = std::max(r.topK, 0);
    const double miss = std::clamp(1 - r.hitRate, 0.0, 1.0);
    const double share = std::clamp(r.lookaheadShare, 0.0, 1.0);
    double sum = 0;
    for (int m = 1; m <= k; ++m) {
        const double pm = binomial(k, m, miss);
        if (pm <= 0)
            continue;
        for (int e = 0; e <= m; ++e) {
            const double pe = share > 0 ? binomial(m, e, share) : (e == 0 ? 1.0 : 0.0);
            if (pe > 0)
                sum += pm * pe * layerStall(r, m - e, e);
        }
    }
    return sum;
}

} // namespace waste::plan
