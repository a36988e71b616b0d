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

// One multiply-add after another, inline, as the engine's loops were (its portable dotF32 sums
// in the same order, but behind a function pointer, which would make the baseline slower).
inline float plainDot(const float *a, const float *b, int64_t n)
{
    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i)
        s += a[i] * b[i];
    return s;
}

// The plain loops the engine ran before: per head, q·key over the positions, a softmax (with the
// head's sink in the denominator where there is one), the values summed in position order.
template <class Key, class Value>
void plainAttention(int64_t heads, const float *q, int64_t dk, int64_t positions, const Key &key, const Value &value,
                    int64_t dv, float scale, const float *sinks, float *out)
{
    std::vector<float> z(static_cast<size_t>(positions));
    for (int64_t h = 0; h < heads; ++h) {
        float zmax = sinks ? sinks[h] : -INFINITY;
        for (int64_t p = 0; p < positions; ++p) {
            z[size_t(p)] = plainDot(q + h * dk, key(h, p), dk) * scale;
            zmax = std::max(zmax, z[size_t(p)]);
        }
        float sum = sinks ? std::exp(sinks[h] - zmax) : 0.0f;
        for (float &v : z)
            sum += (v = std::exp(v - zmax));
        float *oh = out + h * dv;
        std::fill(oh, oh + dv, 0.0f);
        for (int64_t p = 0; p < positions; ++p) {
            const float al = z[size_t(p)] / sum;
            const float *vp = value(h, p);
            for (int64_t k = 0; k < dv; ++k)
                oh[k] += al * vp[k];
        }
    }
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

    const auto rowAt = [&](int64_t, int64_t r) { return rows[size_t(r)]; };
    const double plainV4 = millis(reps, [&] {
        plainAttention(heads, q.data(), dim, rowCount, rowAt, rowAt, dim, scale, sinks.data(), out.data());
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
    const auto latentAt = [&](int64_t, int64_t p) { return cache.data() + p * lat; };
    const double plainMla = millis(reps, [&] {
        plainAttention(mlaHeads, mlaQ.data(), lat, positions, latentAt, latentAt, latent, mlaScale, nullptr, ctx.data());
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
    const auto kvAt = [&](const std::vector<float> &m) {
        return [&m, group, kvHeads, headDim](int64_t h, int64_t p) { return m.data() + (p * kvHeads + h / group) * headDim; };
    };
    const double plainGqa = millis(reps, [&] {
        plainAttention(qHeads, gq.data(), headDim, positions, kvAt(gk), kvAt(gv), headDim, gScale, nullptr, go.data());
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
                (long long)heads, (long long)dim, (long long)rowCount, plainV4, kernelAttention);
    std::printf("indexer, %lld heads of %lld over %lld keys: plain loops %.2f ms, panel kernel %.2f ms\n",
                (long long)indexHeads, (long long)indexDim, (long long)keyCount, plainIndexer, kernelIndexer);
    std::printf("one token on one thread: MLA %.1fx, GQA %.1fx, V4 attention %.1fx, indexer %.1fx faster than the plain "
                "loops\n",
                plainMla / kernelMla, plainGqa / kernelGqa, plainV4 / kernelAttention, plainIndexer / kernelIndexer);
}
