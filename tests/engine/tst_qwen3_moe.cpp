// Qwen3-MoE against a float64 reference written from its public modeling code
// (gqa_reference.hpp), on the tiny model's real weights (`waste mktiny --arch qwen3-moe`,
// converted with a BF16 trunk and native BF16 experts so the engine holds the release's
// exact values): GQA attention with per-head q/k RMSNorm and RoPE over a growing cache,
// the softmax router with norm_topk_prob and its experts, and the whole forward pass.
// Each check also shows that a plausible wrong reading lands far away. Then the rules
// every architecture keeps: chunked prefill equals token by token, and any thread count
// gives the same logits, bit for bit.
#include "gqa_engine.hpp"

#include <gtest/gtest.h>

#include <cstring>

using namespace gqatest;
using gqaref::Wrong;

namespace {

constexpr double kTolerance = 1e-5;

waste::TinyModelOptions options()
{
    waste::TinyModelOptions o;
    o.arch = "qwen3-moe";
    o.seed = 5;
    o.trunkBits = 16;
    o.expertEncoding = waste::ExpertEncoding::Native;
    return o;
}

using Fixture = TinyModel<gqaref::Reference>;

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

TEST(Qwen3Moe, TheTinyModelReadsAsQwen3)
{
    const auto &c = fixture().engine->manifest.config;
    EXPECT_EQ(c.arch, "qwen3-moe");
    EXPECT_TRUE(c.g.on);
    EXPECT_TRUE(c.g.qkNorm);
    EXPECT_FALSE(c.g.sinks);
    EXPECT_EQ(c.g.window, 0);
    EXPECT_EQ(c.heads / c.g.kvHeads, 2);
    EXPECT_EQ(c.experts, 16);
    EXPECT_EQ(c.topK, 4);
    EXPECT_TRUE(c.renormalize);
    EXPECT_EQ(c.sharedExperts, 0);
    EXPECT_EQ(fixture().engine->manifest.quant.fmtName, "BF16");
}

TEST(Qwen3Moe, GqaAttentionWithQkNormAndRope)
{
    auto &f = fixture();
    const auto &c = f.ref->cfg();
    const int T = 20;
    double worst = 0, noNorm = INFINITY, pairs = INFINITY;
    for (int L = 0; L < c.L; ++L) {
        const auto a = inputs(T, c.H, 40 + L);
        const auto in = flat(a);
        // Tokens 0..11 one at a time, 12..19 as one chunk.
        const std::vector<float> out = attentionOutputs(*f.engine, L, in, c.H);
        gqaref::Reference::Cache rc, r1, r2;
        for (int t = 0; t < T; ++t) {
            worst = std::max(worst, relErr(out.data() + t * c.H, f.ref->attention(L, a[size_t(t)], t, rc)));
            const gqaref::Vec w1 = f.ref->attention(L, a[size_t(t)], t, r1, Wrong::NoQkNorm);
            const gqaref::Vec w2 = f.ref->attention(L, a[size_t(t)], t, r2, Wrong::AdjacentPairs);
            if (t == 0) // one position: its value whatever q and k are, and no turn
                continue;
            noNorm = std::min(noNorm, relErr(out.data() + t * c.H, w1));
            pairs = std::min(pairs, relErr(out.data() + t * c.H, w2));
        }
    }
    report("qwen3-moe", "GQA attention, q/k norm, RoPE (4 layers x 20 tokens)", worst, std::min(noNorm, pairs));
    EXPECT_LT(worst, kTolerance);
    EXPECT_GT(noNorm, 100 * kTolerance);
    EXPECT_GT(pairs, 100 * kTolerance);
}

TEST(Qwen3Moe, SoftmaxRouterWithNormTopkProbAndExperts)
{
    auto &f = fixture();
    const auto &c = f.ref->cfg();
    const int T = 6;
    double worst = 0, noRenorm = INFINITY;
    for (int L = 0; L < c.L; ++L) {
        const auto b = inputs(T, c.H, 70 + L);
        const auto in = flat(b);
        std::vector<float> out(size_t(T * c.H));
        f.engine->forward->feedForward(L, T, in.data(), out.data(), *f.engine->experts);
        for (int t = 0; t < T; ++t) {
            worst = std::max(worst, relErr(out.data() + t * c.H, f.ref->moe(L, b[size_t(t)])));
            noRenorm = std::min(noRenorm, relErr(out.data() + t * c.H, f.ref->moe(L, b[size_t(t)], Wrong::NoRenorm)));
        }
    }
    report("qwen3-moe", "softmax router top-4 of 16, norm_topk_prob, experts", worst, noRenorm);
    EXPECT_LT(worst, kTolerance);
    EXPECT_GT(noRenorm, 100 * kTolerance);
}

TEST(Qwen3Moe, WholeForwardPassMatchesFloat64)
{
    auto &f = fixture();
    const auto tokens = someTokens(12, 9);
    const std::vector<float> got = f.engine->logits(tokens, 64);
    const double err = relErr(got.data(), f.ref->logits(tokens));
    report("qwen3-moe", "logits after 12 tokens", err);
    EXPECT_LT(err, kTolerance);
}

TEST(Qwen3Moe, ChunkedPrefillEqualsTokenByToken)
{
    expectChunkingIdentical(*fixture().engine, someTokens(90, 11)); // past one 64-token chunk
}

TEST(Qwen3Moe, ThreadCountsGiveIdenticalLogits)
{
    expectThreadCountsIdentical(*fixture().engine, someTokens(40, 13));
}

TEST(Qwen3Moe, TiedEmbeddingsServeAsTheHead)
{
    // A config that ties the head to the embedding table: no lm_head tensor, and the
    // loaded head is the embedding table itself.
    const std::string dir = freshOutputDir("qwen3-moe", "tied");
    waste::makeTinyContainer(dir, options());
    std::string manifest = slurp(dir + "/manifest.json");
    const auto m = waste::format::parseManifest(manifest, "manifest.json");
    EXPECT_FALSE(m.config.g.tied);
    auto j = nlohmann::json::parse(manifest);
    j["config"]["tie_word_embeddings"] = true;
    const auto tied = waste::format::parseManifest(j.dump(), "manifest.json");
    EXPECT_TRUE(tied.config.g.tied);
    waste::format::Trunk trunk(dir + "/trunk.bin", tied);
    const waste::model::Weights w = waste::model::loadWeights(tied, trunk);
    EXPECT_EQ(w.head, w.embed);
    EXPECT_FALSE(w.embed->f32.empty() && w.embed->payload.empty()) << "a tied table must be resident";
}

TEST(Qwen3Moe, SessionStateSavesLoadsAndReturnsToCheckpoints)
{
    checkSessionState(fixture().dir, someTokens(30, 21), someTokens(20, 22), someTokens(5, 23), someTokens(9, 24));
}
