// Qwen3-MoE as its definition allows: dense layers between the MoE layers. transformers'
// Qwen3MoeDecoderLayer gives layer L a dense MLP (intermediate_size wide) when L is in
// mlp_only_layers or (L + 1) is not a multiple of decoder_sparse_step. The tiny model here
// has layers 1 and 3 dense; the engine's logits match the float64 reference
// (gqa_reference.hpp, which reads the same two keys), whole prompts read in passes equal
// token by token, and the config reader's per-layer decision follows both keys.
#include "format/release_config.hpp"
#include "gqa_engine.hpp"

#include <gtest/gtest.h>

using namespace gqatest;

namespace {

constexpr double kTolerance = 1e-5;

waste::TinyModelOptions options()
{
    waste::TinyModelOptions o;
    o.arch = "qwen3-moe";
    o.seed = 7;
    o.trunkBits = 16;
    o.expertEncoding = waste::ExpertEncoding::Native;
    o.mlpOnlyLayers = {1, 3};
    return o;
}

TinyModel<gqaref::Reference> &fixture()
{
    static TinyModel<gqaref::Reference> f(options(), "dense-layers");
    return f;
}

} // namespace

TEST(Qwen3MoeDense, TheConfigSaysWhichLayersAreDense)
{
    const auto &c = fixture().engine->manifest.config;
    EXPECT_TRUE(c.moeLayer(0));
    EXPECT_FALSE(c.moeLayer(1));
    EXPECT_TRUE(c.moeLayer(2));
    EXPECT_FALSE(c.moeLayer(3));
    EXPECT_EQ(fixture().engine->manifest.banks.size(), 2u); // experts only where they are routed to
    // decoder_sparse_step 2: layers 0 and 2 dense, 1 and 3 MoE; with mlp_only_layers [1] only 3.
    auto config = nlohmann::json::parse(fixture().weights.source().configText());
    config["mlp_only_layers"] = nlohmann::json::array();
    config["decoder_sparse_step"] = 2;
    auto step = waste::format::readReleaseConfig(config);
    EXPECT_FALSE(step.moeLayer(0));
    EXPECT_TRUE(step.moeLayer(1));
    EXPECT_FALSE(step.moeLayer(2));
    EXPECT_TRUE(step.moeLayer(3));
    config["mlp_only_layers"] = {1};
    step = waste::format::readReleaseConfig(config);
    EXPECT_FALSE(step.moeLayer(1));
    EXPECT_TRUE(step.moeLayer(3));
    config["mlp_only_layers"] = {0, 1, 2, 3};
    config["decoder_sparse_step"] = 1;
    EXPECT_THROW(waste::format::readReleaseConfig(config), waste::Error); // no MoE layer left
    config["mlp_only_layers"] = {9};
    EXPECT_THROW(waste::format::readReleaseConfig(config), waste::Error);
}

TEST(Qwen3MoeDense, WholeForwardPassMatchesFloat64)
{
    auto &f = fixture();
    const auto tokens = f.tokens(12, 9);
    const std::vector<float> got = f.engine->logits(tokens, 64);
    const double err = relErr(got.data(), f.ref->logits(tokens));
    report("qwen3-moe", "logits after 12 tokens, layers 1 and 3 dense (mlp_only_layers)", err);
    EXPECT_LT(err, kTolerance);
}

TEST(Qwen3MoeDense, ChunkedPrefillEqualsTokenByToken)
{
    expectChunkingIdentical(*fixture().engine, fixture().tokens(90, 11));
}
