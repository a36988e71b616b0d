// The gated delta rule (KDA's and Gated DeltaNet's recurrence) over a prompt, one head on one
// thread, in its two forms: the engine's one-token recurrence (quant/delta_rule.hpp, as a
// prompt pass runs it) and the chunked form of 16 tokens (delta_chunk_form.hpp, here only).
// Both see the same tokens (normalised q and k, per-channel log decay, beta); each is compared
// with a float64 recurrence. The issue asked prompt passes to take the chunked form; this is
// what it would cost on this CPU. The last line gives the chunked form's time per token over
// the recurrence's at the releases' head width (128).
//
// usage: bench_delta_forms [--tokens N] [--reps N]
#include "delta_chunk_form.hpp"
#include "quant/delta_rule.hpp"
#include "quant/simd.hpp"

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

using ChunkRun = void (*)(float *S, const float *q, const float *k, const float *v, const float *g, const float *beta,
                          float *o, int n, int64_t Dk, int64_t Dv, float *scratch);

void chunkGeneric(float *S, const float *q, const float *k, const float *v, const float *g, const float *beta, float *o,
                  int n, int64_t Dk, int64_t Dv, float *scratch)
{
    bench::chunk_form::deltaChunk<1>(S, q, k, v, g, beta, o, n, Dk, Dv, scratch);
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) void chunkAvx2(float *S, const float *q, const float *k, const float *v,
                                                    const float *g, const float *beta, float *o, int n, int64_t Dk,
                                                    int64_t Dv, float *scratch)
{
    bench::chunk_form::deltaChunk<8>(S, q, k, v, g, beta, o, n, Dk, Dv, scratch);
}

__attribute__((target("avx512f,fma"))) void chunkAvx512(float *S, const float *q, const float *k, const float *v,
                                                         const float *g, const float *beta, float *o, int n,
                                                         int64_t Dk, int64_t Dv, float *scratch)
{
    bench::chunk_form::deltaChunk<16>(S, q, k, v, g, beta, o, n, Dk, Dv, scratch);
}
#endif

ChunkRun chunkForThisCpu()
{
#if defined(__x86_64__)
    if (quant::activeSimd() == quant::SimdLevel::Avx512)
        return chunkAvx512;
    if (quant::activeSimd() == quant::SimdLevel::Avx2)
        return chunkAvx2;
#endif
    return chunkGeneric;
}

struct Tokens {
    int64_t T, Dk, Dv;
    std::vector<float> q, k, v, g, beta;
};

// Normalised q (scaled by 1/sqrt(Dk)) and k as the layers feed them; log decays mostly gentle
// (down to −0.1 a token) with one channel in ten down to −5, as KDA's bounded gate allows.
Tokens tokens(int64_t T, int64_t Dk, int64_t Dv)
{
    Tokens x{T, Dk, Dv, std::vector<float>(size_t(T * Dk)), std::vector<float>(size_t(T * Dk)),
             std::vector<float>(size_t(T * Dv)), std::vector<float>(size_t(T * Dk)), std::vector<float>(size_t(T))};
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1, 1), unit(0, 1);
    for (int64_t t = 0; t < T; ++t) {
        double sq = 0, sk = 0;
        for (int64_t c = 0; c < Dk; ++c) {
            float &qc = x.q[size_t(t * Dk + c)], &kc = x.k[size_t(t * Dk + c)];
            qc = u(rng);
            kc = u(rng);
            sq += double(qc) * qc;
            sk += double(kc) * kc;
            x.g[size_t(t * Dk + c)] = unit(rng) < 0.9f ? -0.1f * unit(rng) : -5.0f * unit(rng);
        }
        for (int64_t c = 0; c < Dk; ++c) {
            x.q[size_t(t * Dk + c)] = float(x.q[size_t(t * Dk + c)] / std::sqrt(sq * double(Dk)));
            x.k[size_t(t * Dk + c)] = float(x.k[size_t(t * Dk + c)] / std::sqrt(sk));
        }
        for (int64_t j = 0; j < Dv; ++j)
            x.v[size_t(t * Dv + j)] = u(rng);
        x.beta[size_t(t)] = unit(rng);
    }
    return x;
}

