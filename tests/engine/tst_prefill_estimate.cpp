// forecast.prefill (waste::estimatePrefill): reading a prompt predicted from a container's
// geometry and a calibration. With a calibration whose panel product runs at a known speed,
// the figures follow the arithmetic written out here: the reads are the passes times the
// share of the banks their tokens route to under uniform routing, at the disk speed given;
// compute grows faster than the prompt (causal attention), and is the larger part once the
// disk is fast; without a panel timing nothing is claimed.
#include <gtest/gtest.h>

#include "model/mla_form.hpp"

#include "format/manifest.hpp"
#include "test_files.hpp"
#include "waste/calibration.hpp"
#include "waste/convert.hpp"
#include "waste/waste.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace {

waste::ComputeCalibration panelAt(double flopsPerSecond)
{
    waste::ComputeCalibration c;
    const int64_t probe = int64_t(2) * 1024 * 64 * 512 * 16;
    c.timings.push_back({"PANEL", probe / 8, double(probe / 8) / flopsPerSecond});
    c.timings.push_back({"PANEL", probe, double(probe) / flopsPerSecond});
    return c;
}

// A tiny container of `arch` made for this test, and its manifest.
struct Tiny {
    std::string dir;
    waste::format::Manifest manifest;
};

Tiny tinyContainer(const std::string &arch, uint64_t seed)
{
    Tiny t;
    t.dir = freshOutputDir("prefill-estimate", arch) + "/model.waste";
    waste::TinyModelOptions o;
    if (arch != "kimi-linear")
        o.arch = arch;
    o.seed = seed;
    waste::makeTinyContainer(t.dir, o);
    std::ifstream in(t.dir + "/manifest.json");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    t.manifest = waste::format::parseManifest(text, t.dir + "/manifest.json");
    return t;
}

// The FLOPs a one-pass read of an n-token prompt is forecast to take, from its seconds at a
// panel product of 1e10 FLOP/s.
double onePassFlops(const std::string &dir, int n)
{
    return waste::estimatePrefill(dir, panelAt(1e10), n, n, 0).computeSeconds * 1e10 * waste::kPassEfficiency;
}

// DeepSeek V4's attention over an n-token prompt, written out token by token as the forward
// pass meets it: the rows each token's heads see on every layer (its window and the compressed
// rows, or the indexer's top-k of them), and the compressed rows its indexer scores.
struct V4Rows {
    double seen = 0, scored = 0;
};
V4Rows v4Rows(const waste::format::ModelConfig &c, int n)
{
    V4Rows w;
    for (int L = 0; L < c.layers; ++L)
        for (int t = 0; t < n; ++t) {
            const int r = c.v4.ratios[size_t(L)];
            const int rows = r > 0 ? (t + 1) / r : 0;
            const bool indexer = r == 4 && rows > c.v4.indexTopk;
            w.seen += std::min(t + 1, c.v4.window) + (indexer ? c.v4.indexTopk : rows);
            w.scored += indexer ? rows : 0;
        }
    return w;
}

} // namespace

TEST(PrefillEstimate, FollowsTheArithmetic)
{
    const Tiny tiny = tinyContainer("kimi-linear", 2);
    const std::string &dir = tiny.dir;
    const waste::format::Manifest &m = tiny.manifest;
    int64_t banks = 0;
    for (const auto &[layer, bank] : m.banks)
        banks += bank.bytes;
    const double k = m.config.topK, experts = m.config.experts;

    const waste::ComputeCalibration c = panelAt(1e10);
    const double disk = 2.0; // GB/s
    const waste::PrefillEstimate e = waste::estimatePrefill(dir, c, 1000, 250, disk);
    ASSERT_TRUE(e.known);
    EXPECT_EQ(e.passes, 4);
    EXPECT_EQ(e.passTokens, 250);
    const double touched = 1.0 - std::pow(1.0 - k / experts, 250.0);
    EXPECT_NEAR(e.readSeconds, 4.0 * double(banks) * touched / (disk * 1e9), 1e-12);
    EXPECT_DOUBLE_EQ(e.seconds, std::max(e.computeSeconds, e.readSeconds));
    EXPECT_NEAR(e.tokPerS, 1000.0 / e.seconds, 1e-9);

    // Twice the speed: half the compute. Twice the prompt: more than twice the compute.
    const waste::PrefillEstimate fast = waste::estimatePrefill(dir, panelAt(2e10), 1000, 250, disk);
    EXPECT_NEAR(fast.computeSeconds, e.computeSeconds / 2, 1e-12);
    const waste::PrefillEstimate longer = waste::estimatePrefill(dir, c, 2000, 250, disk);
    EXPECT_GT(longer.computeSeconds, 2 * e.computeSeconds);
    EXPECT_EQ(longer.passes, 8);
    // One pass holding the whole prompt reads each routed expert once at most.
    const waste::PrefillEstimate whole = waste::estimatePrefill(dir, c, 1000, 4096, disk);
    EXPECT_EQ(whole.passes, 1);
    EXPECT_LE(whole.readSeconds, double(banks) / (disk * 1e9) + 1e-12);

    // A calibration without the panel product claims nothing.
    waste::ComputeCalibration old;
    old.timings.push_back({"F32", 1 << 20, 1e-4});
    EXPECT_FALSE(waste::estimatePrefill(dir, old, 1000, 250, disk).known);
}

