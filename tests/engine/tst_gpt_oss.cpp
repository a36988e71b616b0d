// gpt-oss against a float64 reference written from its public modeling code
// (gqa_reference.hpp), on the tiny model's real weights (`waste mktiny --arch gpt-oss`:
// fused MXFP4 experts kept natively, a BF16 trunk): GQA attention with biases, learned
// sinks, a sliding window (16 here, so 40 tokens wrap the ring) alternating with full
// attention, YaRN RoPE; the router's softmax over its top 4 logits, experts with biases
// and the clamped SwiGLU (inputs scaled so the clamp engages); the whole forward pass.
// Each check also shows that a plausible wrong reading lands far away. Then chunked
// prefill equals token by token, thread counts agree bit for bit, session state and
// checkpoints survive (the ring is recurrent), a state saved with other key/value shapes
// is refused, and the sliding layers' KV memory, measured
// as resident pages at a 16K context, is bounded by the window.
#include "gqa_engine.hpp"
#include "plan/floor.hpp"
#include "plan/plan_inputs.hpp"
#include "session/state_file.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sys/mman.h>
#include <unistd.h>

using namespace gqatest;
using gqaref::Wrong;

namespace {

constexpr double kTolerance = 1e-5;

waste::TinyModelOptions options()
{
    waste::TinyModelOptions o;
    o.arch = "gpt-oss";
    o.seed = 7;
    o.trunkBits = 16;
    o.compactVocabulary = true; // the arithmetic, not the release's 201088-row vocabulary
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

TEST(GptOss, TheTinyModelReadsAsGptOss)
{
    const auto &m = fixture().engine->manifest;
    const auto &c = m.config;
    EXPECT_EQ(c.arch, "gpt-oss");
    EXPECT_TRUE(c.g.sinks && c.g.attnBias && c.g.expertBias && c.g.routerBias && c.g.softmaxOverTopK);
    EXPECT_FALSE(c.g.qkNorm);
    EXPECT_EQ(c.g.window, 16);
    EXPECT_EQ(c.g.sliding, (std::vector<bool>{true, false, true, false}));
    EXPECT_EQ(c.g.yarnFactor, 32.0);
    EXPECT_FALSE(c.g.yarnTruncate);
    EXPECT_EQ(c.g.swigluLimit, 7.0f);
    EXPECT_EQ(c.experts, 8);
    EXPECT_EQ(c.topK, 4);
    EXPECT_EQ(m.quant.fmtName, "MXFP4") << "the release's MXFP4 experts are kept natively";
}

TEST(GptOss, AttentionWithSinksSlidingWindowAndYarn)
{
    auto &f = fixture();
    const auto &c = f.ref->cfg();
    const int T = 40;
    double worst = 0, noSinks = INFINITY, noWindow = INFINITY, plainRope = INFINITY;
    for (int L = 0; L < c.L; ++L) {
        const auto a = inputs(T, c.H, 140 + L);
        const auto in = flat(a);
        waste::model::State st;
        st.allocate(f.engine->manifest.config, T);
        std::vector<float> out(static_cast<size_t>(T * c.H));
        for (int t = 0; t < 20; ++t)
            f.engine->forward->attention(L, 1, in.data() + t * c.H, out.data() + t * c.H, st.layers[size_t(L)], t);
        f.engine->forward->attention(L, 20, in.data() + 20 * c.H, out.data() + 20 * c.H, st.layers[size_t(L)], 20);
        gqaref::Reference::Cache rc, r1, r2, r3;
        for (int t = 0; t < T; ++t) {
            const float *got = out.data() + t * c.H;
            worst = std::max(worst, relErr(got, f.ref->attention(L, a[size_t(t)], t, rc)));
            const auto w1 = f.ref->attention(L, a[size_t(t)], t, r1, Wrong::NoSinks);
            const auto w2 = f.ref->attention(L, a[size_t(t)], t, r2, Wrong::NoWindow);
            const auto w3 = f.ref->attention(L, a[size_t(t)], t, r3, Wrong::PlainRope);
            noSinks = std::min(noSinks, relErr(got, w1));
            if (c.sliding[size_t(L)] && t >= c.window) // the window cuts only once it is full
                noWindow = std::min(noWindow, relErr(got, w2));
            if (t > 0) // YaRN scales cos and sin: only position 0's single value is unmoved
                plainRope = std::min(plainRope, relErr(got, w3));
        }
    }
    report("gpt-oss", "attention: biases, sinks, window 16, YaRN (4 x 40)", worst,
           std::min({noSinks, noWindow, plainRope}));
    EXPECT_LT(worst, kTolerance);
    EXPECT_GT(noSinks, 100 * kTolerance);
    EXPECT_GT(noWindow, 100 * kTolerance);
    EXPECT_GT(plainRope, 100 * kTolerance);
}

TEST(GptOss, TopKSoftmaxRouterAndClampedSwigluExpertsWithBiases)
{
    auto &f = fixture();
    const auto &c = f.ref->cfg();
    const int T = 8;
    double worst = 0, wrong = INFINITY, noClamp = INFINITY;
    for (int L = 0; L < c.L; ++L) {
        auto b = inputs(T, c.H, 170 + L);
        for (int t = T / 2; t < T; ++t) // large inputs: gate and up pass the limit of 7
            for (double &x : b[size_t(t)])
                x = float(x * 24.0);
        const auto in = flat(b);
        std::vector<float> out(static_cast<size_t>(T * c.H));
        f.engine->forward->feedForward(L, T, in.data(), out.data(), *f.engine->experts);
        for (int t = 0; t < T; ++t) {
            const float *got = out.data() + t * c.H;
            worst = std::max(worst, relErr(got, f.ref->moe(L, b[size_t(t)])));
            if (t < T / 2) // (at large inputs one expert takes all the weight either way)
                for (Wrong w : {Wrong::SoftmaxAll, Wrong::PlainSwiglu, Wrong::NoExpertBias})
                    wrong = std::min(wrong, relErr(got, f.ref->moe(L, b[size_t(t)], w)));
            else
                noClamp = std::min(noClamp, relErr(got, f.ref->moe(L, b[size_t(t)], Wrong::NoClamp)));
        }
    }
    report("gpt-oss", "router softmax over top 4, clamped SwiGLU, biases", worst, std::min(wrong, noClamp));
    EXPECT_LT(worst, kTolerance);
    EXPECT_GT(wrong, 100 * kTolerance);
    EXPECT_GT(noClamp, 100 * kTolerance);
}

TEST(GptOss, WholeForwardPassMatchesFloat64)
{
    auto &f = fixture();
    const auto tokens = someTokens(40, 31);
    const std::vector<float> got = f.engine->logits(tokens, 64);
    const double err = relErr(got.data(), f.ref->logits(tokens));
    report("gpt-oss", "logits after 40 tokens (the window wrapped)", err);
    EXPECT_LT(err, kTolerance);
}

TEST(GptOss, ChunkedPrefillEqualsTokenByToken)
{
    expectChunkingIdentical(*fixture().engine, someTokens(90, 33)); // past one 64-token chunk
}

TEST(GptOss, ThreadCountsGiveIdenticalLogits)
{
    expectThreadCountsIdentical(*fixture().engine, someTokens(40, 35));
}

TEST(GptOss, SessionStateSavesLoadsAndReturnsToCheckpoints)
{
    // 30 tokens, a checkpoint, 20 more: the sliding layers' ring has turned past the
    // checkpoint, so going back must restore it.
    checkSessionState(fixture().dir, someTokens(30, 41), someTokens(20, 42), someTokens(5, 43), someTokens(9, 44));
}

TEST(GptOss, SavedStateOfOtherKeyValueShapesIsRefused)
{
    // A state's key/value rows are kvHeads x headDim floats: one saved by this model (2 heads
    // of 32) has the very bytes of one with 1 head of 64, and another window or layer
    // schedule reads the rings differently. Each is refused, naming what differs, and the
    // state it was to load into is left as it was.
    auto &f = fixture();
    const waste::format::ModelConfig &c = f.engine->manifest.config;
    ASSERT_EQ(c.g.kvHeads, 2);
    ASSERT_EQ(c.g.window, 16);
    waste::model::State st;
    st.allocate(c, 64);
    const std::vector<int32_t> t = someTokens(20, 61);
    f.engine->forward->run(t, st, *f.engine->experts, nullptr);
    waste::session::ReadHistory h;
    h.append(t, -1);
    const std::string path = f.dir + "/../kv-shape.state";
    waste::session::saveState(path, c, st, h);

    auto refused = [&](const waste::format::ModelConfig &other, const std::string &what) {
        waste::model::State into;
        into.allocate(other, 64);
        waste::session::ReadHistory hist;
        try {
            waste::session::loadState(path, other, into, hist);
        } catch (const waste::Error &e) {
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
            EXPECT_EQ(into.pos, 0);
            return;
        }
        ADD_FAILURE() << "a state of 2 key/value heads of 32 loaded where " << what;
    };
    waste::format::ModelConfig heads = c;
    heads.g.kvHeads = 1;
    heads.g.headDim = 64;
    refused(heads, "model shapes differ: key/value heads is 2 in the state, 1 in this model");
    waste::format::ModelConfig window = c;
    window.g.window = 32;
    refused(window, "model shapes differ: sliding window is 16 in the state, 32 in this model");
    waste::format::ModelConfig schedule = c;
    schedule.g.sliding.flip();
    refused(schedule, "model shapes differ: the kind of layer 0 is 3 in the state, 2 in this model");
    // The model it came from reads it back.
    waste::model::State back;
    back.allocate(c, 64);
    waste::session::ReadHistory hb;
    waste::session::loadState(path, c, back, hb);
    EXPECT_EQ(back.pos, 20);
}

namespace {

// Resident bytes of a buffer's pages, as the kernel reports them (mincore): a measurement
// of this memory alone, whatever else the process holds or has freed.
int64_t residentBytes(const std::vector<float> &v)
{
    if (v.empty())
        return 0;
    const uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
    const uintptr_t a = reinterpret_cast<uintptr_t>(v.data()) / page * page;
    const uintptr_t b = (reinterpret_cast<uintptr_t>(v.data() + v.size()) + page - 1) / page * page;
    std::vector<unsigned char> in((b - a) / page);
    if (::mincore(reinterpret_cast<void *>(a), b - a, in.data()) != 0)
        return -1;
    int64_t n = 0;
    for (unsigned char c : in)
        n += (c & 1) ? int64_t(page) : 0;
    return n;
}

int64_t residentKv(const waste::model::State &st)
{
    int64_t n = 0;
    for (const auto &l : st.layers)
        n += residentBytes(l.keys) + residentBytes(l.values);
    return n;
}

} // namespace

TEST(GptOss, SlidingLayersKeepOnlyTheWindowOfKeysAndValues)
{
    auto &f = fixture();
    const auto &c = f.engine->manifest.config;
    const int ctx = 16384;
    const int64_t row = 2 * int64_t(c.g.kvHeads) * c.g.headDim * 4; // k and v of one position, f32
    // The arithmetic: 2 full layers hold ctx rows, 2 sliding layers 16 rows.
    const int64_t expect = 2 * ctx * row + 2 * 16 * row;
    waste::model::State st;
    st.allocate(c, ctx);
    EXPECT_EQ(st.bytes(), expect);
    for (int L = 0; L < c.layers; ++L)
        EXPECT_EQ(int64_t(st.layers[size_t(L)].keys.size()) * 4 * 2, (c.g.sliding[size_t(L)] ? 16 : ctx) * row) << L;
    // Resident: the allocation to within a page per buffer, far below the 4 x ctx rows that
    // keeping every position on every layer would take.
    const int64_t measured = residentKv(st);
    EXPECT_LE(std::llabs(measured - expect), 8 * 4096) << "measured " << measured;
    // Reading 300 tokens turns the rings many times and moves or grows nothing.
    std::vector<const float *> where;
    for (const auto &l : st.layers)
        where.push_back(l.keys.data());
    f.engine->forward->run(someTokens(300, 51), st, *f.engine->experts, nullptr);
    EXPECT_EQ(st.bytes(), expect);
    EXPECT_EQ(residentKv(st), measured);
    for (size_t L = 0; L < where.size(); ++L)
        EXPECT_EQ(st.layers[L].keys.data(), where[L]);
    // The planner counts the same: waste plan's attention-state term for this context.
    EXPECT_EQ(waste::plan::computeFloor(waste::plan::readPlanInputs(f.dir), ctx).state, expect);
    std::printf("[gpt-oss] KV state at ctx %d: %lld bytes by arithmetic, %lld resident (all layers full: %lld)\n", ctx,
                static_cast<long long>(expect), static_cast<long long>(measured), static_cast<long long>(4 * ctx * row));
}
