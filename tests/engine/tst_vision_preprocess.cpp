// The patch grid rule and the pixel tensor (k3-vision-math §3-§5), checked against the
// reference engine's pixel tensors bit for bit.
#include <gtest/gtest.h>

#include <cstring>

#include "f32_file.hpp"
#include "image/image_decode.hpp"
#include "image/image_preprocess.hpp"

using namespace waste::image;

namespace {
const std::string kDir = std::string(WASTE_FIXTURES_DIR) + "/vision-container/";
}

TEST(VisionGrid, SpecExamples)
{
    auto g = chooseGrid(896, 896, 1024);
    EXPECT_EQ(g.gh, 32);
    EXPECT_EQ(g.gw, 32);
    EXPECT_EQ(g.positions(), 256);
    g = chooseGrid(354, 354, 1024);
    EXPECT_EQ(g.gw, 24);
    EXPECT_EQ(g.positions(), 144);
    g = chooseGrid(120, 90, 1024); // never enlarged: 120/14 = 8.6 -> 8 (even), 90/14 = 6.4 -> 6
    EXPECT_EQ(g.gw, 8);
    EXPECT_EQ(g.gh, 6);
    EXPECT_EQ(g.positions(), 12);
    g = chooseGrid(3, 5, 1024);
    EXPECT_EQ(g.gw, 2);
    EXPECT_EQ(g.gh, 2);
    EXPECT_EQ(g.positions(), 1);
    g = chooseGrid(357, 51, 100); // rounds to 26 x 4 = 104 > 100: the loop trims the width
    EXPECT_EQ(g.gw, 24);
    EXPECT_EQ(g.gh, 4);
}

TEST(VisionGrid, HalvingThePatchBudgetHalvesThePositions)
{
    const auto full = chooseGrid(896, 896, 1024);
    const auto half = chooseGrid(896, 896, 512);
    EXPECT_EQ(full.positions(), 256);
    EXPECT_LE(half.patches(), 512);
    EXPECT_NEAR(double(half.positions()), 128.0, 16.0);
    EXPECT_EQ(chooseGrid(1792, 896, 512).positions(), 128); // 32 x 16 exactly
}

TEST(VisionGrid, AlwaysEvenAndWithinBudget)
{
    for (int mp : {4, 7, 64, 100, 144, 1000}) {
        for (int w = 1; w < 2000; w += 97) {
            for (int h = 1; h < 2000; h += 89) {
                const auto g = chooseGrid(w, h, mp);
                ASSERT_EQ(g.gw % 2, 0);
                ASSERT_EQ(g.gh % 2, 0);
                ASSERT_GE(g.gw, 2);
                ASSERT_GE(g.gh, 2);
                ASSERT_LE(g.patches(), std::max(mp, 4)) << w << "x" << h << " mp " << mp;
            }
        }
    }
}

class VisionPixels : public ::testing::TestWithParam<const char *> {};

TEST_P(VisionPixels, BitIdenticalToReferenceEngine)
{
    const std::string name = GetParam();
    DecodeOptions opts;
    const RgbImage img = decodeImageFile(kDir + name, opts);
    const PatchTensor p = makePatches(img, 64, {0.5f, 0.5f, 0.5f}, {0.5f, 0.5f, 0.5f});
    EXPECT_EQ(p.grid.gh, 6);
    EXPECT_EQ(p.grid.gw, 8);
    const std::string stem = name.substr(0, name.find('.'));
    const std::vector<float> want = readF32File(kDir + "v1." + stem + ".pixels.f32");
    ASSERT_EQ(want.size(), size_t(48 * 588));
    ASSERT_EQ(p.values.size(), want.size());
    size_t differing = 0;
    for (size_t i = 0; i < want.size(); ++i)
        if (std::memcmp(&p.values[i], &want[i], 4) != 0) ++differing;
    EXPECT_EQ(differing, 0u) << "of " << want.size() << " values";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, VisionPixels, ::testing::Values("img_a.png", "img_b.jpg"));

TEST(VisionPixels, NormalisationUsesMeanAndStdPerChannel)
{
    // A flat picture: every output value is exactly (v/255 - mean[c]) / std[c].
    RgbImage img;
    img.width = 28;
    img.height = 28;
    img.rgb.resize(28 * 28 * 3);
    for (size_t i = 0; i < img.rgb.size(); i += 3) {
        img.rgb[i] = 255;
        img.rgb[i + 1] = 0;
        img.rgb[i + 2] = 51;
    }
    const std::array<float, 3> mean{0.48145466f, 0.4578275f, 0.40821073f};
    const std::array<float, 3> sd{0.26862954f, 0.26130258f, 0.27577711f};
    const PatchTensor p = makePatches(img, 1024, mean, sd);
    ASSERT_EQ(p.grid.patches(), 4);
    const uint8_t v[3] = {255, 0, 51};
    for (int i = 0; i < 4; ++i)
        for (int c = 0; c < 3; ++c)
            for (int j = 0; j < 196; ++j)
                ASSERT_EQ(p.values[size_t(i) * 588 + size_t(c) * 196 + size_t(j)],
                          (float(v[c]) / 255.0f - mean[size_t(c)]) / sd[size_t(c)]);
}

TEST(VisionPixels, PatchLayoutIsRowMajorAndChannelMajor)
{
    // 28 x 28 source at 28 x 28 target: the resample is the identity, so the layout is visible.
    RgbImage img;
    img.width = 28;
    img.height = 28;
    img.rgb.resize(28 * 28 * 3);
    for (int y = 0; y < 28; ++y)
        for (int x = 0; x < 28; ++x)
            for (int c = 0; c < 3; ++c) img.rgb[size_t((y * 28 + x) * 3 + c)] = uint8_t(x + 28 * c + (y % 3));
    const PatchTensor p = makePatches(img, 1024, {0, 0, 0}, {1, 1, 1});
    for (int py = 0; py < 2; ++py)
        for (int px = 0; px < 2; ++px)
            for (int c = 0; c < 3; ++c)
                for (int j = 0; j < 14; ++j)
                    for (int k = 0; k < 14; ++k) {
                        const int X = 14 * px + k, Y = 14 * py + j;
                        ASSERT_EQ(p.values[size_t(py * 2 + px) * 588 + size_t(c * 196 + j * 14 + k)],
                                  float(img.at(X, Y, c)) / 255.0f);
                    }
}