// DeepSeek Sparse Attention (the tiny DeepSeek-V3.2, index_topk 8): past the top-k a query's
// MLA work stops growing with the prompt and its indexer's scoring does, so one pass's FLOPs
// have a constant second difference in the prompt's length: 2 FLOPs per indexer head dim
// per indexing layer (the trunk and experts are linear in it, MLA past the top-k too).
TEST(PrefillEstimate, SparseAttentionGrowsByItsIndexer)
{
    const Tiny tiny = tinyContainer("deepseek-v32", 1);
    const waste::format::ModelConfig &c = tiny.manifest.config;
    ASSERT_TRUE(c.dsa.on);
    double indexing = 0;
    for (int L = 0; L < c.layers; ++L)
        indexing += c.dsa.sharedLayer(L) ? 0 : 1;
    const auto flops = [&](int n) { return onePassFlops(tiny.dir, n); };
    for (const int n : {100, 1000}) {
        const double second = flops(n + 2) - 2 * flops(n + 1) + flops(n);
        EXPECT_NEAR(second, 2.0 * indexing * c.dsa.heads * c.dsa.headDim, 1e-3) << n;
    }
    // Below the top-k every key is attended: dense MLA's quadratic term instead, on every layer.
    const int n = 2;
    const double dense = flops(n + 2) - 2 * flops(n + 1) + flops(n);
    EXPECT_NEAR(dense, 2.0 * c.layers * c.heads * (2.0 * c.kvLora + c.qkRope), 1e-3);
}

// DeepSeek V4 (the tiny one: a window, ratio-4 layers with an indexer, a ratio-8 layer): what
// the forecast adds to the matrix FLOPs is the attention a prompt's tokens do, written out here
// token by token as the forward pass meets it.
TEST(PrefillEstimate, DeepSeekV4AttentionIsCounted)
{
    const Tiny tiny = tinyContainer("deepseek-v4", 1);
    const waste::format::ModelConfig &c = tiny.manifest.config;
    ASSERT_TRUE(c.v4.on);
    const auto flops = [&](int n) { return onePassFlops(tiny.dir, n); };
    // Attention FLOPs of an n-token prompt: every token, every layer, the rows it sees.
    const auto attention = [&](int n) {
        const V4Rows w = v4Rows(c, n);
        return 4.0 * c.heads * c.v4.headDim * w.seen + 2.0 * c.v4.indexHeads * c.v4.indexDim * w.scored;
    };
    // The rest is linear in the prompt (one pass: lm_head once), so a combination of three prompt
    // lengths that cancels any a·n + b leaves the attention alone.
    const auto curve = [](auto &&f, double a, double b, double d) {
        return f(int(a)) * (b - d) + f(int(b)) * (d - a) + f(int(d)) * (a - b);
    };
    const double got = curve(flops, 100, 300, 700), want = curve(attention, 100, 300, 700);
    EXPECT_NE(want, 0.0);
    EXPECT_NEAR(got, want, 1e-6 * std::abs(want));
}

