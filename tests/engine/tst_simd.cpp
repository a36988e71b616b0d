// Every SIMD kernel this CPU supports agrees with the scalar kernels within 1e-5
// relative (a whole eval: tst_simd_eval). NEON's lutRow is held to bit-identity (its
// entries are computed in the scalar order; see quant/kernels_neon.cpp).
#include <gtest/gtest.h>

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
