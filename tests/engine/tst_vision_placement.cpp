// Placement of image rows in the prompt (media block text, placeholder expansion, row queue)
// on the fixture container (k3-vision-math §8).
#include <gtest/gtest.h>

#include <fstream>

#include "f32_file.hpp"
#include "model/vision_placement.hpp"
#include "model/vision_runtime.hpp"
#include "waste/waste.hpp"

using namespace waste;
using namespace waste::vision;

namespace {
const std::string kDir = std::string(WASTE_FIXTURES_DIR) + "/vision-container/";

std::vector<int32_t> readIds(const std::string &path)
{
    std::ifstream in(path);
    std::vector<int32_t> ids;
    for (int32_t v; in >> v;) ids.push_back(v);
    return ids;
}
} // namespace

TEST(MediaBlock, TextCarriesTheSourceSize)
{
    EXPECT_EQ(mediaBlockText(230, 170),
              "<|media_begin|>image 230x170<|media_content|><|media_pad|><|media_end|>");
}

TEST(MediaExpansion, EachPlaceholderBecomesItsImagesPositions)
{
    const std::vector<int32_t> t = {1, 313, 2, 3, 313, 4};
    const std::vector<int> n = {3, 2};
    EXPECT_EQ(expandMediaTokens(t, 313, n), (std::vector<int32_t>{1, 313, 313, 313, 2, 3, 313, 313, 4}));
    // Placeholder count must equal the image count: typing <|media_pad|> does not place an image.
    const std::vector<int> one = {3};
    EXPECT_THROW(expandMediaTokens(t, 313, one), Error);
    EXPECT_THROW(expandMediaTokens(std::vector<int32_t>{313}, 313, std::span<const int>{}), Error);
    EXPECT_EQ(expandMediaTokens(std::vector<int32_t>{5}, 313, std::span<const int>{}), (std::vector<int32_t>{5}));
}

TEST(MediaExpansion, FixtureIdsHaveTheImagePositions)
{
    // The reference engine's expanded ids: 12 consecutive media tokens per image.
    for (const char *f : {"v1.img_a.p1.ids.txt", "v1.img_a+img_b.p1.ids.txt"}) {
        const auto ids = readIds(kDir + f);
        const auto pads = std::count(ids.begin(), ids.end(), 313);
        EXPECT_EQ(pads % 12, 0) << f;
        EXPECT_GT(pads, 0) << f;
    }
}

TEST(MediaRowQueue, RowsReplaceMediaTokensInOrder)
{
    MediaRowQueue q;
    q.reset(313, 2);
    q.append(std::vector<float>{1, 2, 3, 4});
    q.append(std::vector<float>{5, 6});
    float out[2] = {0, 0};
    EXPECT_FALSE(q.take(7, out)); // not the media token: embedding table
    EXPECT_TRUE(q.take(313, out));
    EXPECT_EQ(out[1], 2.0f);
    EXPECT_TRUE(q.take(313, out));
    EXPECT_EQ(out[0], 3.0f);
    EXPECT_TRUE(q.take(313, out));
    EXPECT_EQ(out[1], 6.0f);
    EXPECT_FALSE(q.take(313, out)); // all used
    EXPECT_EQ(q.pending(), 0);
    EXPECT_THROW(q.append(std::vector<float>{1, 2, 3}), Error);
}

TEST(VisionRuntime, AddImageEncodesAndQueuesRows)
{
    VisionRuntime rt(kDir + "v1.waste", 128, 316, 2);
    ASSERT_TRUE(rt.available());
    EXPECT_FALSE(rt.loaded()); // the tower is read only when an image comes
    EXPECT_EQ(rt.addImage(kDir + "img_a.png"), 12);
    EXPECT_TRUE(rt.loaded());
    EXPECT_EQ(rt.addImage(kDir + "img_b.jpg"), 12);
    EXPECT_EQ(rt.markup(), mediaBlockText(230, 170) + mediaBlockText(200, 150));
    EXPECT_EQ(rt.rows().pending(), 24);
    const auto a = readF32File(kDir + "v1.img_a.rows.f32");
    const auto b = readF32File(kDir + "v1.img_b.rows.f32");
    std::vector<float> got(24 * 128);
    for (int i = 0; i < 24; ++i) ASSERT_TRUE(rt.rows().take(313, &got[size_t(i) * 128]));
    std::vector<float> want = a;
    want.insert(want.end(), b.begin(), b.end());
    EXPECT_LT(maxRelativeDiff(got, want), 1e-5);
    const std::vector<int32_t> tokens = {313, 5, 313};
    EXPECT_EQ(rt.expand(tokens).size(), 25u);
    rt.clearImages();
    EXPECT_TRUE(rt.images().empty());
    EXPECT_THROW(rt.addImage(kDir + "README.md"), Error);
    EXPECT_TRUE(rt.images().empty());
}

TEST(VisionRuntime, ContainerWithoutVisionJsonHasNoTower)
{
    VisionRuntime rt(std::string(WASTE_FIXTURES_DIR) + "/reference-container/r3.waste", 128, 316);
    EXPECT_FALSE(rt.available());
    EXPECT_THROW(rt.addImage(kDir + "img_a.png"), Error);
}
