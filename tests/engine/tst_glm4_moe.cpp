// GLM-4.5 and GLM-4.5-Air against a float64 reference written from transformers'
// modeling_glm4_moe.py (glm4_moe_reference.hpp), on the tiny models' real weights (`waste
// mktiny --arch glm4-moe [--air]`, converted with a BF16 trunk and native BF16 experts so the
// engine holds the release's exact values): attention with q/k/v biases, per-head q/k norm
// (GLM-4.5) or none (Air) and half of each head rotated, the dense first layer, the sigmoid
// router with its correction bias, groups, norm_topk_prob and routed scaling, the shared
// experts, and the whole forward pass. Each check also shows that a plausible wrong reading
// lands far away. Then the rules every architecture keeps: chunked prefill equals token by
// token, any thread count gives the same logits bit for bit, and a saved state goes on bit
// for bit. And the config: GLM-4.5's keys read through the one reader, the MTP layer read
// past, routing it cannot run refused.
#include "glm4_moe_reference.hpp"
#include "gqa_engine.hpp"

#include "format/release_config.hpp"

#include <waste/chat.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

using namespace gqatest;
using glmref::Wrong;

namespace {

constexpr double kTolerance = 1e-5;

waste::TinyModelOptions options(bool air)
{
    waste::TinyModelOptions o;
    o.arch = "glm4-moe";
    o.glmAir = air;
    o.seed = 5;
    o.trunkBits = 16;
    o.expertEncoding = waste::ExpertEncoding::Native;
    return o;
}

using Fixture = TinyModel<glmref::Reference>;

Fixture &fixture(bool air = false)
{
    static Fixture glm(options(false)), glmAir(options(true), "air");
    return air ? glmAir : glm;
}

const char *family(bool air) { return air ? "glm-4.5-air" : "glm-4.5"; }

// Attention of every layer, 20 tokens (attentionOutputs: 12 one at a time, 8 as one chunk), against the
// reference; returns the worst error and the closest any of `wrongs` comes.
std::pair<double, double> attentionErrors(bool air, std::initializer_list<Wrong> wrongs)
{
    auto &f = fixture(air);
    const auto &c = f.ref->cfg();
    const int T = 20;
    double worst = 0, closest = INFINITY;
    for (int L = 0; L < c.L; ++L) {
        const auto a = inputs(T, c.H, 40 + L);
        const auto in = flat(a);
        const std::vector<float> out = attentionOutputs(*f.engine, L, in, c.H);
        glmref::Reference::Cache rc;
        std::vector<glmref::Reference::Cache> wc(wrongs.size());
        for (int t = 0; t < T; ++t) {
            worst = std::max(worst, relErr(out.data() + t * c.H, f.ref->attention(L, a[size_t(t)], t, rc)));
            size_t i = 0;
            for (Wrong w : wrongs) {
                const glmref::Vec x = f.ref->attention(L, a[size_t(t)], t, wc[i++], w);
                if (t > 0) // one position: its value whatever q and k are, and no turn
                    closest = std::min(closest, relErr(out.data() + t * c.H, x));
            }
        }
    }
    return {worst, closest};
}

// The MLP sub-layer of every layer (dense layer 0, MoE after), T inputs each: the worst
// error against the reference, and for each wrong reading the largest distance any token
// shows (a routing misreading need not change every token's choice).
std::pair<double, double> ffnErrors(bool air, std::initializer_list<Wrong> wrongs, bool moeOnly)
{
    auto &f = fixture(air);
    const auto &c = f.ref->cfg();
    const int T = 8;
    double worst = 0, weakest = INFINITY;
    std::vector<double> far(wrongs.size(), 0.0);
    for (int L = moeOnly ? c.firstDense : 0; L < (moeOnly ? c.L : c.firstDense); ++L) {
        const auto b = inputs(T, c.H, 70 + L);
        const auto in = flat(b);
        std::vector<float> out(size_t(T * c.H));
        f.engine->forward->feedForward(L, T, in.data(), out.data(), *f.engine->experts);
        for (int t = 0; t < T; ++t) {
            worst = std::max(worst, relErr(out.data() + t * c.H, f.ref->ffn(L, b[size_t(t)])));
            size_t i = 0;
            for (Wrong w : wrongs) {
                far[i] = std::max(far[i], relErr(out.data() + t * c.H, f.ref->ffn(L, b[size_t(t)], w)));
                ++i;
            }
        }
    }
    for (double x : far)
        weakest = std::min(weakest, x);
    return {worst, wrongs.size() ? weakest : 0.0};
}

std::string tinyConfig(bool air) { return fixture(air).weights.source().configText(); }

waste::format::ModelConfig readConfig(const nlohmann::json &j) { return waste::format::readReleaseConfig(j); }

} // namespace

