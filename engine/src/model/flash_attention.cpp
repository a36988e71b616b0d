#include "model/flash_attention.hpp"

#include "quant/panel_decode_levels.hpp"
#include "quant/panel_gemm.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace waste::model {

namespace {

// e^x for the scores less their maximum (x <= 0; -inf gives 0), within 2 ulp of expf: 2^n·p(r)
// with r = x - n·ln 2 in [-ln2/2, ln2/2] and Cephes' polynomial for p. Written in plain
// float operations, so the loops over a block's 64 scores vectorise and every lane rounds as
// the scalar code does (this file is compiled with -ffp-contract=off and -O3). std::exp, one
// call per score, was a quarter of a long prompt's time.
inline float expScore(float x)
{
    x = std::max(x, -87.0f); // e^-87 ~ 1.6e-38: the smallest normal float, and -inf's stand-in
    const float magic = 12582912.0f; // 1.5 * 2^23: adding it rounds to an integer
    const float n = (x * 1.44269504088896341f + magic) - magic;
    const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    const float scale = std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
    return p * scale;
}

// The block's positions [s0, s0 + inBlock) as a panel k-major (panel[k * 64 + j] = row j's
// k-th value, 0 past inBlock), eight positions by eight values at a time: each row is read
// along its values and each panel row written eight floats at once, where a copy position by
// position wrote one float every 256 bytes.
inline void keysPanel(const CachedRow &key, int64_t s0, int64_t inBlock, int64_t dk, float *panel)
{
    constexpr int64_t B = quant::kPanelRows;
    static const float zeros[8] = {};
    const float *rows[B];
    for (int64_t j = 0; j < B; ++j)
        rows[j] = j < inBlock ? key(s0 + j) : nullptr;
    // A whole block whose rows lie at one stride (a cache's rows, as every caller's are): the
    // panel decoders' 16-row transpose where the level has one.
    const quant::PanelTranspose16 fast = quant::panelTranspose16();
    const int64_t stride = inBlock == B ? rows[1] - rows[0] : 0, k8 = dk / 8 * 8;
    bool strided = fast && stride >= dk;
    for (int64_t j = 2; j < B && strided; ++j)
        strided = rows[j] - rows[j - 1] == stride;
    if (strided) {
        for (int64_t j0 = 0; j0 < B; j0 += 16)
            fast(rows[j0], stride, k8, panel + j0);
        for (int64_t k = k8; k < dk; ++k)
            for (int64_t j = 0; j < B; ++j)
                panel[k * B + j] = rows[j][k];
        return;
    }
    for (int64_t j0 = 0; j0 < B; j0 += 8)
        for (int64_t k0 = 0; k0 < dk; k0 += 8) {
            const int64_t kw = std::min<int64_t>(8, dk - k0);
            float t[8][8];
            for (int64_t r = 0; r < 8; ++r) {
                const float *src = rows[j0 + r] ? rows[j0 + r] + k0 : zeros;
                for (int64_t i = 0; i < kw; ++i)
                    t[i][r] = src[i];
            }
            for (int64_t i = 0; i < kw; ++i)
                for (int64_t r = 0; r < 8; ++r)
                    panel[(k0 + i) * B + j0 + r] = t[i][r];
        }
}

} // namespace

