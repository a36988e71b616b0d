// MXFP4 decoding (K3's release format for routed experts) against an independent float64
// decoder written from the OCP definition: E2M1 = (-1)^s * 2^(e-1) * (1 + m/2) for e > 0,
// (-1)^s * m/2 for e = 0; E8M0 = 2^(x-127).
#include <gtest/gtest.h>

#include "convert/mxfp4.hpp"

#include <waste/waste.hpp>

#include <cmath>
#include <random>
#include <vector>

namespace {

double referenceE2M1(unsigned code)
{
    const unsigned s = code >> 3, e = (code >> 1) & 3, m = code & 1;
    const double mag = e == 0 ? m * 0.5 : std::pow(2.0, double(e) - 1.0) * (1.0 + m * 0.5);
    return s ? -mag : mag;
}

} // namespace

TEST(Mxfp4, EveryCodeMatchesTheDefinition)
{
    for (unsigned c = 0; c < 16; ++c)
        EXPECT_EQ(double(waste::convert::e2m1Value(uint8_t(c))), referenceE2M1(c)) << "code " << c;
    EXPECT_EQ(waste::convert::e8m0Scale(127), 1.0f);
    EXPECT_EQ(waste::convert::e8m0Scale(0), std::ldexp(1.0f, -127));
    EXPECT_EQ(waste::convert::e8m0Scale(254), std::ldexp(1.0f, 127));
}

TEST(Mxfp4, RandomMatrixDecodesExactlyLikeFloat64Reference)
{
    std::mt19937 rng(7);
    const size_t rows = 37, cols = 96 + 32; // several blocks per row
    std::vector<uint8_t> packed(rows * cols / 2), scales(rows * cols / 32);
    for (auto &b : packed)
        b = uint8_t(rng());
    for (auto &s : scales)
        s = uint8_t(100 + rng() % 50); // typical weight magnitudes, never NaN
    std::vector<float> out(rows * cols);
    waste::convert::decodeMxfp4Matrix(packed.data(), scales.data(), rows, cols, out.data(), "w1");
    for (size_t r = 0; r < rows; ++r)
        for (size_t i = 0; i < cols; ++i) {
            const uint8_t byte = packed[r * cols / 2 + i / 2];
            const unsigned code = (i % 2 == 0) ? (byte & 15u) : (byte >> 4); // low nibble first
            const double want = referenceE2M1(code) * std::pow(2.0, double(scales[r * cols / 32 + i / 32]) - 127.0);
            ASSERT_EQ(double(out[r * cols + i]), want) << "row " << r << " col " << i;
        }
}

TEST(Mxfp4, NanScaleAndShortInputAreRefusedWithTheTensorName)
{
    std::vector<uint8_t> packed(16, 0x21), scales = {255};
    std::vector<float> out(32);
    try {
        waste::convert::decodeMxfp4Row(packed, scales, out, "layers.3.experts.7.w2");
        FAIL() << "NaN scale accepted";
    } catch (const waste::Error &e) {
        EXPECT_EQ(e.code(), waste::ErrorCode::Format);
        EXPECT_NE(std::string(e.what()).find("layers.3.experts.7.w2"), std::string::npos);
    }
    std::vector<uint8_t> shortPacked(8);
    scales = {127};
    EXPECT_THROW(waste::convert::decodeMxfp4Row(shortPacked, scales, out, "w"), waste::Error);
}

TEST(Mxfp4, EncoderUsesTheSpecScaleAndTheNearestValue)
{
    // Scale 2^(floor(log2 amax) - 2) per block; each value the nearest of ±{0,…,6}·scale
    // (saturating at 6), checked in float64 against every candidate.
    std::mt19937 rng(3);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const size_t n = 32 * 7;
    std::vector<float> in(n);
    for (size_t i = 0; i < n; ++i)
        in[i] = normal(rng) * std::ldexp(1.0f, int(i / 32) * 3 - 9); // blocks of very different magnitude
    for (size_t i = 64; i < 96; ++i)
        in[i] = 0.0f; // an all-zero block
    std::vector<uint8_t> packed(n / 2), scales(n / 32);
    waste::convert::encodeMxfp4Row(in, packed, scales);
    std::vector<float> out(n);
    waste::convert::decodeMxfp4Row(packed, scales, out, "enc");
    for (size_t b = 0; b < n / 32; ++b) {
        double amax = 0;
        for (size_t i = b * 32; i < b * 32 + 32; ++i)
            amax = std::max(amax, std::fabs(double(in[i])));
        if (amax == 0) {
            EXPECT_EQ(scales[b], 127);
            for (size_t i = b * 32; i < b * 32 + 32; ++i)
                EXPECT_EQ(out[i], 0.0f);
            continue;
        }
        const int e = int(std::floor(std::log2(amax))) - 2;
        EXPECT_EQ(int(scales[b]), e + 127) << "block " << b;
        for (size_t i = b * 32; i < b * 32 + 32; ++i) {
            double best = INFINITY;
            for (unsigned c = 0; c < 16; ++c)
                best = std::min(best, std::fabs(referenceE2M1(c) * std::ldexp(1.0, e) - double(in[i])));
            EXPECT_LE(std::fabs(double(out[i]) - double(in[i])), best * (1 + 1e-12)) << "element " << i;
        }
    }
}