TEST(Glm4Moe, TheTinyModelReadsAsGlm45)
{
    const auto &c = fixture().engine->manifest.config;
    EXPECT_EQ(c.arch, "glm4-moe");
    EXPECT_TRUE(c.g.on && c.g.qkNorm && c.g.attnBias && c.g.sigmoidRouter);
    EXPECT_FALSE(c.g.outBias || c.g.sinks || c.g.next || c.g.outputGate || c.g.zeroCentredNorm);
    EXPECT_EQ(c.g.headDim, 64);
    EXPECT_EQ(c.g.rotaryDim, 32); // partial_rotary_factor 0.5
    EXPECT_EQ(c.heads / c.g.kvHeads, 3);
    EXPECT_EQ(c.experts, 16);
    EXPECT_EQ(c.topK, 4);
    EXPECT_EQ(c.groups, 4);
    EXPECT_EQ(c.topkGroups, 2);
    EXPECT_EQ(c.sharedExperts, 2);
    EXPECT_EQ(c.g.sharedInter, 2 * c.moeInter);
    EXPECT_EQ(c.firstDense, 1);
    EXPECT_FALSE(c.moeLayer(0));
    EXPECT_TRUE(c.moeLayer(1) && c.moeLayer(3));
    EXPECT_TRUE(c.renormalize);
    EXPECT_FLOAT_EQ(c.routedScale, 2.5f);
    EXPECT_EQ(fixture().engine->manifest.quant.fmtName, "BF16");
}

TEST(Glm4Moe, TheMtpLayerIsReadPast)
{
    // The source has model.layers.4.* (the MTP block, experts included); the container has
    // neither its trunk tensors nor an expert bank for it.
    const auto &src = fixture().weights.source();
    const auto names = src.tensorNames();
    EXPECT_TRUE(std::count(names.begin(), names.end(), "model.layers.4.eh_proj.weight"));
    EXPECT_TRUE(std::count(names.begin(), names.end(), "model.layers.4.mlp.experts.0.up_proj.weight"));
    const auto &m = fixture().engine->manifest;
    for (const auto &t : m.trunk)
        EXPECT_EQ(t.name.find("model.layers.4."), std::string::npos) << t.name;
    EXPECT_EQ(m.banks.size(), 3u);
    EXPECT_FALSE(m.banks.count(4));
}

TEST(Glm4Moe, AttentionWithBiasesQkNormAndHalfRotated)
{
    const auto [worst, closest] =
        attentionErrors(false, {Wrong::NoQkNorm, Wrong::BiasAfterNorm, Wrong::AdjacentPairs, Wrong::FullRope});
    report("glm-4.5", "GQA, qkv bias, q/k norm, half-head RoPE (4 x 20)", worst, closest);
    EXPECT_LT(worst, kTolerance);
    EXPECT_GT(closest, 100 * kTolerance);
}

TEST(Glm4Moe, DenseFirstLayer)
{
    const double worst = ffnErrors(false, {}, false).first;
    report("glm-4.5", "dense MLP of layer 0 (first_k_dense_replace 1)", worst);
    EXPECT_LT(worst, kTolerance);
}

TEST(Glm4Moe, SigmoidGroupedRouterSharedAndRoutedExperts)
{
    fixture().ref->ambiguousMasks = 0;
    const auto [worst, weakest] = ffnErrors(
        false, {Wrong::NoCorrection, Wrong::BiasedWeights, Wrong::NoGroupLimit, Wrong::NoRoutedScale}, true);
    report("glm-4.5", "sigmoid router, bias, groups, scale 2.5, experts", worst, weakest);
    EXPECT_LT(worst, kTolerance);
    EXPECT_GT(weakest, 100 * kTolerance);
    // Every selection had K kept experts with a positive key: HF's and DeepSeek's masking agree.
    EXPECT_EQ(fixture().ref->ambiguousMasks, 0);
}

TEST(Glm4Moe, WholeForwardPassMatchesFloat64)
{
    auto &f = fixture();
    const auto tokens = f.tokens(12, 9);
    const std::vector<float> got = f.engine->logits(tokens, 64);
    const double err = relErr(got.data(), f.ref->logits(tokens));
    report("glm-4.5", "logits after 12 tokens", err);
    EXPECT_LT(err, kTolerance);
}

