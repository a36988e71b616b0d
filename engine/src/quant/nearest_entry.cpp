// Codebook preparation for the nearest-entry search and the choice of kernel level.
#include "quant/nearest_entry.hpp"

#include <cmath>

namespace waste::quant {

NearestTable prepareNearestTable(const float *values, int entries) {
    NearestTable t;
    t.entries = entries;
    t.m2.resize(static_cast<size_t>(entries) * kNearestDim);
    t.norm.resize(static_cast<size_t>(entries));
    for (int c = 0; c < entries; ++c) {
        const float *v = values + static_cast<size_t>(c) * kNearestDim;
        // Written as explicit fused multiply-adds so that no compiler (or target that
        // contracts by default) rounds the norm differently from one build to the next.
        float n = 0.0f;
        for (int d = 0; d < kNearestDim; ++d) {
            n = std::fma(v[d], v[d], n);
            t.m2[static_cast<size_t>(c) * kNearestDim + d] = -2.0f * v[d]; // a power of two: exact
        }
        t.norm[static_cast<size_t>(c)] = n;
    }
    return t;
}

const NearestKernels &nearestFor(SimdLevel lvl) {
    if (lvl == SimdLevel::Avx512 && avx512Nearest()) return *avx512Nearest();
    if (lvl == SimdLevel::Avx2 && avx2Nearest()) return *avx2Nearest();
    return scalarNearest();
}

const NearestKernels &nearest() { return nearestFor(activeSimd()); }

} // namespace waste::quant
