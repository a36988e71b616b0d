// The vision tower on the fixture container: every stage against the reference engine's
// intermediates (embed, block 0, encoder, projected rows) within 1e-5 of each array's magnitude.
#include <gtest/gtest.h>

#include <cstring>

#include "f32_file.hpp"
#include "image/image_decode.hpp"
#include "image/image_preprocess.hpp"
#include "model/vision_config.hpp"
#include "model/vision_tower.hpp"
#include "model/vision_weights.hpp"
#include "waste/waste.hpp"

using namespace waste;

namespace {

const std::string kDir = std::string(WASTE_FIXTURES_DIR) + "/vision-container/";

struct Tower {
    std::unique_ptr<vision::TensorSource> src;
    vision::VisionConfig cfg;
    std::unique_ptr<vision::VisionWeights> w;

    Tower()
    {
        src = vision::openContainerTensors(kDir + "v1.waste");
        EXPECT_TRUE(vision::readVisionConfig(kDir + "v1.waste", cfg));
        vision::validateVisionConfig(cfg, src->textHidden(), src->vocabSize(), kDir + "v1.waste");
        w = vision::loadVisionWeights(*src, cfg);
    }
};

} // namespace

TEST(VisionConfig, ReadsTheFixture)
{
    Tower t;
    EXPECT_EQ(t.cfg.hidden, 32);
    EXPECT_EQ(t.cfg.heads, 2);
    EXPECT_EQ(t.cfg.headDim(), 16);
    EXPECT_EQ(t.cfg.layers, 2);
    EXPECT_EQ(t.cfg.maxPatches, 64);
    EXPECT_EQ(t.cfg.mediaTokenId, 313);
    EXPECT_EQ(t.cfg.textHidden, 128);
    EXPECT_EQ(t.w->blocks.size(), 2u);
}

TEST(VisionConfig, RefusesMismatchedTextWidth)
{
    Tower t;
    vision::VisionConfig c = t.cfg;
    EXPECT_THROW(vision::validateVisionConfig(c, 64, 316, "x"), Error);
    c = t.cfg;
    c.mediaTokenId = 316;
    EXPECT_THROW(vision::validateVisionConfig(c, 128, 316, "x"), Error);
    c = t.cfg;
    c.heads = 3;
    EXPECT_THROW(vision::validateVisionConfig(c, 128, 316, "x"), Error);
}

TEST(VisionWeights, SubnormalScalesAreHonoured)
{
    EXPECT_EQ(vision::f16ToF32(0x0001), std::ldexp(1.0f, -24));
    EXPECT_EQ(vision::f16ToF32(0x03FF), std::ldexp(1023.0f, -24));
    EXPECT_EQ(vision::f16ToF32(0x3C00), 1.0f);
    EXPECT_EQ(vision::f16ToF32(0xC000), -2.0f);
    EXPECT_EQ(vision::f16ToF32(0x7C00), 65536.0f); // exponent 31 is an ordinary exponent here
}

class VisionTowerStages : public ::testing::TestWithParam<const char *> {};

TEST_P(VisionTowerStages, MatchReferenceEngine)
{
    static Tower t;
    const std::string name = GetParam();
    const std::string stem = "v1." + name.substr(0, name.find('.'));
    const auto img = image::decodeImageFile(kDir + name);
    const auto patches = image::makePatches(img, t.cfg.maxPatches, t.cfg.mean, t.cfg.stdev);
    vision::TowerTrace trace;
    const auto out = vision::encodeImage(*t.w, patches, &trace, 2);
    EXPECT_EQ(out.positions, 12);

    const auto embed = readF32File(kDir + stem + ".embed.f32");
    const auto block0 = readF32File(kDir + stem + ".block0.f32");
    const auto encoder = readF32File(kDir + stem + ".encoder.f32");
    const auto rows = readF32File(kDir + stem + ".rows.f32");
    ASSERT_EQ(embed.size(), 48u * 32);
    ASSERT_EQ(trace.embed.size(), embed.size());
    ASSERT_EQ(trace.blocks.size(), 2u);
    ASSERT_EQ(trace.blocks[0].size(), block0.size());
    ASSERT_EQ(trace.encoder.size(), encoder.size());
    ASSERT_EQ(out.rows.size(), rows.size());
    EXPECT_LT(maxRelativeDiff(trace.embed, embed), 1e-5);
    EXPECT_LT(maxRelativeDiff(trace.blocks[0], block0), 1e-5);
    EXPECT_LT(maxRelativeDiff(trace.encoder, encoder), 1e-5);
    EXPECT_LT(maxRelativeDiff(out.rows, rows), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, VisionTowerStages, ::testing::Values("img_a.png", "img_b.jpg"));

TEST(VisionTower, ThreadCountDoesNotChangeTheRows)
{
    Tower t;
    const auto img = image::decodeImageFile(kDir + "img_a.png");
    const auto patches = image::makePatches(img, t.cfg.maxPatches, t.cfg.mean, t.cfg.stdev);
    const auto one = vision::encodeImage(*t.w, patches, nullptr, 1);
    const auto four = vision::encodeImage(*t.w, patches, nullptr, 4);
    ASSERT_EQ(one.rows.size(), four.rows.size());
    EXPECT_EQ(0, std::memcmp(one.rows.data(), four.rows.data(), one.rows.size() * 4));
}
