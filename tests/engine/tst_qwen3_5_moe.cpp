// Qwen3.5-MoE against a float64 reference written from its public modeling code
// (qwen3_5_moe_reference.hpp), on the tiny model's real weights (`waste mktiny --arch
// qwen3.5-moe`: the multimodal release layout with fused BF16 experts, converted with a
// BF16 trunk and native BF16 experts so the engine holds the release's exact values): the
// Gated DeltaNet with its four projections apart, the gated attention with partial RoPE and
// zero-centred q/k norms, the fused routed experts with the gated shared expert, the whole
// forward pass. Each check also shows that plausible wrong readings land far away. Then
// the rules every architecture keeps: chunked prefill equals token by token, any thread
// count gives the same logits bit for bit, the recurrent state survives save, load and
// checkpoints; and the config reader's rules for this family.
#include "gqa_engine.hpp"
#include "qwen3_5_moe_reference.hpp"

#include "format/release_config.hpp"

#include "waste/waste.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

using namespace gqatest;
using q35ref::Wrong;

namespace {

constexpr double kTolerance = 1e-5;

waste::TinyModelOptions options()
{
    waste::TinyModelOptions o;
    o.arch = "qwen3.5-moe";
    o.seed = 7;
    o.trunkBits = 16;
    o.expertEncoding = waste::ExpertEncoding::Native;
    return o;
}

using Fixture = TinyModel<q35ref::Reference>;

Fixture &fixture()
{
    static Fixture f(options());
    return f;
}

std::vector<int32_t> someTokens(int n, unsigned seed) { return fixture().tokens(n, seed); }

nlohmann::json tinyConfig() { return nlohmann::json::parse(fixture().weights.source().configText()); }

} // namespace

TEST(Qwen35Moe, TheTinyModelReadsAsQwen35Moe)
{
    const auto &m = fixture().engine->manifest;
    const auto &c = m.config;
    EXPECT_EQ(c.arch, "qwen3.5-moe");
    EXPECT_TRUE(c.g.on && c.g.next && c.g.splitProjections && c.g.outputGate && c.g.zeroCentredNorm && c.g.qkNorm);
    EXPECT_EQ(c.isKda, (std::vector<bool>{true, true, true, false}));
    EXPECT_EQ(c.g.headDim, 64);
    EXPECT_EQ(c.g.rotaryDim, 16); // rope_parameters.partial_rotary_factor 0.25
    EXPECT_EQ(c.g.ropeTheta, 1e7);
    EXPECT_EQ(c.g.linKeyHeads, 2);
    EXPECT_EQ(c.g.linValueHeads, 8);
    EXPECT_EQ(c.g.linKeyDim, 32);
    EXPECT_EQ(c.g.linValueDim, 48);
    EXPECT_EQ(c.experts, 16);
    EXPECT_EQ(c.topK, 4);
    EXPECT_TRUE(c.renormalize) << "no norm_topk_prob key: the router always renormalises";
    EXPECT_EQ(c.g.sharedInter, 64);
    EXPECT_EQ(c.eps, 1e-6f);
    EXPECT_EQ(m.quant.fmtName, "BF16");
    EXPECT_EQ(m.prefix, "");
    EXPECT_EQ(m.find("mtp.fc.weight"), nullptr) << "the MTP block is read past";
    EXPECT_EQ(m.find("model.visual.pos_embed.weight"), nullptr) << "the vision tower is read past";
    EXPECT_NE(m.find("model.layers.0.linear_attn.in_proj_qkv.weight"), nullptr);
    EXPECT_NE(m.find("model.layers.0.linear_attn.in_proj_b.weight"), nullptr);
    EXPECT_NE(m.find("model.embed_tokens.weight"), nullptr);
    EXPECT_NE(m.find("lm_head.weight"), nullptr);
    EXPECT_EQ(m.find("model.layers.0.mlp.experts.gate_up_proj"), nullptr) << "fused experts become records";
}

TEST(Qwen35Moe, GatedDeltaNetWithSeparateProjections)
{
    auto &f = fixture();
    const auto &c = f.ref->cfg();
    const int T = 20;
    double worst = 0, wrong = INFINITY;
    for (int L = 0; L < c.L; ++L) {
        if (!c.linear[size_t(L)])
            continue;
        const auto a = inputs(T, c.H, 40 + L);
        const auto in = flat(a);
        const std::vector<float> out = attentionOutputs(*f.engine, L, in, c.H); // 12 singly, 8 as a chunk
        q35ref::Reference::DeltaState rs;
        for (int t = 0; t < T; ++t)
            worst = std::max(worst, relErr(out.data() + t * c.H, f.ref->deltaNet(L, a[size_t(t)], rs)));
        for (Wrong w : {Wrong::InterleavedQkv, Wrong::TiledKeyHeads, Wrong::SwappedBA}) {
            q35ref::Reference::DeltaState ws;
            double err = 0;
            for (int t = 0; t < T; ++t)
                err = std::max(err, relErr(out.data() + t * c.H, f.ref->deltaNet(L, a[size_t(t)], ws, w)));
            wrong = std::min(wrong, err);
        }
    }
    report("qwen3.5-moe", "Gated DeltaNet, q|k|v, z, b, a apart (3 x 20)", worst, wrong);
    EXPECT_LT(worst, kTolerance);
    EXPECT_GT(wrong, 100 * kTolerance);
}

