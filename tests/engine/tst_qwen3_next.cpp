// Qwen3-Next against a float64 reference written from its public modeling code
// (qwen3_next_reference.hpp), on the tiny model's real weights (`waste mktiny --arch
// qwen3-next`, converted with a BF16 trunk and native BF16 experts so the engine holds
// the release's exact values): the Gated DeltaNet layer with its convolution, delta rule
// and gated norm over a run of tokens; the gated attention with partial RoPE and
// zero-centred q/k norms over a growing cache; the MoE with the shared expert's gate;
// the whole forward pass. Each check also shows that plausible wrong readings land far
// away. Then the rules every architecture keeps: chunked prefill equals token by token,
// any thread count gives the same logits bit for bit, and the recurrent state survives
// save, load and checkpoints.
#include "gqa_engine.hpp"
#include "qwen3_next_reference.hpp"

#include "format/release_config.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cstring>

using namespace gqatest;
using qnref::Wrong;

namespace {

constexpr double kTolerance = 1e-5;

waste::TinyModelOptions options()
{
    waste::TinyModelOptions o;
    o.arch = "qwen3-next";
    o.seed = 7;
    o.trunkBits = 16;
    o.expertEncoding = waste::ExpertEncoding::Native;
    return o;
}

using Fixture = TinyModel<qnref::Reference>;

Fixture &fixture()
{
    static Fixture f(options());
    return f;
}

std::vector<int32_t> someTokens(int n, unsigned seed)
{
    return fixture().tokens(n, seed);
}

} // namespace

TEST(Qwen3Next, TheTinyModelReadsAsQwen3Next)
{
    const auto &m = fixture().engine->manifest;
    const auto &c = m.config;
    EXPECT_EQ(c.arch, "qwen3-next");
    EXPECT_TRUE(c.g.on && c.g.next && c.g.outputGate && c.g.zeroCentredNorm && c.g.qkNorm);
    EXPECT_EQ(c.isKda, (std::vector<bool>{true, true, true, false})); // full attention every 4th layer
    EXPECT_EQ(c.g.headDim, 64);
    EXPECT_EQ(c.g.rotaryDim, 16); // partial_rotary_factor 0.25
    // Without the key, transformers' Qwen3NextConfig default (0.25) holds, not a whole-head turn.
    nlohmann::json j = nlohmann::json::parse(fixture().weights.source().configText());
    j.erase("partial_rotary_factor");
    EXPECT_EQ(waste::format::readReleaseConfig(j).g.rotaryDim, 16);
    EXPECT_EQ(c.g.linKeyHeads, 2);
    EXPECT_EQ(c.g.linValueHeads, 4);
    EXPECT_EQ(c.g.linKeyDim, 32);
    EXPECT_EQ(c.g.linValueDim, 48);
    EXPECT_EQ(c.convK, 4);
    EXPECT_EQ(c.experts, 16);
    EXPECT_EQ(c.topK, 4);
    EXPECT_TRUE(c.renormalize);
    EXPECT_EQ(c.g.sharedInter, 64);
    EXPECT_EQ(m.quant.fmtName, "BF16");
    EXPECT_EQ(m.find("mtp.fc.weight"), nullptr) << "the MTP block is read past, not converted";
    EXPECT_NE(m.find("model.layers.0.linear_attn.in_proj_qkvz.weight"), nullptr);
    EXPECT_NE(m.find("model.layers.3.mlp.shared_expert_gate.weight"), nullptr);
}

TEST(Qwen3Next, GatedDeltaNetWithConvDeltaRuleAndGatedNorm)
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
        // Tokens 0..11 one at a time, 12..19 as one chunk.
        const std::vector<float> out = attentionOutputs(*f.engine, L, in, c.H);
        qnref::Reference::DeltaState rs;
        for (int t = 0; t < T; ++t)
            worst = std::max(worst, relErr(out.data() + t * c.H, f.ref->deltaNet(L, a[size_t(t)], rs)));
        for (Wrong w : {Wrong::BlockedQkvz, Wrong::TiledKeyHeads, Wrong::SigmoidNormGate, Wrong::NoConv}) {
            qnref::Reference::DeltaState ws;
            double err = 0; // the largest over the run: a misreading shows at some token
            for (int t = 0; t < T; ++t)
                err = std::max(err, relErr(out.data() + t * c.H, f.ref->deltaNet(L, a[size_t(t)], ws, w)));
            wrong = std::min(wrong, err);
        }
    }
    report("qwen3-next", "Gated DeltaNet, conv, delta rule, gated norm (3 x 20)", worst, wrong);
    EXPECT_LT(worst, kTolerance);
    EXPECT_GT(wrong, 100 * kTolerance);
}

