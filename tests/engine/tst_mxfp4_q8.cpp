// The int8-activation path for MXFP4 experts (quant/mxfp4_q8.hpp):
// - the quantiser: codes within [-127, 127], each input within half a step of code * step;
// - every SIMD level returns the scalar kernel's result bit for bit, on random rows and on
//   group counts that are and are not multiples of 8;
// - the kernel equals a float64 sum over the quantised inputs (its integer part is exact);
// - on the tiny K3 with MXFP4 experts, logits with WASTE_NATIVE_ACTIVATIONS=int8 are compared
//   with the f32 kernel's at every position of a text (max |difference| / max |logit|), and
//   the engine's default is int8 exactly when they stay within 1e-3 (measured: 0.1 on
//   average, up to 1.1 where an expert choice flips; so the default is f32).
#include <gtest/gtest.h>

#include "format/native_values.hpp"
#include "native_fixture.hpp"
#include "quant/mxfp4_q8.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

using waste::quant::SimdLevel;

struct Q8Row {
    int64_t n = 0;
    std::vector<uint8_t> packed, scales;
    std::vector<float> x, d;
    std::vector<int8_t> q;
};

Q8Row randomRow(int64_t n, std::mt19937 &rng, float amplitude)
{
    Q8Row r;
    r.n = n;
    r.packed.resize(size_t(n / 2));
    r.scales.resize(size_t(n / 32));
    for (auto &b : r.packed)
        b = uint8_t(rng());
    for (auto &s : r.scales)
        s = uint8_t(100 + rng() % 50);
    std::normal_distribution<float> g(0.0f, amplitude);
    r.x.resize(size_t(n));
    for (auto &v : r.x)
        v = g(rng);
    r.x[size_t(n / 3)] = 0.0f; // a zero input, and a group of zeros below
    if (n >= 64)
        std::fill(r.x.begin() + 32, r.x.begin() + 64, 0.0f);
    r.q.resize(size_t(n));
    r.d.resize(size_t(n / 32));
    waste::quant::quantizeQ8(r.x.data(), n, r.q.data(), r.d.data());
    return r;
}

float run(waste::quant::Mxfp4Q8Row k, const Q8Row &r) { return k(r.packed.data(), r.scales.data(), r.q.data(), r.d.data(), r.n); }

const std::vector<int64_t> kLengths = {32, 64, 224, 256, 288, 1024, 2048 + 96, 7168};

} // namespace

TEST(Mxfp4Q8, QuantiserCodesAreWithinHalfAStep)
{
    std::mt19937 rng(11);
    for (int64_t n : kLengths) {
        const Q8Row r = randomRow(n, rng, 3.0f);
        for (int64_t i = 0; i < n; ++i) {
            const float d = r.d[size_t(i / 32)];
            ASSERT_GE(r.q[size_t(i)], -127);
            ASSERT_LE(std::fabs(double(r.q[size_t(i)]) * d - r.x[size_t(i)]), 0.5001 * d + 1e-30) << "n " << n << " i " << i;
        }
        for (int i = 32; i < 64 && n >= 64; ++i)
            EXPECT_EQ(r.q[size_t(i)], 0);
        if (n >= 64)
            EXPECT_EQ(r.d[1], 0.0f);
    }
}

TEST(Mxfp4Q8, EveryLevelEqualsScalarAndTheFloat64SumOverTheCodes)
{
    std::mt19937 rng(12);
    std::vector<SimdLevel> lvls;
    for (SimdLevel l : {SimdLevel::Avx2, SimdLevel::Avx512, SimdLevel::Neon})
        if (waste::quant::simdSupported(l))
            lvls.push_back(l);
    std::string names;
    for (SimdLevel l : lvls)
        names += std::string(waste::quant::simdName(l)) + " ";
    std::printf("int8-activation MXFP4 rows checked at: scalar %s\n", names.c_str());
    for (int rep = 0; rep < 20; ++rep)
        for (int64_t n : kLengths) {
            const Q8Row r = randomRow(n, rng, rep % 2 ? 0.01f : 4.0f);
            const float want = run(waste::quant::scalarMxfp4Q8(), r);
            for (SimdLevel l : lvls) {
                const float got = run(waste::quant::mxfp4Q8For(l), r);
                ASSERT_EQ(std::memcmp(&got, &want, 4), 0) << waste::quant::simdName(l) << " n " << n << ": " << got << " vs " << want;
            }
            // The same sum in float64 over the codes the kernel multiplied: the per-group
            // integer sums are exact, so only the f32 scaling and the 8-lane adds round.
            double ref = 0, mag = 0;
            for (int64_t i = 0; i < n; ++i) {
                const uint8_t byte = r.packed[size_t(i / 2)];
                const double w = double(waste::format::e2m1Value((i & 1) ? uint8_t(byte >> 4) : uint8_t(byte & 15))) *
                                 std::ldexp(1.0, int(r.scales[size_t(i / 32)]) - 127);
                const double t = w * double(r.q[size_t(i)]) * double(r.d[size_t(i / 32)]);
                ref += t;
                mag += std::fabs(t);
            }
            ASSERT_LE(std::fabs(double(want) - ref), 1e-6 * mag + 1e-30) << "n " << n;
        }
}

