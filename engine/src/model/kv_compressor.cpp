#include "model/kv_compressor.hpp"

#include <algorithm>
#include <cmath>

namespace waste::model {

bool compressorStep(CompressorState s, const float *k, const float *g, const float *ape, int64_t pos, float *row)
{
    const int m = s.ratio, d = s.dim, w = s.width();
    const int r = int(pos % m);
    const int slot = s.overlap() ? m + r : r;
    for (int j = 0; j < w; ++j) {
        s.keys[slot * w + j] = k[j];
        s.gates[slot * w + j] = g[j] + ape[r * w + j];
    }
    if ((pos + 1) % m != 0)
        return false;
    // The previous block takes part from the second block on (block 0's is empty: −inf gates).
    const bool previous = s.overlap() && pos + 1 > m;
    for (int j = 0; j < d; ++j) {
        float mx = -INFINITY;
        if (previous)
            for (int t = 0; t < m; ++t)
                mx = std::max(mx, s.gates[t * w + j]);
        const int cur = s.overlap() ? m : 0, off = s.overlap() ? d : 0;
        for (int t = 0; t < m; ++t)
            mx = std::max(mx, s.gates[(cur + t) * w + off + j]);
        float sum = 0.0f, acc = 0.0f;
        if (previous)
            for (int t = 0; t < m; ++t) {
                const float e = std::exp(s.gates[t * w + j] - mx);
                sum += e;
                acc += e * s.keys[t * w + j];
            }
        for (int t = 0; t < m; ++t) {
            const float e = std::exp(s.gates[(cur + t) * w + off + j] - mx);
            sum += e;
            acc += e * s.keys[(cur + t) * w + off + j];
        }
        row[j] = acc / sum;
    }
    if (s.overlap()) // this block becomes the next one's previous
        for (int t = 0; t < m; ++t) {
            std::copy(s.keys + (m + t) * w, s.keys + (m + t + 1) * w, s.keys + t * w);
            std::copy(s.gates + (m + t) * w, s.gates + (m + t + 1) * w, s.gates + t * w);
        }
    return true;
}

} // namespace waste::model
