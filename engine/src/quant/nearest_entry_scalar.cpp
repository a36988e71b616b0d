// The nearest-entry search, one vector at a time: the definition the SIMD sets must
// reproduce bit for bit (quant/nearest_entry.hpp). std::fma rounds once, as the SIMD
// sets' fused multiply-adds do, on every CPU (in software where the CPU has no FMA).
#include "quant/nearest_entry.hpp"

#include <cmath>
#include <limits>

namespace waste::quant {
namespace {

void search(const float *m2, const float *norm, int entries, const float *x, size_t n, int32_t *idx, float *part) {
    for (size_t i = 0; i < n; ++i) {
        const float *v = x + i * kNearestDim;
        float best = std::numeric_limits<float>::infinity();
        int32_t bestIdx = 0;
        for (int c = 0; c < entries; ++c) {
            const float *m = m2 + static_cast<size_t>(c) * kNearestDim;
            float acc = norm[c];
            for (int d = 0; d < kNearestDim; ++d) acc = std::fma(v[d], m[d], acc);
            if (acc < best) {
                best = acc;
                bestIdx = c;
            }
        }
        idx[i] = bestIdx;
        if (part) part[i] = best;
    }
}

const NearestKernels kScalar{search};

} // namespace

const NearestKernels &scalarNearest() { return kScalar; }

} // namespace waste::quant
