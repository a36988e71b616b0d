// Every SIMD kernel this CPU supports agrees with the scalar kernels within 1e-5
// relative (a whole eval: tst_simd_eval); the delta rule's levels give its scalar result bit
// for bit. NEON's lutRow is held to bit-identity (its
// entries are computed in the scalar order; see quant/kernels_neon.cpp).
#include <gtest/gtest.h>

#include "quant/delta_rule.hpp"
#include "quant/short_conv4.hpp"
#include "quant/simd.hpp"

#include <cmath>
#include <cstring>
#include <random>

using waste::quant::Kernels;
using waste::quant::SimdLevel;

namespace {

std::vector<SimdLevel> supported()
{
    std::vector<SimdLevel> out;
    for (SimdLevel l : {SimdLevel::Avx2, SimdLevel::Avx512, SimdLevel::Neon})
        if (waste::quant::simdSupported(l))
            out.push_back(l);
    return out;
}

// |a - b| <= 1e-5 * Σ|terms| (the scale the rounding error lives on).
void expectClose(float a, float b, double magnitude, const char *what)
{
    EXPECT_LE(std::fabs(double(a) - double(b)), 1e-5 * magnitude + 1e-30) << what << ": " << a << " vs " << b;
}

} // namespace

TEST(Simd, KernelsAgreeWithScalar)
{
    const auto levels = supported();
    if (levels.empty())
        GTEST_SKIP() << "no SIMD level on this CPU";
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> uf(-2.0f, 2.0f);
    std::uniform_int_distribution<int> ub(0, 255);
    const Kernels &s = waste::quant::scalarKernels();
    for (SimdLevel lvl : levels) {
        const Kernels &k = waste::quant::kernelsFor(lvl);
        for (int64_t n : {1, 7, 8, 15, 16, 31, 100, 128, 200, 328, 2304}) {
            for (int64_t g : {32, 64, 128}) {
                std::vector<float> x(n), sc((n + g - 1) / g);
                std::vector<uint8_t> q(((n + g - 1) / g) * g);
                for (auto &v : x)
                    v = uf(rng);
                for (auto &v : sc)
                    v = uf(rng) * 0.01f;
                for (auto &v : q)
                    v = static_cast<uint8_t>(ub(rng));
                double mag8 = 0, mag4 = 0;
                for (int64_t i = 0; i < n; ++i) {
                    mag8 += std::fabs(double(int8_t(q[i])) * x[i] * sc[i / g]);
                    mag4 += std::fabs(8.0 * x[i] * sc[i / g]);
                }
                expectClose(k.rowQ8(q.data(), sc.data(), x.data(), n, g), s.rowQ8(q.data(), sc.data(), x.data(), n, g),
                            mag8, "rowQ8");
                expectClose(k.rowQ4(q.data(), sc.data(), x.data(), n, g), s.rowQ4(q.data(), sc.data(), x.data(), n, g),
                            mag4, "rowQ4");
                double magf = 0;
                for (int64_t i = 0; i < n; ++i)
                    magf += std::fabs(double(x[i]) * x[i]);
                expectClose(k.dotF32(x.data(), x.data(), n), s.dotF32(x.data(), x.data(), n), magf, "dotF32");
            }
        }
        // Lookup-table rows.
        std::vector<float> book(256 * 8), x8(8), a(256), b(256);
        for (auto &v : book)
            v = uf(rng);
        for (auto &v : x8)
            v = uf(rng);
        k.lutRow(x8.data(), book.data(), 256, a.data());
        s.lutRow(x8.data(), book.data(), 256, b.data());
        if (lvl == SimdLevel::Neon)
            EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << "NEON lutRow not bit-identical";
        for (int c = 0; c < 256; ++c) {
            double mag = 0;
            for (int d = 0; d < 8; ++d)
                mag += std::fabs(double(x8[d]) * book[(c / 16) * 128 + d * 16 + c % 16]);
            expectClose(a[c], b[c], mag, "lutRow");
        }
    }
}