// Cloned for the wider vector units: the softmax's loops and the panels' copies are plain
// float operations element by element (contraction off), so every clone rounds as the
// baseline does and the choice among them changes no bit.
#if defined(__x86_64__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void flashAttention(const AttentionQueries &queries, int64_t dk, const CachedRow &key, const CachedRow &value,
                    int64_t dv, float scale, const float *sink, float *out, int64_t outStride)
{
    constexpr int B = quant::kPanelRows; // positions a block
    const int m = queries.count;
    if (m <= 0)
        return;
    const float inf = std::numeric_limits<float>::infinity();
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = -1;
    for (int t = 0; t < m; ++t) {
        lo = std::min<int64_t>(lo, queries.first ? queries.first[t] : 0);
        hi = std::max<int64_t>(hi, queries.pos[t]);
    }
    const quant::PanelGemm gemm = quant::panelGemm();
    std::vector<float> keys(size_t(dk) * B), values(size_t(B) * B), z(size_t(m) * B), p(size_t(m) * B),
        part(size_t(m) * B), runMax(size_t(m), sink ? *sink : -inf), runSum(size_t(m), sink ? 1.0f : 0.0f);
    if (queries.sinks)
        for (int t = 0; t < m; ++t) {
            runMax[size_t(t)] = queries.sinks[t];
            runSum[size_t(t)] = 1.0f;
        }
    for (int t = 0; t < m; ++t)
        std::fill(out + t * outStride, out + t * outStride + dv, 0.0f);
    // Queries in order of position and of first position (a pass's run of tokens, a token's
    // heads): a block's visible queries are then one range [tLo, tHi), and the products and
    // loops run over it alone. A prompt's pass is one call per run, so without this the
    // products of every block took every query, half of them wholly masked. A masked query
    // gains nothing from a block (its weights are 0), so its values are the same bits.
    bool ordered = true;
    for (int t = 1; t < m && ordered; ++t)
        ordered = queries.pos[t] >= queries.pos[t - 1] && (!queries.first || queries.first[t] >= queries.first[t - 1]);
    int tLo = 0, tHi = m;
    for (int64_t s0 = lo / B * B; s0 <= hi; s0 += B) {
        if (ordered) {
            while (tLo < m && queries.pos[tLo] < s0)
                ++tLo; // it sees nothing here or later
            tHi = m;
            if (queries.first)
                tHi = int(std::lower_bound(queries.first, queries.first + m, s0 + B) - queries.first);
            if (tLo >= tHi)
                continue;
        }
        const int mv = tHi - tLo; // the queries that may see this block
        const int64_t inBlock = std::min<int64_t>(B, hi + 1 - s0); // positions written so far
        // The block's keys as a panel (k-major), positions past the last query's as 0.
        keysPanel(key, s0, inBlock, dk, keys.data());
        gemm(keys.data(), dk, queries.q + tLo * queries.stride, queries.stride, mv, z.data() + size_t(tLo) * B, B, B);
        // Each query's visible scores, its running maximum and sum, its weights p.
        bool any = false;
        for (int t = tLo; t < tHi; ++t) {
            const int64_t first = queries.first ? queries.first[t] : 0, last = queries.pos[t];
            float *zt = z.data() + size_t(t) * B, *pt = p.data() + size_t(t) * B;
            // Visible: block offsets [jLo, jHi). Three plain loops and an eight-lane maximum
            // (exact in any order) vectorise where one loop with the mask and a running max did not.
            const int64_t jLo = std::clamp<int64_t>(first - s0, 0, B), jHi = std::clamp<int64_t>(last + 1 - s0, 0, B);
            for (int64_t j = 0; j < jLo; ++j)
                zt[j] = -inf;
            for (int64_t j = jLo; j < jHi; ++j)
                zt[j] = zt[j] * scale;
            for (int64_t j = jHi; j < B; ++j)
                zt[j] = -inf;
            float lanes[8] = {-inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf};
            for (int64_t j = 0; j < B; j += 8)
                for (int l = 0; l < 8; ++l)
                    lanes[l] = lanes[l] < zt[j + l] ? zt[j + l] : lanes[l];
            float blockMax = -inf;
            for (float v : lanes)
                blockMax = std::max(blockMax, v);
            if (blockMax == -inf) {
                std::fill(pt, pt + B, 0.0f);
                continue;
            }
            any = true;
            const float newMax = std::max(runMax[size_t(t)], blockMax);
            const float keep = runMax[size_t(t)] == -inf ? 0.0f : expScore(runMax[size_t(t)] - newMax);
            if (keep != 1.0f) {
                float *ot = out + t * outStride;
                for (int64_t c = 0; c < dv; ++c)
                    ot[c] *= keep;
                runSum[size_t(t)] *= keep;
            }
            for (int64_t j = 0; j < B; ++j) {
                const float e = expScore(zt[j] - newMax); // computed for every lane: vectorises
                pt[j] = zt[j] == -inf ? 0.0f : e;
            }
            runMax[size_t(t)] = newMax;
        }
        if (!any)
            continue;
        // Each query's running sum gains the block's weights in order of position (a query
        // that sees none adds zeros: the same sum). Eight queries' sums go side by side, each
        // its own chain of adds: one query's 64 adds in a row waited on each other, a third of
        // the time outside the products on a pass's narrow heads.
        int t = tLo;
        for (; t + 8 <= tHi; t += 8) {
            float sums[8];
            for (int i = 0; i < 8; ++i)
                sums[i] = runSum[size_t(t + i)];
            for (int64_t j = 0; j < B; ++j)
                for (int i = 0; i < 8; ++i)
                    sums[i] += p[size_t(t + i) * B + size_t(j)];
            for (int i = 0; i < 8; ++i)
                runSum[size_t(t + i)] = sums[i];
        }
        for (; t < tHi; ++t)
            for (int64_t j = 0; j < B; ++j)
                runSum[size_t(t)] += p[size_t(t) * B + size_t(j)];
        // The weighted values, 64 of their dims at a time.
        for (int64_t c0 = 0; c0 < dv; c0 += B) {
            const int64_t width = std::min<int64_t>(B, dv - c0);
            for (int64_t j = 0; j < B; ++j) {
                float *dst = values.data() + j * B;
                const int64_t filled = j < inBlock ? width : 0;
                if (filled > 0)
                    std::copy_n(value(s0 + j) + c0, filled, dst);
                std::fill(dst + filled, dst + B, 0.0f);
            }
            gemm(values.data(), B, p.data() + size_t(tLo) * B, B, mv, part.data() + size_t(tLo) * B, B, width);
            for (int t = tLo; t < tHi; ++t) {
                float *ot = out + t * outStride + c0;
                const float *pt = part.data() + size_t(t) * B;
                for (int64_t c = 0; c < width; ++c)
                    ot[c] += pt[c];
            }
        }
    }
    for (int t = 0; t < m; ++t) {
        float *ot = out + t * outStride;
        const float total = runSum[size_t(t)];
        for (int64_t c = 0; c < dv; ++c)
            ot[c] /= total;
    }
}

} // namespace waste::model
