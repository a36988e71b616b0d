// e^x and log(1 + x) over runs (quant/exp_run.hpp, quant/log1p_run.hpp) and the elementwise
// runs built on them (model/ops.hpp): every result is std::exp's or std::log1p's, or the
// one-value function's, bit for bit. Each vector path is compared
// with the C library's expf on a seventh of all 2^32 floats (each bit pattern ≡ 0 mod 7: every
// exponent, sign and NaN, and every last-bit pattern); the whole range was compared once when
// it was written (0 of 4,294,967,296 differ; see the header).
#include <gtest/gtest.h>

#include "compute/thread_pool.hpp"
#include "model/ops.hpp"
#include "quant/exp_run.hpp"
#include "quant/log1p_run.hpp"
#include "quant/simd.hpp"

#include <atomic>
#include <utility>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace waste;

namespace {

// Values a model's gates meet, and the edges of expf's fast path.
std::vector<float> mixedValues(size_t n, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> wide(0.0f, 30.0f);
    std::uniform_real_distribution<float> narrow(-4.0f, 4.0f);
    std::vector<float> v;
    for (float x : {0.0f, -0.0f, 1.0f, -1.0f, 20.0f, 20.000002f, 88.0f, -88.0f, 88.72283f, 88.72284f, -103.27892f,
                    -103.97207f, -104.0f, 1e-30f, -1e-30f, std::numeric_limits<float>::denorm_min(),
                    std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::max(),
                    -std::numeric_limits<float>::max()})
        v.push_back(x);
    while (v.size() < n)
        v.push_back(v.size() % 3 == 0 ? wide(rng) : narrow(rng));
    return v;
}

// Every seventh bit pattern through `run`, against `libm` (std::exp, std::log1p): how many
// differ, and the first.
template <typename Libm = float (*)(float)>
std::pair<int64_t, uint32_t> differingFromLibm(quant::ExpRun run, Libm libm = [](float x) { return std::exp(x); })
{
    compute::ThreadPool pool(0);
    constexpr int64_t kBlock = 7 << 16; // bit patterns per block, a multiple of 7
    constexpr int64_t kBlocks = (int64_t(1) << 32) / kBlock + 1;
    std::atomic<int64_t> differing{0};
    std::atomic<uint32_t> first{0};
    pool.forRange(kBlocks, 1, [&](int64_t b0, int64_t b1) {
        std::vector<float> x(kBlock / 7), y(kBlock / 7);
        for (int64_t b = b0; b < b1; ++b) {
            int64_t n = 0;
            for (int64_t p = b * kBlock; p < (b + 1) * kBlock && p < (int64_t(1) << 32); p += 7)
                x[size_t(n++)] = std::bit_cast<float>(uint32_t(p));
            run(x.data(), y.data(), n);
            for (int64_t i = 0; i < n; ++i)
                if (std::bit_cast<uint32_t>(y[size_t(i)]) != std::bit_cast<uint32_t>(libm(x[size_t(i)])) && differing++ == 0)
                    first = std::bit_cast<uint32_t>(x[size_t(i)]);
        }
    });
    return {differing.load(), first.load()};
}

TEST(ExpRun, Avx2PathIsTheCLibrarysExpfOnASeventhOfAllFloats)
{
    if (!quant::avx2ExpRun() || !quant::simdSupported(quant::SimdLevel::Avx2))
        GTEST_SKIP() << "no AVX2 and FMA here";
    const auto [differing, first] = differingFromLibm(quant::avx2ExpRun());
    EXPECT_EQ(differing, 0) << "first at bits 0x" << std::hex << first;
}

TEST(ExpRun, Avx512PathIsTheCLibrarysExpfOnASeventhOfAllFloats)
{
    if (!quant::avx512ExpRun() || !quant::simdSupported(quant::SimdLevel::Avx512))
        GTEST_SKIP() << "no AVX-512 here";
    const auto [differing, first] = differingFromLibm(quant::avx512ExpRun());
    EXPECT_EQ(differing, 0) << "first at bits 0x" << std::hex << first;
}

#if defined(__x86_64__) && defined(__GLIBC__)
TEST(ExpRun, VectorisedWithGlibcOnAvx2)
{
    // glibc runs the expf build the vector path copies wherever AVX2 and FMA are usable.
    if (!quant::simdSupported(quant::SimdLevel::Avx2))
        GTEST_SKIP() << "no AVX2 and FMA here";
    const quant::SimdLevel was = quant::activeSimd();
    for (quant::SimdLevel lvl : {quant::SimdLevel::Avx2, quant::SimdLevel::Avx512}) {
        if (!quant::simdSupported(lvl))
            continue;
        quant::setActiveSimd(lvl);
        EXPECT_TRUE(quant::expRunVectorised()) << quant::simdName(lvl);
    }
    quant::setActiveSimd(quant::SimdLevel::Scalar);
    EXPECT_FALSE(quant::expRunVectorised());
    quant::setActiveSimd(was);
}
#endif

// log1p over runs (quant/log1p_run.hpp) likewise: each vector path against the C library's
// log1pf on a seventh of all floats (the whole range was compared once when it was written:
// 0 of 4,294,967,296 differ on either path).
TEST(Log1pRun, Avx2PathIsTheCLibrarysLog1pfOnASeventhOfAllFloats)
{
    if (!quant::avx2Log1pRun() || !quant::simdSupported(quant::SimdLevel::Avx2))
        GTEST_SKIP() << "no AVX2 here";
    const auto [differing, first] = differingFromLibm(quant::avx2Log1pRun(), [](float x) { return std::log1p(x); });
    EXPECT_EQ(differing, 0) << "first at bits 0x" << std::hex << first;
}

TEST(Log1pRun, Avx512PathIsTheCLibrarysLog1pfOnASeventhOfAllFloats)
{
    if (!quant::avx512Log1pRun() || !quant::simdSupported(quant::SimdLevel::Avx512))
        GTEST_SKIP() << "no AVX-512 here";
    const auto [differing, first] = differingFromLibm(quant::avx512Log1pRun(), [](float x) { return std::log1p(x); });
    EXPECT_EQ(differing, 0) << "first at bits 0x" << std::hex << first;
}

#if defined(__x86_64__) && defined(__GLIBC__) && __GLIBC__ == 2 && __GLIBC_MINOR__ <= 36
TEST(Log1pRun, VectorisedWithThisGlibc)
{
    // Debian 12's glibc (2.36) has fdlibm's log1pf, the one the vector paths follow.
    const quant::SimdLevel was = quant::activeSimd();
    for (quant::SimdLevel lvl : {quant::SimdLevel::Avx2, quant::SimdLevel::Avx512}) {
        if (!quant::simdSupported(lvl))
            continue;
        quant::setActiveSimd(lvl);
        EXPECT_TRUE(quant::log1pRunVectorised()) << quant::simdName(lvl);
    }
    quant::setActiveSimd(quant::SimdLevel::Scalar);
    EXPECT_FALSE(quant::log1pRunVectorised());
    quant::setActiveSimd(was);
}
#endif

TEST(Log1pRun, EveryLengthAndAliasGivesStdLog1p)
{
    std::vector<float> x = mixedValues(301, 6);
    for (size_t i = 0; i < x.size(); i += 3)
        x[i] = std::exp(x[i] * 0.25f) - 1.0f; // near and past −1 too
    for (int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 301}) {
        std::vector<float> y(size_t(n) + 1, 7.0f), inPlace(x.begin(), x.begin() + n);
        quant::log1pRun(x.data(), y.data(), n);
        quant::log1pRun(inPlace.data(), inPlace.data(), n);
        for (int64_t i = 0; i < n; ++i) {
            ASSERT_EQ(std::bit_cast<uint32_t>(y[size_t(i)]), std::bit_cast<uint32_t>(std::log1p(x[size_t(i)])))
                << "n " << n << " x " << x[size_t(i)];
            ASSERT_EQ(std::bit_cast<uint32_t>(inPlace[size_t(i)]), std::bit_cast<uint32_t>(y[size_t(i)]));
        }
        EXPECT_EQ(y[size_t(n)], 7.0f) << "wrote past n = " << n;
    }
}