TEST(Qwen3Next, GatedAttentionWithPartialRopeAndCentredQkNorm)
{
    auto &f = fixture();
    const auto &c = f.ref->cfg();
    const int T = 20, L = 3;
    ASSERT_FALSE(c.linear[size_t(L)]);
    const auto a = inputs(T, c.H, 60);
    const auto in = flat(a);
    const std::vector<float> out = attentionOutputs(*f.engine, L, in, c.H);
    double worst = 0, wrong = INFINITY;
    qnref::Reference::Cache rc;
    for (int t = 0; t < T; ++t)
        worst = std::max(worst, relErr(out.data() + t * c.H, f.ref->attention(L, a[size_t(t)], t, rc)));
    for (Wrong w : {Wrong::NoOutputGate, Wrong::FullRope, Wrong::PlainNorms}) {
        qnref::Reference::Cache wc;
        double err = 0;
        for (int t = 0; t < T; ++t)
            err = std::max(err, relErr(out.data() + t * c.H, f.ref->attention(L, a[size_t(t)], t, wc, w)));
        wrong = std::min(wrong, err);
    }
    report("qwen3-next", "gated attention, partial RoPE, 1+w q/k norm (20 tokens)", worst, wrong);
    EXPECT_LT(worst, kTolerance);
    EXPECT_GT(wrong, 100 * kTolerance);
}

TEST(Qwen3Next, RoutedExpertsPlusGatedSharedExpert)
{
    auto &f = fixture();
    const auto &c = f.ref->cfg();
    const int T = 6;
    double worst = 0, ungated = INFINITY;
    for (int L = 0; L < c.L; ++L) {
        const auto b = inputs(T, c.H, 70 + L);
        const auto in = flat(b);
        std::vector<float> out(size_t(T * c.H));
        f.engine->forward->feedForward(L, T, in.data(), out.data(), *f.engine->experts);
        // One token alone too: decode computes the shared expert while the records load.
        std::vector<float> one(size_t(c.H));
        f.engine->forward->feedForward(L, 1, in.data(), one.data(), *f.engine->experts);
        worst = std::max(worst, relErr(one.data(), f.ref->moe(L, b[0])));
        for (int t = 0; t < T; ++t) {
            worst = std::max(worst, relErr(out.data() + t * c.H, f.ref->moe(L, b[size_t(t)])));
            ungated = std::min(ungated, relErr(out.data() + t * c.H, f.ref->moe(L, b[size_t(t)], Wrong::NoSharedGate)));
        }
    }
    report("qwen3-next", "top-4 of 16 + shared expert with sigmoid gate", worst, ungated);
    EXPECT_LT(worst, kTolerance);
    EXPECT_GT(ungated, 100 * kTolerance);
}

TEST(Qwen3Next, WholeForwardPassMatchesFloat64)
{
    auto &f = fixture();
    const auto tokens = someTokens(12, 9);
    const std::vector<float> got = f.engine->logits(tokens, 64);
    const double err = relErr(got.data(), f.ref->logits(tokens));
    const double plain = relErr(got.data(), f.ref->logits(tokens, Wrong::PlainNorms));
    report("qwen3-next", "logits after 12 tokens", err, plain);
    EXPECT_LT(err, kTolerance);
    EXPECT_GT(plain, 100 * kTolerance);
}

TEST(Qwen3Next, ChunkedPrefillEqualsTokenByToken)
{
    expectChunkingIdentical(*fixture().engine, someTokens(90, 11)); // past one 64-token chunk
}

TEST(Qwen3Next, ThreadCountsGiveIdenticalLogits)
{
    expectThreadCountsIdentical(*fixture().engine, someTokens(40, 13));
}

TEST(Qwen3Next, RecurrentStateSavesLoadsAndReturnsToCheckpoints)
{
    checkSessionState(fixture().dir, someTokens(30, 21), someTokens(20, 22), someTokens(5, 23), someTokens(9, 24));
}