TEST(Qwen35Moe, GatedAttentionWithPartialRopeAndCentredQkNorm)
{
    auto &f = fixture();
    const auto &c = f.ref->cfg();
    const int T = 20, L = 3;
    ASSERT_FALSE(c.linear[size_t(L)]);
    const auto a = inputs(T, c.H, 60);
    const auto in = flat(a);
    const std::vector<float> out = attentionOutputs(*f.engine, L, in, c.H);
    double worst = 0, wrong = INFINITY;
    q35ref::Reference::Cache rc;
    for (int t = 0; t < T; ++t)
        worst = std::max(worst, relErr(out.data() + t * c.H, f.ref->attention(L, a[size_t(t)], t, rc)));
    for (Wrong w : {Wrong::FullRope, Wrong::PlainNorms}) {
        q35ref::Reference::Cache wc;
        double err = 0;
        for (int t = 0; t < T; ++t)
            err = std::max(err, relErr(out.data() + t * c.H, f.ref->attention(L, a[size_t(t)], t, wc, w)));
        wrong = std::min(wrong, err);
    }
    report("qwen3.5-moe", "gated attention, partial RoPE, 1+w q/k norm (20 tokens)", worst, wrong);
    EXPECT_LT(worst, kTolerance);
    EXPECT_GT(wrong, 100 * kTolerance);
}

TEST(Qwen35Moe, FusedRoutedExpertsPlusGatedSharedExpert)
{
    auto &f = fixture();
    const auto &c = f.ref->cfg();
    const int T = 6;
    double worst = 0, wrong = INFINITY;
    for (int L = 0; L < c.L; ++L) {
        const auto b = inputs(T, c.H, 70 + L);
        const auto in = flat(b);
        std::vector<float> out(size_t(T * c.H));
        f.engine->forward->feedForward(L, T, in.data(), out.data(), *f.engine->experts);
        std::vector<float> one(size_t(c.H));
        f.engine->forward->feedForward(L, 1, in.data(), one.data(), *f.engine->experts);
        worst = std::max(worst, relErr(one.data(), f.ref->moe(L, b[0])));
        for (int t = 0; t < T; ++t) {
            worst = std::max(worst, relErr(out.data() + t * c.H, f.ref->moe(L, b[size_t(t)])));
            for (Wrong w : {Wrong::InterleavedExperts, Wrong::NoRenorm})
                wrong = std::min(wrong, relErr(out.data() + t * c.H, f.ref->moe(L, b[size_t(t)], w)));
        }
    }
    report("qwen3.5-moe", "top-4 of 16 fused experts + gated shared expert", worst, wrong);
    EXPECT_LT(worst, kTolerance);
    EXPECT_GT(wrong, 100 * kTolerance);
}

TEST(Qwen35Moe, WholeForwardPassMatchesFloat64)
{
    auto &f = fixture();
    const auto tokens = someTokens(12, 9);
    const std::vector<float> got = f.engine->logits(tokens, 64);
    const double err = relErr(got.data(), f.ref->logits(tokens));
    double wrong = INFINITY;
    for (Wrong w : {Wrong::PlainNorms, Wrong::InterleavedExperts, Wrong::InterleavedQkv})
        wrong = std::min(wrong, relErr(got.data(), f.ref->logits(tokens, w)));
    report("qwen3.5-moe", "logits after 12 tokens", err, wrong);
    EXPECT_LT(err, kTolerance);
    EXPECT_GT(wrong, 100 * kTolerance);
}

TEST(Qwen35Moe, ChunkedPrefillEqualsTokenByToken)
{
    expectChunkingIdentical(*fixture().engine, someTokens(90, 11)); // past one 64-token chunk
}

TEST(Qwen35Moe, ThreadCountsGiveIdenticalLogits)
{
    expectThreadCountsIdentical(*fixture().engine, someTokens(40, 13));
}

TEST(Qwen35Moe, RecurrentStateSavesLoadsAndReturnsToCheckpoints)
{
    checkSessionState(fixture().dir, someTokens(30, 21), someTokens(20, 22), someTokens(5, 23), someTokens(9, 24));
}