TEST(ExpRun, EveryLengthAndAliasGivesStdExp)
{
    const std::vector<float> x = mixedValues(301, 5);
    for (int64_t n : {0, 1, 3, 4, 5, 7, 8, 63, 64, 65, 301}) {
        std::vector<float> y(size_t(n) + 1, 7.0f), inPlace(x.begin(), x.begin() + n);
        quant::expRun(x.data(), y.data(), n);
        quant::expRun(inPlace.data(), inPlace.data(), n);
        for (int64_t i = 0; i < n; ++i) {
            ASSERT_EQ(std::bit_cast<uint32_t>(y[size_t(i)]), std::bit_cast<uint32_t>(std::exp(x[size_t(i)]))) << "n " << n << " x " << x[size_t(i)];
            ASSERT_EQ(std::bit_cast<uint32_t>(inPlace[size_t(i)]), std::bit_cast<uint32_t>(y[size_t(i)]));
        }
        EXPECT_EQ(y[size_t(n)], 7.0f) << "wrote past n = " << n;
    }
}

// Each run function against its one-value form, at every SIMD level this CPU has.
TEST(ExpRun, RunsEqualTheOneValueFunctions)
{
    const std::vector<float> x = mixedValues(1000, 9), u = mixedValues(1000, 10);
    const int64_t n = int64_t(x.size());
    const quant::SimdLevel was = quant::activeSimd();
    for (quant::SimdLevel lvl : {quant::SimdLevel::Scalar, quant::SimdLevel::Avx2, quant::SimdLevel::Avx512}) {
        if (!quant::simdSupported(lvl))
            continue;
        quant::setActiveSimd(lvl);
        std::vector<float> sig(x.size()), silu(x.size()), swiglu(x.size()), soft(x.size()), inPlace = x;
        model::sigmoidRun(x.data(), sig.data(), n);
        model::siluRun(x.data(), silu.data(), n);
        model::swigluRun(x.data(), u.data(), swiglu.data(), n);
        model::softplusRun(x.data(), soft.data(), n);
        model::siluRun(inPlace.data(), inPlace.data(), n);
        for (size_t i = 0; i < x.size(); ++i) {
            SCOPED_TRACE(testing::Message() << quant::simdName(lvl) << " x " << x[i]);
            ASSERT_EQ(std::bit_cast<uint32_t>(sig[i]), std::bit_cast<uint32_t>(model::sigmoid(x[i])));
            ASSERT_EQ(std::bit_cast<uint32_t>(silu[i]), std::bit_cast<uint32_t>(model::silu(x[i])));
            ASSERT_EQ(std::bit_cast<uint32_t>(swiglu[i]), std::bit_cast<uint32_t>(model::silu(x[i]) * u[i]));
            ASSERT_EQ(std::bit_cast<uint32_t>(soft[i]), std::bit_cast<uint32_t>(model::softplus(x[i])));
            ASSERT_EQ(std::bit_cast<uint32_t>(inPlace[i]), std::bit_cast<uint32_t>(silu[i]));
        }
    }
    quant::setActiveSimd(was);
}

} // namespace