// Each pass decodes every expert its tokens route to into panels once: with a calibrated
// decoder the compute grows by passes x the touched share of the banks x experts x that
// decoder's seconds for one expert's weights, written out here, and a prompt read in one pass
// pays it once. A container's experts are priced by their own format's decoder: a VQ3R
// container by "VQ-panels", a native MXFP4 one by "MXFP4-panels" and not by the other.
TEST(PrefillEstimate, EachPassDecodesItsExpertsOnce)
{
    const Tiny tiny = tinyContainer("kimi-linear", 3);
    const waste::format::ModelConfig &m = tiny.manifest.config;
    const double inter = double(m.moeInter);
    const double width = double(m.expertWidth());
    const double weights = 3.0 * inter * width;
    const double layers = double(tiny.manifest.banks.size());
    ASSERT_GT(layers, 0);
    const double perWeight = 1e-9; // a decoder at 1 ns a weight, on both sides of one expert's size
    waste::ComputeCalibration c = panelAt(1e10);
    c.timings.push_back({"VQ-panels", int64_t(weights) / 2, weights / 2 * perWeight});
    c.timings.push_back({"VQ-panels", int64_t(weights) * 2, weights * 2 * perWeight});

    const waste::PrefillEstimate bare = waste::estimatePrefill(tiny.dir, panelAt(1e10), 1000, 250, 0);
    EXPECT_EQ(bare.panelDecodeSeconds, 0.0); // no decoder timed: nothing claimed for it
    const waste::PrefillEstimate e = waste::estimatePrefill(tiny.dir, c, 1000, 250, 0);
    const double touched = 1.0 - std::pow(1.0 - double(m.topK) / double(m.experts), 250.0);
    const double want = 4.0 * touched * layers * double(m.experts) * weights * perWeight;
    EXPECT_NEAR(e.panelDecodeSeconds, want, 1e-9 * want);
    EXPECT_NEAR(e.computeSeconds, bare.computeSeconds + want, 1e-9 * e.computeSeconds);
    // One pass of the same prompt: every expert touched once at most.
    const waste::PrefillEstimate one = waste::estimatePrefill(tiny.dir, c, 1000, 1000, 0);
    EXPECT_EQ(one.passes, 1);
    EXPECT_LE(one.panelDecodeSeconds, layers * double(m.experts) * weights * perWeight * (1 + 1e-9));
    EXPECT_LT(one.panelDecodeSeconds, e.panelDecodeSeconds);

    // Native MXFP4 experts (the tiny K3, kept as the release stores them).
    Tiny native;
    native.dir = freshOutputDir("prefill-estimate", "k3-native") + "/model.waste";
    waste::TinyModelOptions o;
    o.k3 = true;
    o.expertEncoding = waste::ExpertEncoding::Native;
    waste::makeTinyContainer(native.dir, o);
    EXPECT_EQ(waste::estimatePrefill(native.dir, c, 1000, 250, 0).panelDecodeSeconds, 0.0);
    waste::ComputeCalibration mx = panelAt(1e10);
    mx.timings.push_back({"MXFP4-panels", 1 << 10, 1e-6});
    mx.timings.push_back({"MXFP4-panels", 1 << 20, 1e-3});
    EXPECT_GT(waste::estimatePrefill(native.dir, mx, 1000, 250, 0).panelDecodeSeconds, 0.0);
}

// The parts a pass spends outside its matrix products, each at its own calibrated speed and
// written out here: KDA token by token (tokens x KDA layers x heads x "KDA-token" at the head's
// width), the dense attention's (query, key) pairs per head at "ATTN-score" for the MLA latent's
// score and value widths (taking the place of its FLOPs), and kTokenVectorWork "VEC-token"
// passes of the hidden width per token and layer. Without those timings none is claimed.
TEST(PrefillEstimate, TimedPartsFollowTheArithmetic)
{
    const Tiny tiny = tinyContainer("kimi-linear", 4);
    const waste::format::ModelConfig &m = tiny.manifest.config;
    const double kda = m.kdaLayerCount(), mla = m.layers - kda;
    ASSERT_GT(kda, 0);
    ASSERT_GT(mla, 0);
    const int n = 300;
    const waste::PrefillEstimate bare = waste::estimatePrefill(tiny.dir, panelAt(1e10), n, n, 0);
    EXPECT_EQ(bare.linearAttentionSeconds + bare.attentionSeconds + bare.vectorSeconds, 0.0);

    waste::ComputeCalibration c = panelAt(1e10);
    // Linear in the unit between two points, so the value at any width is written out below.
    c.timings.push_back({"KDA-token", 32, 32e-9});
    c.timings.push_back({"KDA-token", 256, 256e-9});
    c.timings.push_back({"ATTN-score", 144, 144e-12});
    c.timings.push_back({"ATTN-score", 1088, 1088e-12});
    c.timings.push_back({"VEC-token", 64, 64e-10});
    c.timings.push_back({"VEC-token", 4096, 4096e-10});
    const waste::PrefillEstimate e = waste::estimatePrefill(tiny.dir, c, n, n, 0);

    const double linear = double(n) * kda * m.kdaHeads * (double(m.kdaDim) * 1e-9);
    EXPECT_NEAR(e.linearAttentionSeconds, linear, 1e-9 * linear);
    // One pass from the first position: MLA's expanded form where it pays (model/mla_form.hpp),
    // its keys' and values' widths; the absorbed latent's otherwise.
    const waste::model::MlaDims d{double(m.qkNope), double(m.qkRope), double(m.vHead), double(m.kvLora)};
    const bool expanded = waste::model::mlaExpandedPays(d, 0, n);
    const double widths = expanded ? double(m.qkNope + m.qkRope + m.vHead) : 2.0 * m.kvLora + m.qkRope;
    const double pairs = double(n) * (n + 1) / 2;
    const double attention = mla * m.heads * pairs * (widths * 1e-12);
    EXPECT_NEAR(e.attentionSeconds, attention, 1e-9 * attention);
    const double vector = double(n) * m.layers * waste::kTokenVectorWork * (double(m.hidden) * 1e-10);
    EXPECT_NEAR(e.vectorSeconds, vector, 1e-9 * vector);
    // The attention's FLOPs leave the matrix part when its pairs are timed.
    const double attentionFlops = 2.0 * mla * m.heads * widths * pairs;
    const double matrices = bare.computeSeconds - attentionFlops / 1e10 / waste::kPassEfficiency;
    EXPECT_NEAR(e.computeSeconds, matrices + linear + attention + vector, 1e-9 * e.computeSeconds);
}