// The one config reader: the wrapper's text_config, rope_parameters nested or (older
// transformers) the M-RoPE keys under rope_scaling, a flat text-only config (MLX
// conversions), and this family's refusals.
TEST(Qwen35Moe, ConfigReaderTakesEveryReleaseSpelling)
{
    using waste::format::readReleaseConfig;
    const nlohmann::json wrapper = tinyConfig();
    const auto base = readReleaseConfig(wrapper);
    EXPECT_EQ(base.arch, "qwen3.5-moe");

    nlohmann::json flat = wrapper["text_config"]; // mlx-lm's text-only config
    flat["architectures"] = {"Qwen3_5MoeForCausalLM"};
    const auto f = readReleaseConfig(flat);
    EXPECT_EQ(f.arch, "qwen3.5-moe");
    EXPECT_EQ(f.g.rotaryDim, base.g.rotaryDim);
    EXPECT_EQ(f.isKda, base.isKda);

    nlohmann::json byType = wrapper["text_config"]; // model_type alone names it
    EXPECT_EQ(readReleaseConfig(byType).arch, "qwen3.5-moe");

    nlohmann::json old = wrapper;
    old["text_config"]["rope_scaling"] = old["text_config"]["rope_parameters"];
    old["text_config"]["rope_scaling"].erase("rope_theta");
    old["text_config"]["rope_scaling"].erase("partial_rotary_factor");
    old["text_config"]["rope_theta"] = 10000000;
    old["text_config"]["partial_rotary_factor"] = 0.25;
    old["text_config"].erase("rope_parameters");
    const auto o = readReleaseConfig(old);
    EXPECT_EQ(o.g.rotaryDim, 16);
    EXPECT_EQ(o.g.ropeTheta, 1e7);

    nlohmann::json noFactor = wrapper; // transformers' default partial_rotary_factor is 0.25
    noFactor["text_config"]["rope_parameters"].erase("partial_rotary_factor");
    EXPECT_EQ(readReleaseConfig(noFactor).g.rotaryDim, 16);

    nlohmann::json interval = wrapper; // no layer_types: every 4th layer is full attention
    interval["text_config"].erase("layer_types");
    EXPECT_EQ(readReleaseConfig(interval).isKda, base.isKda);

    // Keys transformers' Qwen3_5MoeTextConfig drops are read past as it reads them past: the
    // released 397B config carries "mlp_only_layers": [], copies carry norm_topk_prob.
    for (const char *key : {"norm_topk_prob", "mlp_only_layers", "decoder_sparse_step"}) {
        nlohmann::json extra = wrapper;
        extra["text_config"][key] = std::string(key) == "mlp_only_layers" ? nlohmann::json::array({1})
                                    : std::string(key) == "norm_topk_prob" ? nlohmann::json(false)
                                                                           : nlohmann::json(2);
        const auto e = readReleaseConfig(extra);
        EXPECT_TRUE(e.renormalize) << key;
        EXPECT_EQ(std::count(e.denseMlp.begin(), e.denseMlp.end(), true), 0) << key << ": every layer routes";
    }

    // Keys left out take Qwen3_5MoeTextConfig's defaults (eps 1e-6, 2 key/value heads of
    // 256), and the wrapper's top-level tie_word_embeddings ties the head, as the HF class
    // ties lm_head to the text model's embedding.
    nlohmann::json bare = wrapper;
    for (const char *key : {"rms_norm_eps", "head_dim", "num_key_value_heads"})
        bare["text_config"].erase(key);
    bare["tie_word_embeddings"] = true;
    bare["text_config"].erase("tie_word_embeddings");
    const auto d = readReleaseConfig(bare);
    EXPECT_FLOAT_EQ(d.eps, 1e-6f);
    EXPECT_EQ(d.g.headDim, 256);
    EXPECT_EQ(d.g.kvHeads, 2);
    EXPECT_TRUE(d.g.tied);
    EXPECT_FALSE(base.g.tied);

    auto refused = [&](nlohmann::json cfg, const std::string &what) {
        try {
            readReleaseConfig(cfg);
            ADD_FAILURE() << "accepted a config with " << what;
        } catch (const waste::Error &e) {
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        }
    };
    nlohmann::json yarn = wrapper;
    yarn["text_config"]["rope_parameters"]["rope_type"] = "yarn";
    refused(yarn, "rope_type");
    nlohmann::json noShared = wrapper;
    noShared["text_config"].erase("shared_expert_intermediate_size");
    refused(noShared, "shared_expert_intermediate_size");
    nlohmann::json ragged = wrapper;
    ragged["text_config"]["linear_num_value_heads"] = 3;
    refused(ragged, "linear_num_value_heads");
}
