// The prompt pass's parts beside its products, timed (plan/pass_calibration.hpp). Each runs the
// model's own code (model/flash_attention, the KDA head step of model/kda_head.hpp, model/ops) on
// arbitrary inputs, split over the pool as a pass splits it.
#include "plan/pass_calibration.hpp"

#include "compute/thread_pool.hpp"
#include "model/flash_attention.hpp"
#include "model/kda_head.hpp"
#include "model/ops.hpp"
#include "quant/delta_rule.hpp"
#include "quant/kernel_calibration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace waste::plan {

void timePassParts(ComputeCalibration &c, int threads)
{
    compute::ThreadPool pool(threads);
    std::mt19937 rng(4242);
    std::vector<float> x(1 << 16);
    for (auto &v : x)
        v = float(int(rng() % 200) - 100) * 0.01f;

    // A pass's causal attention (model/flash_attention.hpp): per thread the queries of its
    // heads over a sequence's cached rows, blocked, with the online softmax. Timed at an MLA
    // latent's widths (scores 576, values 512, as Kimi and DeepSeek attend) and a narrow
    // head's (80 and 64); units: score plus value width; seconds per (query, key) pair and
    // head, the calls split over the pool as the heads of a pass are.
    for (auto [dk, dv] : {std::pair<int64_t, int64_t>{80, 64}, {576, 512}}) {
        const int64_t keys = 1024, queries = 128, calls = 8;
        std::vector<float> cache(size_t(keys * dk)), qs(size_t(calls * queries * dk)), outs(size_t(calls * queries * dv));
        for (size_t i = 0; i < cache.size(); ++i)
            cache[i] = x[i % x.size()] * 0.1f;
        for (size_t i = 0; i < qs.size(); ++i)
            qs[i] = x[(i * 7) % x.size()] * 0.1f;
        std::vector<int> at(size_t(queries), int(keys - 1)); // each query sees every row
        const float *rows = cache.data();
        const model::CachedRow row = [rows, dk](int64_t p) { return rows + p * dk; };
        const double s = typicalSeconds([&] {
            pool.forRange(calls, 1, [&](int64_t c0, int64_t c1) {
                for (int64_t k = c0; k < c1; ++k)
                    model::flashAttention({qs.data() + k * queries * dk, dk, int(queries), at.data(), nullptr}, dk, row,
                                          row, dv, 0.05f, nullptr, outs.data() + k * queries * dv, dv);
            });
        });
        c.timings.push_back({"ATTN-score", dk + dv, s / double(calls * queries * keys)});
    }

    // What a pass does per token and layer besides its products and attention (norms,
    // residual sums, routing, the gathers and weighted sums of the expert users) is mostly
    // work over the hidden width: priced in units of one RMSNorm and one residual add of a
    // token's hidden vector, tokens split over the pool. Units: hidden width; seconds per token
    // ("VEC-token"; estimatePrefill counts kTokenVectorWork of it per token and layer).
    for (const int64_t H : {int64_t(256), int64_t(1024), int64_t(4096)}) {
        const int64_t T = 256;
        std::vector<float> a(size_t(T * H)), b(size_t(T * H)), w(size_t(H), 1.0f);
        for (size_t i = 0; i < a.size(); ++i)
            a[i] = x[i % x.size()];
        const double s = typicalSeconds([&] {
            pool.forRange(T, pool.grainFor(T, 2 * H), [&](int64_t t0, int64_t t1) {
                for (int64_t t = t0; t < t1; ++t) {
                    float *at = a.data() + t * H, *bt = b.data() + t * H;
                    model::rmsNorm(at, w.data(), bt, H, 1e-5f);
                    for (int64_t i = 0; i < H; ++i)
                        at[i] = at[i] * 0.5f + bt[i] * 0.5f; // bounded: the repeats stay finite
                }
            });
        });
        c.timings.push_back({"VEC-token", H, s / double(T)});
    }

    // A linear-attention layer reads a prompt token by token, whatever the pass: per run and head
    // the short convolutions (model::kdaHeadConvolve), then model::kdaHeadTokens (gates with a
    // softplus and an exp per channel, normalisations, the delta-rule step on the head's D x D
    // state and the gated output norm), as Forward::kda runs them, heads split over the pool. Units: head dim D; seconds per token and head ("KDA-token"), at the two head
    // widths the releases use.
    for (const int64_t D : {int64_t(64), int64_t(128)}) {
        const int64_t H = 16, T = 32, K = 4;
        const quant::DeltaRuleStep step = quant::deltaRule();
        std::vector<float> state(size_t(H * D * D), 0.0f), taps(size_t(D * K), 0.25f), rings(size_t(H * 3 * D * (K - 1)));
        std::vector<float> in(size_t(T * 4 * D)), norm(size_t(D), 1.0f), dtBias(size_t(D), 0.0f);
        for (size_t i = 0; i < in.size(); ++i)
            in[i] = x[i % x.size()];
        const double s = typicalSeconds([&] {
            pool.forRange(H, 1, [&](int64_t h0, int64_t h1) {
                const size_t d = static_cast<size_t>(D);
                std::vector<float> rows(in.size()), f(size_t(T) * d), o(in.size()),
                    scratch(size_t(model::kdaHeadTokensScratch(D, int(T))));
                for (int64_t h = h0; h < h1; ++h) {
                    float *ring = rings.data() + h * 3 * D * (K - 1);
                    model::KdaHead head;
                    head.D = D;
                    head.K = int(K);
                    head.qTaps = head.kTaps = head.vTaps = taps.data();
                    head.qRing = ring;
                    head.kRing = ring + D * (K - 1);
                    head.vRing = ring + 2 * D * (K - 1);
                    head.S = state.data() + h * D * D;
                    head.dtBias = dtBias.data();
                    head.A = 0.5f;
                    head.qScale = 1.0f / std::sqrt(float(D));
                    head.oNorm = norm.data();
                    head.eps = 1e-5f;
                    head.step = step;
                    // As a pass runs a head: the run's convolutions, then each token's rest.
                    std::copy(in.begin(), in.end(), rows.begin());
                    model::kdaHeadConvolve(head, rows.data(), rows.data() + D, rows.data() + 2 * D, 4 * D, T);
                    // Row t: q, k, v, then the decay gate's projection (its first value beta's
                    // logit); the output gate's projection is the raw row's first D values.
                    for (int64_t t = 0; t < T; ++t)
                        std::copy_n(in.data() + t * 4 * D + 3 * D, D, f.data() + t * D);
                    const model::KdaTokenRows at{.q = rows.data(), .k = rows.data() + D, .v = rows.data() + 2 * D,
                                                 .o = o.data(), .stride = 4 * D, .f = f.data(), .fStride = D,
                                                 .gate = in.data(), .gStride = 4 * D, .betaLogit = in.data() + 3 * D,
                                                 .bStride = 4 * D};
                    model::kdaHeadTokens(head, at, int(T), scratch.data());
                }
            });
        });
        c.timings.push_back({"KDA-token", D, s / double(H * T)});
    }
}

} // namespace waste::plan