// MLA's form pass by pass: a prompt's long passes take the expanded form and a short one the
// absorbed; each expanded pass also expands every earlier position again (FLOPs at the panel
// speed).
TEST(PrefillEstimate, MlaFormPassByPass)
{
    const Tiny tiny = tinyContainer("kimi-linear", 4);
    const waste::format::ModelConfig &m = tiny.manifest.config;
    const double mla = m.layers - m.kdaLayerCount();
    const waste::model::MlaDims d{double(m.qkNope), double(m.qkRope), double(m.vHead), double(m.kvLora)};
    waste::ComputeCalibration c = panelAt(1e10);
    c.timings.push_back({"ATTN-score", 144, 144e-12});
    c.timings.push_back({"ATTN-score", 1088, 1088e-12});
    // Passes of 1,024 tokens expand (the second one its first 1,024 positions again); the
    // last, shorter one stays absorbed.
    const int n = 2500, pass = 1024;
    int expandedPasses = 0, absorbedPasses = 0;
    double attention = 0, expandFlops = 0;
    for (int first = 0; first < n; first += pass) {
        const int len = std::min(pass, n - first);
        const bool expanded = waste::model::mlaExpandedPays(d, first, len);
        const double widths = expanded ? double(m.qkNope + m.qkRope + m.vHead) : 2.0 * m.kvLora + m.qkRope;
        attention += mla * m.heads * waste::model::mlaPairs(first, len) * (widths * 1e-12);
        if (expanded)
            expandFlops += 2.0 * m.kvLora * (m.qkNope + m.vHead) * m.heads * mla * first;
        (expanded ? expandedPasses : absorbedPasses)++;
    }
    EXPECT_EQ(expandedPasses, 2);
    EXPECT_EQ(absorbedPasses, 1);
    const waste::PrefillEstimate e = waste::estimatePrefill(tiny.dir, c, n, pass, 0);
    EXPECT_NEAR(e.attentionSeconds, attention, 1e-9 * attention);

    // The expanded rows of every position (heads x (dn + dr + dv) floats) must fit the room the
    // budget leaves beside the pass, as the engine lends it; a byte short, every pass is priced
    // absorbed.
    const int64_t rows = int64_t(n) * m.heads * (m.qkNope + m.qkRope + m.vHead) * int64_t(sizeof(float));
    EXPECT_EQ(e.mlaExpandBytes, rows);
    EXPECT_EQ(waste::estimatePrefill(tiny.dir, c, n, pass, 0, rows).attentionSeconds, e.attentionSeconds);
    const waste::PrefillEstimate tight = waste::estimatePrefill(tiny.dir, c, n, pass, 0, rows - 1);
    double absorbed = 0;
    for (int first = 0; first < n; first += pass)
        absorbed += mla * m.heads * waste::model::mlaPairs(first, std::min(pass, n - first)) *
                    ((2.0 * m.kvLora + m.qkRope) * 1e-12);
    EXPECT_NEAR(tight.attentionSeconds, absorbed, 1e-9 * absorbed);
    EXPECT_EQ(tight.mlaExpandBytes, rows);
    // Passes too short to expand need no room.
    EXPECT_EQ(waste::estimatePrefill(tiny.dir, c, n, 512, 0, 0).mlaExpandBytes, 0);
    // The room the budget leaves: none at the floor (its cache is the slots a prompt keeps),
    // the cache less those and the pass at every expert.
    const waste::MemoryPlan plan = waste::planMemory(tiny.dir);
    EXPECT_EQ(waste::expertCacheAt(plan, plan.floor_bytes).expand_room_bytes, 0);
    const waste::ExpertCacheShare all = waste::expertCacheAt(plan, waste::everyExpertBudget(plan));
    EXPECT_EQ(all.expand_room_bytes, all.cache_bytes - 2 * plan.min_expert_cache - all.pass_bytes);
    EXPECT_GT(all.expand_room_bytes, 0);
    // One pass of the same prompt expands no earlier position.
    const waste::PrefillEstimate one = waste::estimatePrefill(tiny.dir, c, n, n, 0);
    ASSERT_TRUE(waste::model::mlaExpandedPays(d, 0, n));
    const double oneAttention = mla * m.heads * waste::model::mlaPairs(0, n) * (double(m.qkNope + m.qkRope + m.vHead) * 1e-12);
    EXPECT_NEAR(one.attentionSeconds, oneAttention, 1e-9 * oneAttention);
    // Less the re-expansions and the lm_head row each further pass adds, the short passes'
    // matrices are the one pass's (the panels they decode aside: each pass decodes its own).
    const double heads = double(e.passes - one.passes) * 2.0 * m.vocab * m.hidden;
    const double matrices = e.computeSeconds - e.attentionSeconds - e.panelDecodeSeconds -
                            (expandFlops + heads) / 1e10 / waste::kPassEfficiency;
    EXPECT_NEAR(matrices, one.computeSeconds - one.attentionSeconds - one.panelDecodeSeconds, 1e-6 * one.computeSeconds);
}