// GLM-4.5-FP8's layout: routed experts as 128x128 block-scaled e4m3 with weight_scale_inv (the
// -FP8 releases' quantization_config), kept native by the converter; the logits match the
// float64 forward pass over the release's own values.
TEST(Glm4Moe, Fp8ReleaseKeepsItsExpertsAndMatchesFloat64)
{
    waste::TinyModelOptions o = options(false);
    o.experts = waste::TinyExperts::FP8B128;
    Fixture fp8(o, "fp8");
    EXPECT_EQ(fp8.engine->manifest.quant.fmtName, "FP8B128");
    const auto tokens = fp8.tokens(12, 9);
    const double err = relErr(fp8.engine->logits(tokens, 64).data(), fp8.ref->logits(tokens));
    report("glm-4.5", "FP8B128 experts: logits after 12 tokens", err);
    EXPECT_LT(err, kTolerance);
}

TEST(Glm4Moe, AirReadsWithoutQkNormAndUnscaled)
{
    const auto &c = fixture(true).engine->manifest.config;
    EXPECT_EQ(c.arch, "glm4-moe");
    EXPECT_FALSE(c.g.qkNorm);
    EXPECT_TRUE(c.g.attnBias && c.g.sigmoidRouter);
    EXPECT_FLOAT_EQ(c.routedScale, 1.0f);
    EXPECT_EQ(fixture(true).engine->weights.layers[1].g.qNorm, nullptr);
}

TEST(Glm4Moe, AirAttentionRouterAndLogits)
{
    auto &f = fixture(true);
    // (Without a q/k norm, a bias before or after it is the same: not a reading to rule out here.)
    const auto [attn, attnWrong] = attentionErrors(true, {Wrong::AdjacentPairs, Wrong::FullRope});
    report("glm-4.5-air", "GQA, qkv bias, no q/k norm, half-head RoPE", attn, attnWrong);
    EXPECT_LT(attn, kTolerance);
    EXPECT_GT(attnWrong, 100 * kTolerance);
    const auto [moe, moeWrong] = ffnErrors(true, {Wrong::NoCorrection, Wrong::BiasedWeights}, true);
    report("glm-4.5-air", "sigmoid router, scale 1.0, experts", moe, moeWrong);
    EXPECT_LT(moe, kTolerance);
    EXPECT_GT(moeWrong, 100 * kTolerance);
    const auto tokens = f.tokens(12, 19);
    const std::vector<float> got = f.engine->logits(tokens, 5);
    const double err = relErr(got.data(), f.ref->logits(tokens));
    report("glm-4.5-air", "logits after 12 tokens", err);
    EXPECT_LT(err, kTolerance);
}

TEST(Glm4Moe, ChunkedPrefillEqualsTokenByToken)
{
    for (bool air : {false, true})
        expectChunkingIdentical(*fixture(air).engine, fixture(air).tokens(90, 11)); // past one 64-token chunk
}

TEST(Glm4Moe, ThreadCountsGiveIdenticalLogits)
{
    for (bool air : {false, true})
        expectThreadCountsIdentical(*fixture(air).engine, fixture(air).tokens(40, 13));
}

TEST(Glm4Moe, SessionStateSavesLoadsAndReturnsToCheckpoints)
{
    auto &f = fixture();
    checkSessionState(f.dir, f.tokens(30, 21), f.tokens(20, 22), f.tokens(5, 23), f.tokens(9, 24));
}