std::vector<double> float64Outputs(const Tokens &x)
{
    const int64_t Dk = x.Dk, Dv = x.Dv;
    std::vector<double> S(size_t(Dk * Dv), 0.0), o(size_t(x.T * Dv), 0.0), u(size_t(Dv), 0.0);
    for (int64_t t = 0; t < x.T; ++t) {
        std::fill(u.begin(), u.end(), 0.0);
        for (int64_t i = 0; i < Dk; ++i)
            for (int64_t j = 0; j < Dv; ++j) {
                double &s = S[size_t(i * Dv + j)];
                s *= std::exp(double(x.g[size_t(t * Dk + i)]));
                u[size_t(j)] += s * x.k[size_t(t * Dk + i)];
            }
        for (int64_t j = 0; j < Dv; ++j)
            u[size_t(j)] = x.beta[size_t(t)] * (x.v[size_t(t * Dv + j)] - u[size_t(j)]);
        for (int64_t i = 0; i < Dk; ++i)
            for (int64_t j = 0; j < Dv; ++j) {
                double &s = S[size_t(i * Dv + j)];
                s += x.k[size_t(t * Dk + i)] * u[size_t(j)];
                o[size_t(t * Dv + j)] += s * x.q[size_t(t * Dk + i)];
            }
    }
    return o;
}

double relativeGap(const std::vector<float> &o, const std::vector<double> &ref)
{
    double gap = 0, largest = 0;
    for (size_t i = 0; i < o.size(); ++i) {
        gap = std::max(gap, std::fabs(double(o[i]) - ref[i]));
        largest = std::max(largest, std::fabs(ref[i]));
    }
    return gap / std::max(largest, 1e-30);
}

double seconds(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

int main(int argc, char **argv)
{
    int64_t T = 2048;
    int reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--tokens"))
            T = std::max(16, std::atoi(argv[i + 1]));
        else if (!std::strcmp(argv[i], "--reps"))
            reps = std::max(1, std::atoi(argv[i + 1]));
    }
    const quant::DeltaRuleStep step = quant::deltaRule();
    const ChunkRun chunk = chunkForThisCpu();
    std::printf("level %s, %lld tokens a head, one thread, best of %d\n", quant::simdName(quant::activeSimd()),
                static_cast<long long>(T), reps);
    std::printf("%-10s %14s %14s %8s %12s %12s\n", "Dk x Dv", "recurrence", "chunks of 16", "ratio", "gap (rec.)",
                "gap (chunks)");
    double ratio128 = 0;
    for (const auto &[Dk, Dv] : {std::pair<int64_t, int64_t>{64, 64}, {128, 128}, {128, 256}}) {
        const Tokens x = tokens(T, Dk, Dv);
        const std::vector<double> ref = float64Outputs(x);
        std::vector<float> S(size_t(Dk * Dv)), oRec(size_t(T * Dv)), oChunk(size_t(T * Dv)), decay(size_t(Dk), 0.0f),
            u(size_t(Dv), 0.0f), scratch(bench::chunk_form::scratchFloats(Dk, Dv));
        double rec = 1e30, chunked = 1e30;
        for (int r = 0; r < reps; ++r) { // in turns: the machine's speed drifts
            std::fill(S.begin(), S.end(), 0.0f);
            auto t0 = std::chrono::steady_clock::now();
            for (int64_t t = 0; t < T; ++t) {
                quant::expRun(x.g.data() + t * Dk, decay.data(), Dk); // as a layer turns its log decay into factors
                step(S.data(), x.q.data() + t * Dk, x.k.data() + t * Dk, x.v.data() + t * Dv, decay.data(),
                     x.beta[size_t(t)], u.data(), oRec.data() + t * Dv, Dk, Dv);
            }
            rec = std::min(rec, seconds(t0));
            std::fill(S.begin(), S.end(), 0.0f);
            t0 = std::chrono::steady_clock::now();
            for (int64_t t = 0; t < T; t += bench::chunk_form::kChunk) {
                const int n = int(std::min<int64_t>(bench::chunk_form::kChunk, T - t));
                chunk(S.data(), x.q.data() + t * Dk, x.k.data() + t * Dk, x.v.data() + t * Dv, x.g.data() + t * Dk,
                      x.beta.data() + t, oChunk.data() + t * Dv, n, Dk, Dv, scratch.data());
            }
            chunked = std::min(chunked, seconds(t0));
        }
        const double ratio = chunked / rec;
        if (Dk == 128 && Dv == 128)
            ratio128 = ratio;
        char shape[64];
        std::snprintf(shape, sizeof shape, "%lldx%lld", static_cast<long long>(Dk), static_cast<long long>(Dv));
        std::printf("%-10s %11.2f us %11.2f us %7.2fx %12.2e %12.2e\n", shape, rec / double(T) * 1e6,
                    chunked / double(T) * 1e6, ratio, relativeGap(oRec, ref), relativeGap(oChunk, ref));
    }
    std::printf("chunked form (16 tokens) at 128 x 128: %.2fx the recurrence's time per token\n", ratio128);
    return 0;
}
