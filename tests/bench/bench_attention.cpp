// Attention's per-token work at the releases' sizes, on one thread: the engine's kernels
// against the plain loops they replaced (kept here as the scalar reference):
//   - a decode step's multi-head latent attention (DeepSeek-V3, R1, Kimi K2, V3.2 below its
//     index_topk): 128 heads over the cached latent (512 + 64 rotated dims) at 4,096 positions
//     (model/flash_attention.hpp with the heads as its queries);
//   - a decode step's grouped-query attention (Qwen3-235B-A22B: 64 query heads of 128 sharing 4
//     kv heads) at 4,096 positions (the heads of a kv head as the queries of one attention);
//   - DeepSeek V4 Flash's attention of one token: 64 heads of 512 over 640 rows (the 128-token
//     window and the indexer's 512 compressed rows), a sink per head
//     (model/flash_attention.hpp with the heads as its queries);
//   - an indexer's scores of one token: 64 heads of 128 over 8,192 keys (V4's compressed rows at
//     32K positions; DeepSeek-V3.2's indexer has the same heads over every position)
//     (model/indexer_scores.hpp).
// Both sides see the same random inputs; the last line gives the two speedups.
//
// usage: bench_attention [--rows N] [--keys N] [--positions N] [--reps N]
#include "compute/thread_pool.hpp"
#include "model/flash_attention.hpp"
#include "model/indexer_scores.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

using namespace waste;

namespace {

float plainDot(const float *a, const float *b, int64_t n)
{
    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i)
        s += a[i] * b[i];
    return s;
}

int64_t option(int argc, char **argv, const char *name, int64_t fallback)
{
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], name) == 0)
            return std::atoll(argv[i + 1]);
    return fallback;
}

template <class F> double millis(int reps, F &&f)
{
    f(); // warm
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i)
        f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / reps;
}

} // namespace