// The trunk's batched 4-bit rows (rowQ4Many: one row for several inputs, each weight
// unpacked once) give every input exactly what rowQ4 gives it alone, bit for bit, at every
// level that has them: for 1 to 9 inputs (blocks of 4 and the rests), rows with and without
// a tail past the last 16 weights, odd group sizes and strided inputs and outputs. A batched
// decode step's logits rest on this (tst_batch checks whole steps).
TEST(Simd, BatchedQ4RowsEqualOneInputAtATime)
{
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> uf(-2.0f, 2.0f);
    std::uniform_int_distribution<int> ub(0, 255);
    int checked = 0;
    for (SimdLevel l : {SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512, SimdLevel::Neon}) {
        if (!waste::quant::simdSupported(l))
            continue;
        const Kernels &k = waste::quant::kernelsFor(l);
        if (!k.rowQ4Many)
            continue;
        for (const auto &[n, g] : {std::pair<int64_t, int64_t>{512, 32}, {512, 64}, {200, 48}, {99, 32}, {30, 30}, {64, 50}}) {
            const int64_t groups = (n + g - 1) / g, xStride = n + 5, yStride = 3;
            std::vector<uint8_t> q(static_cast<size_t>((n + 1) / 2));
            std::vector<float> sc(static_cast<size_t>(groups)), x(static_cast<size_t>(9 * xStride));
            for (auto &b : q)
                b = uint8_t(ub(rng));
            for (auto &s : sc)
                s = uf(rng);
            for (auto &v : x)
                v = uf(rng);
            for (int64_t count = 1; count <= 9; ++count) {
                std::vector<float> y(static_cast<size_t>(count * yStride), -1.0f);
                k.rowQ4Many(q.data(), sc.data(), x.data(), xStride, count, n, g, y.data(), yStride);
                for (int64_t j = 0; j < count; ++j) {
                    const float alone = k.rowQ4(q.data(), sc.data(), x.data() + j * xStride, n, g);
                    EXPECT_EQ(0, std::memcmp(&alone, &y[size_t(j * yStride)], sizeof(float)))
                        << waste::quant::simdName(l) << " n " << n << " g " << g << " input " << j << " of " << count
                        << ": " << y[size_t(j * yStride)] << " vs " << alone;
                }
                ++checked;
            }
        }
    }
    if (checked == 0)
        GTEST_SKIP() << "no kernel set on this CPU has batched 4-bit rows";
}

// The delta rule (KDA's and Gated DeltaNet's recurrence) at every level gives the scalar
// level's state, δ and output bit for bit, over several tokens on one state: square heads
// as KDA's (48, 128), Gated DeltaNet's unequal key and value dims, column counts that leave
// every remainder of a vector (1 to 17), and counts past a group of vector blocks (four with
// AVX2, eight with AVX-512) with each number of blocks and tail after it. The delta-rule step
// is chosen per level, not through the Kernels set, so this also checks the choice: every
// level but scalar and NEON must have its own.
TEST(Simd, DeltaRuleEqualsTheScalarOrderBitForBit)
{
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> uf(-1.0f, 1.0f), ud(0.5f, 1.0f);
    const waste::quant::DeltaRuleStep scalar = waste::quant::scalarDeltaRule();
    for (SimdLevel lvl : supported()) {
        const waste::quant::DeltaRuleStep step = waste::quant::deltaRuleFor(lvl);
        if (lvl != SimdLevel::Neon)
            EXPECT_NE(step, scalar) << waste::quant::simdName(lvl) << " runs the scalar delta rule";
        std::vector<std::pair<int64_t, int64_t>> shapes = {{48, 48}, {128, 128}, {64, 96}, {5, 3}};
        for (int64_t dv = 1; dv <= 17; ++dv)
            shapes.emplace_back(16, dv);
        // Past a group of four vector blocks, with each count of blocks and tail after it.
        for (int64_t dv : {24, 33, 40, 63, 65, 80, 100, 112, 127, 128, 130, 150, 191, 200, 240, 255, 256, 300})
            shapes.emplace_back(12, dv);
        for (auto [dk, dv] : shapes) {
            std::vector<float> S(size_t(dk * dv));
            for (auto &x : S)
                x = uf(rng);
            std::vector<float> S2 = S;
            for (int token = 0; token < 3; ++token) {
                std::vector<float> q(static_cast<size_t>(dk)), k(static_cast<size_t>(dk)), v(static_cast<size_t>(dv)),
                    decay(static_cast<size_t>(dk));
                for (auto &x : q)
                    x = uf(rng);
                for (auto &x : k)
                    x = uf(rng);
                for (auto &x : v)
                    x = uf(rng);
                for (auto &x : decay)
                    x = ud(rng);
                const float beta = ud(rng);
                std::vector<float> u(size_t(dv), 7.0f), o(size_t(dv), 7.0f), u2(size_t(dv), -3.0f), o2(size_t(dv), -3.0f);
                scalar(S.data(), q.data(), k.data(), v.data(), decay.data(), beta, u.data(), o.data(), dk, dv);
                step(S2.data(), q.data(), k.data(), v.data(), decay.data(), beta, u2.data(), o2.data(), dk, dv);
                const std::string at = std::string(waste::quant::simdName(lvl)) + " " + std::to_string(dk) + "x" +
                                       std::to_string(dv) + " token " + std::to_string(token);
                EXPECT_EQ(std::memcmp(S.data(), S2.data(), S.size() * sizeof(float)), 0) << at << ": state";
                EXPECT_EQ(std::memcmp(u.data(), u2.data(), u.size() * sizeof(float)), 0) << at << ": delta";
                EXPECT_EQ(std::memcmp(o.data(), o2.data(), o.size() * sizeof(float)), 0) << at << ": output";
            }
        }
    }
}