// DeepSeek V4 with the blocked attention timed: each token's heads over the rows it sees, at
// "ATTN-score" for keys and values of the head's D, written out token by token; the indexer's
// scoring stays FLOPs.
TEST(PrefillEstimate, DeepSeekV4AttentionTimedPerRow)
{
    const Tiny tiny = tinyContainer("deepseek-v4", 2);
    const waste::format::ModelConfig &c = tiny.manifest.config;
    ASSERT_TRUE(c.v4.on);
    waste::ComputeCalibration cal = panelAt(1e10);
    cal.timings.push_back({"ATTN-score", 144, 144e-12});
    cal.timings.push_back({"ATTN-score", 1088, 1088e-12});
    for (const int n : {50, 400}) {
        const double want = double(c.heads) * v4Rows(c, n).seen * (2.0 * c.v4.headDim * 1e-12);
        EXPECT_NEAR(waste::estimatePrefill(tiny.dir, cal, n, n, 0).attentionSeconds, want, 1e-9 * want) << n;
    }
}

// VQ2R and VQ4P records decode on their own (scalar) path: a container of either is priced by
// its own decoder's timing, not VQ3R's. The plan reads the manifest alone, so the tiny
// container's, restated as each form, stands for one.
TEST(PrefillEstimate, EachVqFormHasItsOwnDecoder)
{
    const Tiny tiny = tinyContainer("kimi-linear", 5);
    std::ifstream in(tiny.dir + "/manifest.json");
    const nlohmann::json manifest = nlohmann::json::parse(in);
    ASSERT_EQ(manifest["expert_quant"]["fmt"], "VQ3R");
    waste::ComputeCalibration c = panelAt(1e10);
    for (const auto &[name, nsPerWeight] : {std::pair<const char *, double>{"VQ-panels", 1}, {"VQ2R-panels", 2},
                                            {"VQ4P-panels", 3}}) {
        c.timings.push_back({name, 1 << 10, (1 << 10) * nsPerWeight * 1e-9});
        c.timings.push_back({name, 1 << 24, (1 << 24) * nsPerWeight * 1e-9});
    }
    const double vq3r = waste::estimatePrefill(tiny.dir, c, 500, 250, 0).panelDecodeSeconds;
    ASSERT_GT(vq3r, 0);
    for (const auto &[fmt, stages, factor] : {std::tuple<const char *, int, double>{"VQ2R", 2, 2}, {"VQ4P", 4, 3}}) {
        const std::string dir = freshOutputDir("prefill-estimate", fmt) + "/model.waste";
        std::filesystem::create_directories(dir);
        nlohmann::json restated = manifest;
        restated["expert_quant"]["fmt"] = fmt;
        restated["expert_quant"]["stages"] = stages;
        std::ofstream(dir + "/manifest.json") << restated.dump();
        EXPECT_NEAR(waste::estimatePrefill(dir, c, 500, 250, 0).panelDecodeSeconds, factor * vq3r, 1e-9 * vq3r) << fmt;
    }
}