int main(int argc, char **argv)
{
    const int64_t heads = 64, dim = 512, rowCount = option(argc, argv, "--rows", 640);
    const int64_t indexHeads = 64, indexDim = 128, keyCount = option(argc, argv, "--keys", 8192);
    const int64_t mlaHeads = 128, latent = 512, rotated = 64, positions = option(argc, argv, "--positions", 4096);
    const int reps = int(option(argc, argv, "--reps", 5));
    compute::ThreadPool pool(1);
    std::mt19937 rng(1);
    std::normal_distribution<float> g;
    std::vector<float> rowData(static_cast<size_t>(rowCount * dim)), q(static_cast<size_t>(heads * dim)),
        out(static_cast<size_t>(heads * dim)), sinks(static_cast<size_t>(heads)),
        keys(static_cast<size_t>(keyCount * indexDim)), iq(static_cast<size_t>(indexHeads * indexDim)),
        weights(static_cast<size_t>(indexHeads)), scores(static_cast<size_t>(keyCount));
    for (auto *v : {&rowData, &q, &sinks, &keys, &iq, &weights})
        for (float &x : *v)
            x = g(rng);
    std::vector<float> cache(static_cast<size_t>(positions * (latent + rotated))),
        mlaQ(static_cast<size_t>(mlaHeads * (latent + rotated))), ctx(static_cast<size_t>(mlaHeads * latent));
    for (auto *v : {&cache, &mlaQ})
        for (float &x : *v)
            x = g(rng);
    std::vector<const float *> rows(static_cast<size_t>(rowCount));
    for (int64_t r = 0; r < rowCount; ++r)
        rows[size_t(r)] = rowData.data() + r * dim;
    const float scale = 1.0f / std::sqrt(float(dim));

    const double plainAttention = millis(reps, [&] {
        std::vector<float> sc(static_cast<size_t>(rowCount));
        for (int64_t h = 0; h < heads; ++h) {
            const float *qh = q.data() + h * dim;
            float mx = sinks[size_t(h)];
            for (int64_t r = 0; r < rowCount; ++r) {
                sc[size_t(r)] = plainDot(qh, rows[size_t(r)], dim) * scale;
                mx = std::max(mx, sc[size_t(r)]);
            }
            float sum = std::exp(sinks[size_t(h)] - mx);
            float *oh = out.data() + h * dim;
            std::fill(oh, oh + dim, 0.0f);
            for (int64_t r = 0; r < rowCount; ++r) {
                const float e = std::exp(sc[size_t(r)] - mx);
                sum += e;
                for (int64_t i = 0; i < dim; ++i)
                    oh[i] += e * rows[size_t(r)][i];
            }
            for (int64_t i = 0; i < dim; ++i)
                oh[i] /= sum;
        }
    });
    const std::vector<int> at(static_cast<size_t>(heads), static_cast<int>(rowCount - 1));
    const model::CachedRow row = [&rows](int64_t r) { return rows[size_t(r)]; };
    const double kernelAttention = millis(reps, [&] {
        const model::AttentionQueries qs{q.data(), dim, int(heads), at.data(), nullptr, sinks.data()};
        model::flashAttention(qs, dim, row, row, dim, scale, nullptr, out.data(), dim);
    });

    const double plainIndexer = millis(reps, [&] {
        for (int64_t b = 0; b < keyCount; ++b) {
            float acc = 0.0f;
            for (int64_t h = 0; h < indexHeads; ++h)
                acc += std::max(plainDot(iq.data() + h * indexDim, keys.data() + b * indexDim, indexDim), 0.0f) *
                       weights[size_t(h)];
            scores[size_t(b)] = acc;
        }
    });
    const int64_t last = keyCount - 1;
    const double kernelIndexer = millis(reps, [&] {
        model::indexerScores(pool, {iq.data(), weights.data(), indexHeads, indexDim, 1, &last},
                             [&](int64_t b) { return keys.data() + b * indexDim; }, scores.data(), keyCount);
    });

    const int64_t lat = latent + rotated;
    const float mlaScale = 1.0f / std::sqrt(float(192));
    const double plainMla = millis(reps, [&] {
        std::vector<float> z(static_cast<size_t>(positions));
        for (int64_t h = 0; h < mlaHeads; ++h) {
            const float *qh = mlaQ.data() + h * lat;
            float zmax = -INFINITY;
            for (int64_t p = 0; p < positions; ++p) {
                const float *cs = cache.data() + p * lat;
                float d1 = 0.0f, d2 = 0.0f;
                for (int64_t k = 0; k < latent; ++k)
                    d1 += qh[k] * cs[k];
                for (int64_t k = 0; k < rotated; ++k)
                    d2 += qh[latent + k] * cs[latent + k];
                z[size_t(p)] = (d1 + d2) * mlaScale;
                zmax = std::max(zmax, z[size_t(p)]);
            }
            float sum = 0.0f;
            for (float &v : z)
                sum += (v = std::exp(v - zmax));
            float *ch = ctx.data() + h * latent;
            std::fill(ch, ch + latent, 0.0f);
            for (int64_t p = 0; p < positions; ++p) {
                const float al = z[size_t(p)] / sum;
                for (int64_t k = 0; k < latent; ++k)
                    ch[k] += al * cache[size_t(p * lat + k)];
            }
        }
    });
    const std::vector<int> last4k(static_cast<size_t>(mlaHeads), static_cast<int>(positions - 1));
    // Grouped-query decode: 64 query heads over 4 kv heads of 128, keys and values apart.
    const int64_t qHeads = 64, kvHeads = 4, headDim = 128, group = qHeads / kvHeads;
    std::vector<float> gq(static_cast<size_t>(qHeads * headDim)), gk(static_cast<size_t>(positions * kvHeads * headDim)),
        gv(gk.size()), go(gq.size());
    for (auto *v : {&gq, &gk, &gv})
        for (float &x : *v)
            x = g(rng);
    const float gScale = 1.0f / std::sqrt(float(headDim));
    const double plainGqa = millis(reps, [&] {
        std::vector<float> z(static_cast<size_t>(positions));
        for (int64_t h = 0; h < qHeads; ++h) {
            const float *qh = gq.data() + h * headDim;
            const int64_t off = (h / group) * headDim;
            float zmax = -INFINITY;
            for (int64_t p = 0; p < positions; ++p) {
                z[size_t(p)] = plainDot(qh, gk.data() + p * kvHeads * headDim + off, headDim) * gScale;
                zmax = std::max(zmax, z[size_t(p)]);
            }
            float sum = 0.0f;
            for (float &v : z)
                sum += (v = std::exp(v - zmax));
            float *oh = go.data() + h * headDim;
            std::fill(oh, oh + headDim, 0.0f);
            for (int64_t p = 0; p < positions; ++p)
                for (int64_t k = 0; k < headDim; ++k)
                    oh[k] += z[size_t(p)] / sum * gv[size_t(p * kvHeads * headDim + off + k)];
        }
    });
    const std::vector<int> lastGroup(static_cast<size_t>(group), static_cast<int>(positions - 1));
    const double kernelGqa = millis(reps, [&] {
        for (int64_t kv = 0; kv < kvHeads; ++kv) {
            const float *keys = gk.data() + kv * headDim, *values = gv.data() + kv * headDim;
            const int64_t row = kvHeads * headDim;
            model::flashAttention({gq.data() + kv * group * headDim, headDim, int(group), lastGroup.data(), nullptr},
                                  headDim, [&](int64_t p) { return keys + p * row; },
                                  [&](int64_t p) { return values + p * row; }, headDim, gScale, nullptr,
                                  go.data() + kv * group * headDim, headDim);
        }
    });
    const model::CachedRow latentRow = [&](int64_t p) { return cache.data() + p * lat; };
    const double kernelMla = millis(reps, [&] {
        model::flashAttention({mlaQ.data(), lat, int(mlaHeads), last4k.data(), nullptr}, lat, latentRow, latentRow, latent,
                              mlaScale, nullptr, ctx.data(), latent);
    });

    std::printf("MLA decode, %lld heads over %lld positions: plain loops %.2f ms, panel kernel %.2f ms\n",
                (long long)mlaHeads, (long long)positions, plainMla, kernelMla);
    std::printf("GQA decode, %lld query heads over %lld kv heads at %lld positions: plain loops %.2f ms, panel kernel %.2f ms\n",
                (long long)qHeads, (long long)kvHeads, (long long)positions, plainGqa, kernelGqa);
    std::printf("V4 attention, %lld heads of %lld over %lld rows: plain loops %.2f ms, panel kernel %.2f ms\n",
                (long long)heads, (long long)dim, (long long)rowCount, plainAttention, kernelAttention);
    std::printf("indexer, %lld heads of %lld over %lld keys: plain loops %.2f ms, panel kernel %.2f ms\n",
                (long long)indexHeads, (long long)indexDim, (long long)keyCount, plainIndexer, kernelIndexer);
    std::printf("one token on one thread: MLA %.1fx, GQA %.1fx, V4 attention %.1fx, indexer %.1fx faster than the plain "
                "loops\n",
                plainMla / kernelMla, plainGqa / kernelGqa, plainAttention / kernelAttention, plainIndexer / kernelIndexer);
}
