// The gated delta rule's chunked form, for bench_delta_forms only: the engine reads a
// prompt's KDA and Gated DeltaNet heads with the one-token recurrence (quant/delta_rule.hpp),
// and this is the measurement of why.
//
// The recurrence per token t (S: Dk rows × Dv columns, row = key dim; α_t = exp(g_t) per row):
//   S ← diag(α_t) S;  δ_t = β_t (v_t − Sᵀk_t);  S ← S + k_t δ_tᵀ;  o_t = Sᵀq_t
// Unrolled over a chunk from S₀, with G_t = g_1 + … + g_t (per row) and Γ_t = exp(G_t):
//   δ_t = β_t (v_t − S₀ᵀ(Γ_t⊙k_t) − Σ_{s<t} A_ts δ_s),  A_ts = Σ_c k_tc k_sc exp(G_tc − G_sc)
//   o_t = S₀ᵀ(Γ_t⊙q_t) + Σ_{s≤t} B_ts δ_s,             B_ts = Σ_c q_tc k_sc exp(G_tc − G_sc)
//   S   = diag(Γ_n) S₀ + Σ_s (k_s ⊙ exp(G_n − G_s)) δ_sᵀ
// (the WY form of the DeltaNet and KDA papers; the chunk's δ come by substitution). Every
// exponent G_t − G_s with s ≤ t is at most 0, so nothing overflows however strong the decay.
//
// Per token that is still three D × D products (S₀ᵀ against k and q, the state's update),
// 6 D² floating-point operations against the recurrence's 7 D², plus the chunk's pairwise
// weights (an exp per pair and channel). On a GPU the products run on matrix units and the
// form pays; on a CPU both forms run on the same vector units, where the recurrence already
// keeps them busy (S stays in cache): see docs/benchmarks.md.
#pragma once

#include "quant/exp_run.hpp"

#include <cstdint>
#include <cstring>

