// A config that leaves keys out reads as transformers reads it: each family's keys take its
// configuration class's defaults (DeepseekV3Config, DeepseekV32Config, GlmMoeDsaConfig,
// Glm4MoeConfig, Qwen3MoeConfig, Qwen3NextConfig, GptOssConfig), and the spellings
// transformers 5 saves (rope_theta inside rope_parameters, gpt-oss's YaRN there) and older
// layer-type names read too; YaRN without its original length takes max_position_embeddings;
// HF's num_local_experts alias, and a wrapper named by its own model_type. Each case starts from a release's own config.json
// (tests/fixtures/release-configs) with the keys erased, so a default that differs from the
// class's changes the numbers checked here. (DeepSeek V4's and Qwen3.5's are in tst_dsv4 and
// tst_qwen3_5_moe.)
#include "format/release_config.hpp"

#include <waste/waste.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <initializer_list>

namespace {

using nlohmann::json;
using waste::format::ModelConfig;

json release(const std::string &name)
{
    std::ifstream in(std::string(WASTE_FIXTURES_DIR) + "/release-configs/" + name + ".json");
    return json::parse(in);
}

json without(json cfg, std::initializer_list<const char *> keys)
{
    for (const char *k : keys)
        cfg.erase(k);
    return cfg;
}

ModelConfig read(const json &cfg) { return waste::format::readReleaseConfig(cfg); }

} // namespace

TEST(ConfigDefaults, DeepSeekFamilyRoutesAsItsClassesDefault)
{
    for (const char *name : {"deepseek-v3", "deepseek-v3.2", "kimi-k2"}) {
        const ModelConfig c = read(without(release(name), {"routed_scaling_factor", "norm_topk_prob", "rms_norm_eps",
                                                           "n_group", "topk_group", "first_k_dense_replace"}));
        EXPECT_FLOAT_EQ(c.routedScale, 2.5f) << name;
        EXPECT_TRUE(c.renormalize) << name;
        EXPECT_FLOAT_EQ(c.eps, 1e-6f) << name;
        EXPECT_EQ(c.groups, 8) << name;
        EXPECT_EQ(c.topkGroups, 4) << name;
        EXPECT_EQ(c.firstDense, 3) << name;
    }
    // GLM-5's class: one group, eps 1e-5.
    const ModelConfig g = read(without(release("glm-5"), {"routed_scaling_factor", "norm_topk_prob", "rms_norm_eps",
                                                          "n_group", "topk_group", "first_k_dense_replace"}));
    EXPECT_FLOAT_EQ(g.routedScale, 2.5f);
    EXPECT_TRUE(g.renormalize);
    EXPECT_FLOAT_EQ(g.eps, 1e-5f);
    EXPECT_EQ(g.groups, 1);
    EXPECT_EQ(g.topkGroups, 1);
    EXPECT_EQ(g.firstDense, 3);
    // A config that gives n_group alone keeps the class's topk_group, not every group.
    json grouped = without(release("deepseek-v3"), {"topk_group"});
    EXPECT_EQ(read(grouped).topkGroups, 4);
    // What a release says still wins.
    EXPECT_EQ(read(release("kimi-k2")).groups, 1);
    // YaRN without its original length: transformers takes max_position_embeddings.
    json yarn = release("deepseek-v3.2");
    yarn["rope_scaling"].erase("original_max_position_embeddings");
    EXPECT_EQ(read(yarn).rope.originalMax, yarn["max_position_embeddings"].get<double>());
}

TEST(ConfigDefaults, GqaFamiliesTakeTheirClassesHeadsAndRouting)
{
    EXPECT_EQ(read(without(release("glm-4.5"), {"num_key_value_heads"})).g.kvHeads, 8);
    json glm = without(release("glm-4.5"), {"topk_group"});
    glm["n_group"] = 4;
    EXPECT_EQ(read(glm).topkGroups, 1); // Glm4MoeConfig: topk_group 1
    EXPECT_EQ(read(without(release("qwen3-30b-a3b"), {"num_key_value_heads"})).g.kvHeads, 4);
    EXPECT_TRUE(read(without(release("qwen3-next-80b-a3b"), {"norm_topk_prob"})).renormalize);
    EXPECT_FALSE(read(without(release("qwen3-30b-a3b"), {"norm_topk_prob"})).renormalize);
}

TEST(ConfigDefaults, TransformersFiveSpellings)
{
    // rope_theta moved into rope_parameters.
    json q = without(release("qwen3-30b-a3b"), {"rope_theta"});
    q["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 1000000.0}};
    EXPECT_EQ(read(q).g.ropeTheta, 1e6);
    // gpt-oss's YaRN as rope_parameters.
    json o = release("gpt-oss-20b");
    json yarn = o["rope_scaling"];
    yarn["rope_theta"] = o["rope_theta"];
    o = without(o, {"rope_scaling", "rope_theta"});
    o["rope_parameters"] = yarn;
    const ModelConfig g = read(o), want = read(release("gpt-oss-20b"));
    EXPECT_EQ(g.g.ropeTheta, want.g.ropeTheta);
    EXPECT_EQ(g.g.yarnFactor, want.g.yarnFactor);
    EXPECT_EQ(g.g.yarnOrigCtx, want.g.yarnOrigCtx);
    // Qwen3-Next's older layer-type names.
    json n = release("qwen3-next-80b-a3b");
    const ModelConfig base = read(n);
    json types = json::array();
    for (bool kda : base.isKda)
        types.push_back(kda ? "mamba" : "attention");
    n["layer_types"] = types;
    EXPECT_EQ(read(n).isKda, base.isKda);
}

TEST(ConfigDefaults, AliasesAndAWrapperNamedByItsType)
{
    // num_local_experts, the name transformers maps onto n_routed_experts.
    for (const char *name : {"glm-4.5", "deepseek-v3"}) {
        json c = release(name);
        c["num_local_experts"] = c["n_routed_experts"];
        c.erase("n_routed_experts");
        EXPECT_EQ(read(c).experts, read(release(name)).experts) << name;
    }
    // A Qwen3.5 wrapper with neither architectures nor its text model's model_type.
    json q = release("qwen3.5-122b-a10b");
    q.erase("architectures");
    q["text_config"].erase("model_type");
    EXPECT_EQ(read(q).arch, "qwen3.5-moe");
}

TEST(ConfigDefaults, GptOssKeysLeftOut)
{
    const ModelConfig want = read(release("gpt-oss-20b"));
    const ModelConfig c = read(without(release("gpt-oss-20b"), {"rope_theta", "sliding_window", "head_dim", "num_key_value_heads"}));
    EXPECT_EQ(c.g.ropeTheta, 150000.0);
    EXPECT_EQ(c.g.window, 128);
    EXPECT_EQ(c.g.headDim, 64);
    EXPECT_EQ(c.g.kvHeads, 8);
    EXPECT_EQ(c.g.headDim, want.g.headDim);
    // No rope_scaling at all: GptOssConfig's own YaRN (factor 32 over 4096 positions, not truncated).
    const ModelConfig y = read(without(release("gpt-oss-20b"), {"rope_scaling"}));
    EXPECT_EQ(y.g.yarnFactor, 32.0);
    EXPECT_EQ(y.g.yarnOrigCtx, 4096);
    EXPECT_FALSE(y.g.yarnTruncate);
    json noOrig = release("gpt-oss-20b");
    noOrig["rope_scaling"].erase("original_max_position_embeddings");
    EXPECT_EQ(read(noOrig).g.yarnOrigCtx, noOrig["max_position_embeddings"].get<double>());
}