TEST(Glm4Moe, ConfigKeysAndDefaults)
{
    // model_type alone names the family; Glm4MoeConfig's defaults fill what a config leaves out.
    nlohmann::json j = nlohmann::json::parse(tinyConfig(false));
    j.erase("architectures");
    for (const char *k : {"partial_rotary_factor", "use_qk_norm", "attention_bias", "n_group", "topk_group",
                          "norm_topk_prob", "routed_scaling_factor", "n_shared_experts", "first_k_dense_replace"})
        j.erase(k);
    const auto c = readConfig(j);
    EXPECT_EQ(c.arch, "glm4-moe");
    EXPECT_EQ(c.g.rotaryDim, 32);
    EXPECT_FALSE(c.g.qkNorm);
    EXPECT_FALSE(c.g.attnBias);
    EXPECT_EQ(c.groups, 1);
    EXPECT_EQ(c.topkGroups, 1);
    EXPECT_TRUE(c.renormalize);
    EXPECT_FLOAT_EQ(c.routedScale, 1.0f);
    EXPECT_EQ(c.sharedExperts, 1);
    EXPECT_EQ(c.g.sharedInter, c.moeInter);
    EXPECT_EQ(c.firstDense, 1);
    // Newer transformers nest rope_theta and partial_rotary_factor in rope_parameters.
    nlohmann::json n = nlohmann::json::parse(tinyConfig(false));
    n.erase("rope_theta");
    n.erase("partial_rotary_factor");
    n["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 5000.0}, {"partial_rotary_factor", 0.25}};
    const auto nested = readConfig(n);
    EXPECT_EQ(nested.g.rotaryDim, 16);
    EXPECT_EQ(nested.g.ropeTheta, 5000.0);
}

TEST(Glm4Moe, RoutingItCannotRunIsRefused)
{
    const auto refusal = [](const char *key, const char *value) {
        nlohmann::json j = nlohmann::json::parse(tinyConfig(false));
        j[key] = value;
        try {
            readConfig(j);
        } catch (const waste::Error &e) {
            EXPECT_EQ(e.code(), waste::ErrorCode::Unsupported);
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_NE(refusal("scoring_func", "softmax").find("scoring_func 'softmax' is not supported (GLM-4.5 routes with sigmoid)"),
              std::string::npos);
    EXPECT_NE(refusal("topk_method", "greedy").find("topk_method 'greedy' is not supported (GLM-4.5 routes with noaux_tc)"),
              std::string::npos);
    EXPECT_EQ(refusal("scoring_func", "sigmoid"), "accepted");
    nlohmann::json scaled = nlohmann::json::parse(tinyConfig(false));
    scaled["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
    EXPECT_THROW(readConfig(scaled), waste::Error);
}

TEST(Glm4Moe, TheMlaLiteModelIsNotThisFamily)
{
    // GLM-4.7-Flash (Glm4MoeLiteForCausalLM) is an MLA model: refused, not misread as GLM-4.5.
    nlohmann::json j = nlohmann::json::parse(tinyConfig(false));
    j["architectures"] = {"Glm4MoeLiteForCausalLM"};
    j["model_type"] = "glm4_moe_lite";
    EXPECT_EQ(waste::format::configArch(j), "Glm4MoeLiteForCausalLM");
    EXPECT_THROW(readConfig(j), waste::Error);
}

TEST(Glm4Moe, ChatsInGlmFormatAndReadsItsReplies)
{
    // The container's vocabulary has GLM's markers: its chats are GLM-4.5's format, a reply
    // ends where the model hands back (<|user|>, <|observation|>), and its calls are read.
    auto m = waste::Model::open(fixture().dir);
    ASSERT_EQ(m->info().chatFormat, waste::ChatFormat::Glm45);
    const waste::ChatSegments segs =
        waste::renderChat(m->info().chatFormat, R"({"messages": [{"role": "user", "content": "Weather?"}]})");
    std::string prompt;
    std::vector<int32_t> ids;
    for (const auto &s : segs) {
        prompt += s.text;
        const auto t = m->tokenize(s.text, s.markup);
        ids.insert(ids.end(), t.begin(), t.end());
    }
    EXPECT_EQ(prompt, "[gMASK]<sop><|user|>\nWeather?<|assistant|>");
    auto parser = m->replyParser(ids);
    waste::ReplyDelta last;
    for (int32_t id : m->tokenize("\n<think>look it up</think>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n"
                                  "<arg_value>Rome</arg_value>\n</tool_call><|observation|>",
                                  true)) {
        ASSERT_FALSE(last.done) << "the reply went on past <|observation|>";
        last = parser->feed(id);
    }
    EXPECT_TRUE(last.done);
    EXPECT_EQ(parser->reply().reasoning, "look it up");
    ASSERT_EQ(parser->reply().toolCalls.size(), 1u);
    EXPECT_EQ(parser->reply().toolCalls[0].name, "get_weather");
    EXPECT_EQ(parser->reply().toolCalls[0].arguments, R"({"city":"Rome"})");

    // A request that declared its tools: a parameter typed as a string keeps the text written
    // even where it reads as JSON (a postcode of digits).
    auto typed = m->replyParser(ids, R"([{"type":"function","function":{"name":"get_weather","parameters":
        {"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string"},"days":{"type":"integer"}}}}}])");
    for (int32_t id : m->tokenize("\n<think>ok</think>\n<tool_call>get_weather\n<arg_key>zip</arg_key>\n"
                                  "<arg_value>10115</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n"
                                  "</tool_call><|observation|>",
                                  true))
        typed->feed(id);
    ASSERT_EQ(typed->reply().toolCalls.size(), 1u);
    EXPECT_EQ(typed->reply().toolCalls[0].arguments, R"({"zip":"10115","days":2})");
}