TEST(Mxfp4Q8, TheEngineUsesInt8ActivationsByDefaultOnlyWithin1e3OfTheFloatKernel)
{
    // The issue allows int8 activations where the logits stay within 1e-3 of the f32
    // kernel's. Measured here over a text, token by token; the engine's default (no
    // WASTE_NATIVE_ACTIVATIONS) must be int8 exactly when the bound holds.
    const native_fixture::Made &m = native_fixture::made("tst_mxfp4_q8", waste::TinyExperts::MXFP4);
    ::setenv("WASTE_NATIVE_ACTIVATIONS", "f32", 1);
    auto f32 = waste::Model::open(m.dir);
    ::setenv("WASTE_NATIVE_ACTIVATIONS", "int8", 1);
    auto q8 = waste::Model::open(m.dir);
    ::unsetenv("WASTE_NATIVE_ACTIVATIONS");
    auto byDefault = waste::Model::open(m.dir);
    const std::vector<int32_t> ids =
        f32->tokenize("The quick brown fox jumps over the lazy dog. It was the best of times, it was the worst of times; "
                      "a tale of two cities, told one token at a time.",
                      true);
    ASSERT_GE(ids.size(), 30u);
    double worst = 0, sum = 0;
    int agree = 0, positions = 0;
    bool anyDifferent = false, defaultIsInt8 = false, defaultIsF32 = true;
    for (int32_t id : ids) {
        const std::vector<float> a = f32->eval(std::span<const int32_t>(&id, 1));
        const std::vector<float> b = q8->eval(std::span<const int32_t>(&id, 1));
        const std::vector<float> c = byDefault->eval(std::span<const int32_t>(&id, 1));
        defaultIsF32 = defaultIsF32 && std::memcmp(c.data(), a.data(), a.size() * sizeof(float)) == 0;
        defaultIsInt8 = (positions == 0 || defaultIsInt8) && std::memcmp(c.data(), b.data(), b.size() * sizeof(float)) == 0;
        ASSERT_EQ(a.size(), b.size());
        double num = 0, den = 0;
        size_t topA = 0, topB = 0;
        for (size_t i = 0; i < a.size(); ++i) {
            num = std::max(num, std::fabs(double(a[i]) - b[i]));
            den = std::max(den, std::fabs(double(a[i])));
            topA = a[i] > a[topA] ? i : topA;
            topB = b[i] > b[topB] ? i : topB;
        }
        anyDifferent = anyDifferent || num > 0;
        worst = std::max(worst, num / den);
        sum += num / den;
        agree += topA == topB;
        ++positions;
    }
    const bool within = worst <= 1e-3;
    std::printf("[int8 activations] %d positions: max |logit difference| / max |logit| %.2e, mean %.2e (limit 1e-3: %s), "
                "top-1 agreement %d/%d; default: %s\n",
                positions, worst, sum / positions, within ? "holds" : "exceeded", agree, positions,
                defaultIsInt8 ? "int8" : defaultIsF32 ? "f32" : "neither");
    EXPECT_TRUE(anyDifferent) << "the int8 path did not run (WASTE_NATIVE_ACTIVATIONS=int8 ignored)";
    EXPECT_TRUE(defaultIsInt8 || defaultIsF32) << "the default is neither kernel";
    EXPECT_EQ(defaultIsInt8, within) << "the default must be int8 activations exactly when they keep the logits within 1e-3";
}