namespace {
// model::detail::shortConvChannel's order for one channel and token, each product and sum
// rounded on its own: stored through a volatile, so no compiler mode can fuse them (GNU modes
// do on aarch64, in this file as in the model's inline code, but not in the kernels, which are
// compiled without contraction).
float convolveRounded(float x, const float *wc, float *rc)
{
    volatile float y = 0.0f;
    for (int j = 0; j < 3; ++j) {
        volatile float p = rc[j] * wc[j];
        y = y + p;
    }
    volatile float p = x * wc[3];
    y = y + p;
    rc[0] = rc[1];
    rc[1] = rc[2];
    rc[2] = x;
    return y;
}
} // namespace

// The kernel-4 short convolution at every level gives the per-channel order's sums and rings
// bit for bit (model::detail::shortConvChannel, one token at a time): channel counts that
// leave every remainder of a vector, runs of 1 to 70 tokens on rows wider than the channels,
// signed zeros, and a run cut in two giving the run whole.
TEST(Simd, ShortConvolutionEqualsThePerChannelOrderBitForBit)
{
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> uf(-2.0f, 2.0f);
    for (SimdLevel lvl : supported()) {
        const waste::quant::ShortConv4 conv = waste::quant::shortConv4For(lvl);
        if (lvl == SimdLevel::Avx2 || lvl == SimdLevel::Avx512)
            EXPECT_NE(conv, waste::quant::scalarShortConv4()) << waste::quant::simdName(lvl) << " runs the scalar code";
        for (int64_t C : {1, 7, 8, 9, 15, 16, 17, 31, 33, 128, 200}) {
            for (int64_t tokens : {1, 2, 5, 70}) {
                const int64_t stride = C + 3;
                std::vector<float> x(size_t(tokens * stride)), w(size_t(C * 4)), ring(size_t(C * 3));
                // A tenth of the values ±0, as a new sequence's ring is: the sum's leading
                // 0 + r0·w0 then decides the sign of a zero output.
                for (auto *v : {&x, &w, &ring})
                    for (auto &e : *v)
                        e = rng() % 10 == 0 ? (rng() % 2 ? 0.0f : -0.0f) : uf(rng);
                std::vector<float> want = x, wantRing = ring;
                for (int64_t t = 0; t < tokens; ++t)
                    for (int64_t c = 0; c < C; ++c)
                        want[size_t(t * stride + c)] =
                            convolveRounded(want[size_t(t * stride + c)], w.data() + c * 4, wantRing.data() + c * 3);
                const std::string at = std::string(waste::quant::simdName(lvl)) + " C " + std::to_string(C) +
                                       " tokens " + std::to_string(tokens);
                std::vector<float> got = x, gotRing = ring;
                conv(got.data(), stride, tokens, w.data(), gotRing.data(), C);
                EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << at << ": sums";
                EXPECT_EQ(std::memcmp(gotRing.data(), wantRing.data(), gotRing.size() * sizeof(float)), 0) << at << ": ring";
                std::vector<float> split = x, splitRing = ring;
                const int64_t first = tokens / 2;
                conv(split.data(), stride, first, w.data(), splitRing.data(), C);
                conv(split.data() + first * stride, stride, tokens - first, w.data(), splitRing.data(), C);
                EXPECT_EQ(std::memcmp(split.data(), want.data(), split.size() * sizeof(float)), 0) << at << ": cut run";
                EXPECT_EQ(std::memcmp(splitRing.data(), wantRing.data(), splitRing.size() * sizeof(float)), 0)
                    << at << ": cut run's ring";
            }
        }
    }
}

// WASTE_BACKEND: "cpu" is the scalar set anywhere; "avx2" steps an AVX-512 CPU down to its
// AVX2 set and asks nothing of a CPU without AVX-512; anything else keeps the best level.
TEST(Simd, BackendVariableChoosesALevelTheCpuRuns)
{
    using waste::quant::backendLevel;
    for (SimdLevel best : {SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512, SimdLevel::Neon}) {
        EXPECT_EQ(backendLevel(nullptr, best), best);
        EXPECT_EQ(backendLevel("cpu", best), SimdLevel::Scalar);
        EXPECT_EQ(backendLevel("avx512", best), best);
        EXPECT_EQ(backendLevel("fast", best), best);
        EXPECT_EQ(backendLevel("", best), best);
    }
    EXPECT_EQ(backendLevel("avx2", SimdLevel::Avx2), SimdLevel::Avx2);
    EXPECT_EQ(backendLevel("avx2", SimdLevel::Neon), SimdLevel::Neon);
    EXPECT_EQ(backendLevel("avx2", SimdLevel::Scalar), SimdLevel::Scalar);
    if (waste::quant::avx2Kernels())
        EXPECT_EQ(backendLevel("avx2", SimdLevel::Avx512), SimdLevel::Avx2);
}