namespace waste::bench::chunk_form {

constexpr int kChunk = 16; // tokens per chunk at most (a chunk's rows of A and B are one vector)

// Floats of scratch a chunk takes.
inline size_t scratchFloats(int64_t Dk, int64_t Dv)
{
    return size_t(8 * kChunk * Dk + 2 * kChunk * kChunk + 3 * kChunk * Dv);
}

// out[r][j] += Σ_i X[r][i] · Y[i][j] for RB rows from r and NB vectors of columns from j, the
// terms in order of i, each a multiply then an add. The block's sums stay in registers over
// every i: one load of Y's row serves RB rows.
template <int L, int RB, int NB>
[[gnu::always_inline]] inline void rowBlock(float *out, int64_t os, const float *X, int64_t xs, int kdim,
                                            const float *Y, int64_t ys, int64_t j)
{
    typedef float V __attribute__((vector_size(L * sizeof(float))));
    V acc[RB][NB];
#pragma GCC unroll 8
    for (int r = 0; r < RB; ++r)
#pragma GCC unroll 8
        for (int c = 0; c < NB; ++c)
            std::memcpy(&acc[r][c], out + r * os + j + c * L, sizeof(V));
    for (int i = 0; i < kdim; ++i) {
        V y[NB];
#pragma GCC unroll 8
        for (int c = 0; c < NB; ++c)
            std::memcpy(&y[c], Y + i * ys + j + c * L, sizeof(V));
#pragma GCC unroll 8
        for (int r = 0; r < RB; ++r) {
            const float x = X[r * xs + i];
#pragma GCC unroll 8
            for (int c = 0; c < NB; ++c)
                acc[r][c] = acc[r][c] + y[c] * x;
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < RB; ++r)
#pragma GCC unroll 8
        for (int c = 0; c < NB; ++c)
            std::memcpy(out + r * os + j + c * L, &acc[r][c], sizeof(V));
}

// out (m rows, os apart) += X (m × kdim, rows xs apart) · Y (kdim × cols, rows ys apart).
template <int L>
[[gnu::always_inline]] inline void accumulateRows(float *out, int64_t os, const float *X, int64_t xs, int m, int kdim,
                                                  const float *Y, int64_t ys, int64_t cols)
{
    constexpr int NB = L == 1 ? 8 : 4, RB = 4;
    int64_t j = 0;
    for (; cols - j >= NB * L; j += NB * L) {
        int r = 0;
        for (; m - r >= RB; r += RB)
            rowBlock<L, RB, NB>(out + r * os, os, X + r * xs, xs, kdim, Y, ys, j);
        for (; r < m; ++r)
            rowBlock<L, 1, NB>(out + r * os, os, X + r * xs, xs, kdim, Y, ys, j);
    }
    for (; cols - j >= L; j += L) {
        int r = 0;
        for (; m - r >= RB; r += RB)
            rowBlock<L, RB, 1>(out + r * os, os, X + r * xs, xs, kdim, Y, ys, j);
        for (; r < m; ++r)
            rowBlock<L, 1, 1>(out + r * os, os, X + r * xs, xs, kdim, Y, ys, j);
    }
    for (; j < cols; ++j) // the last cols % L columns, one at a time in the same order
        for (int r = 0; r < m; ++r) {
            float acc = out[r * os + j];
            for (int i = 0; i < kdim; ++i)
                acc = acc + Y[i * ys + j] * X[r * xs + i];
            out[r * os + j] = acc;
        }
}

// n (1 … kChunk) tokens, rows contiguous: q, k, g (log decay, ≤ 0): n × Dk; v, o: n × Dv;
// beta: n. S goes from the state before the chunk to the state after.
template <int L>
[[gnu::always_inline]] inline void deltaChunk(float *S, const float *q, const float *k, const float *v, const float *g,
                                              const float *beta, float *o, int n, int64_t Dk, int64_t Dv,
                                              float *scratch)
{
    constexpr int P = kChunk;
    float *G = scratch;        // n × Dk: cumulative log decay
    float *Gam = G + P * Dk;   // n × Dk: exp(G)
    float *X = Gam + P * Dk;   // 2n × Dk: Γ⊙k rows, then Γ⊙q rows
    float *KeT = X + 2 * P * Dk; // Dk × P: k_s ⊙ exp(G_n − G_s), transposed
    float *GT = KeT + Dk * P;  // Dk × P: G transposed (columns past n: 0)
    float *kT = GT + Dk * P;   // Dk × P: k transposed (columns past n: 0)
    float *E = kT + Dk * P;    // Dk × P: one token's exponentials (first n × Dk of it: G_n − G_s)
    float *A = E + Dk * P;     // P × P: A_ts (s < t), 0 elsewhere
    float *B = A + P * P;      // P × P: B_ts (s ≤ t), 0 elsewhere
    float *M = B + P * P;      // 2n × Dv: S₀ᵀ(Γ⊙k), then S₀ᵀ(Γ⊙q)
    float *Dl = M + 2 * P * Dv; // n × Dv: the δ

    for (int64_t c = 0; c < Dk; ++c)
        G[c] = g[c];
    for (int t = 1; t < n; ++t)
        for (int64_t c = 0; c < Dk; ++c)
            G[t * Dk + c] = G[(t - 1) * Dk + c] + g[t * Dk + c];
    quant::expRun(G, Gam, n * Dk);
    for (int t = 0; t < n; ++t)
        for (int64_t c = 0; c < Dk; ++c) {
            X[t * Dk + c] = k[t * Dk + c] * Gam[t * Dk + c];
            X[(n + t) * Dk + c] = q[t * Dk + c] * Gam[t * Dk + c];
        }
    const float *Gn = G + (n - 1) * Dk;
    for (int s = 0; s < n; ++s)
        for (int64_t c = 0; c < Dk; ++c)
            E[s * Dk + c] = Gn[c] - G[s * Dk + c];
    quant::expRun(E, E, n * Dk);
    for (int64_t c = 0; c < Dk; ++c)
        for (int s = 0; s < P; ++s) {
            KeT[c * P + s] = s < n ? k[s * Dk + c] * E[s * Dk + c] : 0.0f;
            GT[c * P + s] = s < n ? G[s * Dk + c] : 0.0f;
            kT[c * P + s] = s < n ? k[s * Dk + c] : 0.0f;
        }

    // A's and B's row t: every s at once (a vector over s), the exponents clamped at 0 so that
    // the s after t, which are dropped, stay finite.
    for (int t = 0; t < n; ++t) {
        const float *Gt = G + t * Dk, *kt = k + t * Dk, *qt = q + t * Dk;
        for (int64_t c = 0; c < Dk; ++c)
            for (int s = 0; s < P; ++s) {
                const float d = Gt[c] - GT[c * P + s];
                E[c * P + s] = d < 0.0f ? d : 0.0f;
            }
        quant::expRun(E, E, Dk * P);
        float a[P], b[P];
        for (int s = 0; s < P; ++s)
            a[s] = b[s] = 0.0f;
        for (int64_t c = 0; c < Dk; ++c) {
            const float kc = kt[c], qc = qt[c];
            for (int s = 0; s < P; ++s) {
                const float w = kT[c * P + s] * E[c * P + s];
                a[s] = a[s] + kc * w;
                b[s] = b[s] + qc * w;
            }
        }
        for (int s = 0; s < P; ++s) {
            A[t * P + s] = s < t ? a[s] : 0.0f;
            B[t * P + s] = s <= t ? b[s] : 0.0f;
        }
    }

    // The chunk's rows against the state before it.
    for (int64_t i = 0; i < 2 * n * Dv; ++i)
        M[i] = 0.0f;
    accumulateRows<L>(M, Dv, X, Dk, 2 * n, int(Dk), S, Dv, Dv);
    // δ by substitution, token after token.
    for (int t = 0; t < n; ++t) {
        float *d = Dl + t * Dv;
        const float *mt = M + t * Dv, *vt = v + t * Dv;
        for (int64_t j = 0; j < Dv; ++j)
            d[j] = vt[j] - mt[j];
        for (int s = 0; s < t; ++s) {
            const float a = A[t * P + s];
            const float *ds = Dl + s * Dv;
            for (int64_t j = 0; j < Dv; ++j)
                d[j] = d[j] - a * ds[j];
        }
        const float bt = beta[t];
        for (int64_t j = 0; j < Dv; ++j)
            d[j] = bt * d[j];
    }
    // Outputs: the state's part, then the chunk's own (B is 0 past the diagonal, adding 0).
    for (int64_t i = 0; i < n * Dv; ++i)
        o[i] = M[n * Dv + i];
    accumulateRows<L>(o, Dv, B, P, n, n, Dl, Dv, Dv);
    // The state after the chunk.
    for (int64_t i = 0; i < Dk; ++i) {
        const float gi = Gam[(n - 1) * Dk + i];
        for (int64_t j = 0; j < Dv; ++j)
            S[i * Dv + j] = gi * S[i * Dv + j];
    }
    accumulateRows<L>(S, Dv, KeT, P, int(Dk), n, Dl, Dv, Dv);
}

} // namespace waste::bench::chunk_form
