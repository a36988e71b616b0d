// DeepSeek V4 Flash against a float64 reference written from DeepSeek's inference/model.py
// and HF's DeepseekV4 (dsv4_reference.hpp), on the tiny model's real weights (`waste mktiny
// --arch deepseek-v4`, converted with a 16-bit trunk, which keeps the FP8 trunk's decoded
// values, and the FP4 experts native, so the engine holds the release's exact values):
// attention on every kind of layer (window only, ratio 4 with the indexer, ratio 8 in place of
// Flash's 128) over 40 positions, more than index_topk rows; the router with its hash layers
// and the shared expert; the whole forward pass through the hyper-connections. Plain float by
// default, as HF computes; with the trained rounding (FP8 kv rows, FP4 indexer after a Hadamard
// transform) as model.py and ds4 compute. Each check also shows that a plausible wrong reading
// lands far away. Then the rules every architecture keeps: chunks equal token by token bit for
// bit, any thread count gives the same logits bit for bit, a saved state goes on bit for bit.
// And the config: read through the one reader, the release's keys or HF's, HF's defaults for
// keys left out, the MTP block read past, what it cannot run refused.
#include "dsv4_reference.hpp"
#include "gqa_engine.hpp"

#include "format/release_config.hpp"
#include "model/dsv4_qat.hpp"

#include <gtest/gtest.h>

#include <cstring>

using namespace gqatest;
using dsv4ref::Wrong;

namespace {

constexpr double kTolerance = 1e-5;

waste::TinyModelOptions options()
{
    waste::TinyModelOptions o;
    o.arch = "deepseek-v4";
    o.seed = 7;
    o.trunkBits = 16;
    o.expertEncoding = waste::ExpertEncoding::Native;
    return o;
}

using Fixture = TinyModel<dsv4ref::Reference>;

Fixture &fixture()
{
    static Fixture f(options());
    return f;
}

// The same container opened with the trained rounding (OpenOptions::trainedRounding sets the
// flag Forward reads), and a reference that rounds as model.py does.
struct Rounded {
    Engine engine;
    dsv4ref::Reference ref;
    Rounded()
        : engine(fixture().dir, 2),
          ref(fixture().weights.source().configText(), [](const std::string &n) { return fixture().weights(n); })
    {
        engine.manifest.config.v4.trainedRounding = true;
        engine.forward = std::make_unique<waste::model::Forward>(engine.manifest, engine.weights, engine.books, engine.pool.get());
        ref.rounding = true;
    }
};

Rounded &rounded()
{
    static Rounded r;
    return r;
}

// Attention of `layers`, T positions (12 one at a time, the rest as one chunk), against the
// reference: the worst error, and the least any of `wrongs` moves the worst token. `trained`:
// the engine and the reference with the trained rounding.
std::pair<double, double> attentionErrors(std::initializer_list<int> layers, std::initializer_list<Wrong> wrongs, int T = 40,
                                          bool trained = false)
{
    Engine &engine = trained ? rounded().engine : *fixture().engine;
    const dsv4ref::Reference &ref = trained ? rounded().ref : *fixture().ref;
    const auto &c = ref.cfg();
    double worst = 0, weakest = INFINITY;
    std::vector<double> far(wrongs.size(), 0.0);
    for (int L : layers) {
        const auto a = inputs(T, c.H, 40 + L);
        const std::vector<float> out = attentionOutputs(engine, L, flat(a), c.H);
        const auto want = ref.attention(L, a);
        for (int t = 0; t < T; ++t)
            worst = std::max(worst, relErr(out.data() + t * c.H, want[size_t(t)]));
        size_t i = 0;
        for (Wrong w : wrongs) {
            const auto x = ref.attention(L, a, w);
            for (int t = 0; t < T; ++t)
                far[i] = std::max(far[i], relErr(out.data() + t * c.H, x[size_t(t)]));
            ++i;
        }
    }
    for (double x : far)
        weakest = std::min(weakest, x);
    return {worst, wrongs.size() ? weakest : 0.0};
}

std::pair<double, double> ffnErrors(std::initializer_list<int> layers, std::initializer_list<Wrong> wrongs)
{
    auto &f = fixture();
    const auto &c = f.ref->cfg();
    const int T = 8;
    double worst = 0, weakest = INFINITY;
    std::vector<double> far(wrongs.size(), 0.0);
    for (int L : layers) {
        const auto b = inputs(T, c.H, 70 + L);
        const auto ids = f.tokens(T, 80 + unsigned(L));
        const auto in = flat(b);
        std::vector<float> out(size_t(T * c.H));
        f.engine->forward->setTokenIds(ids.data());
        f.engine->forward->feedForward(L, T, in.data(), out.data(), *f.engine->experts);
        for (int t = 0; t < T; ++t) {
            worst = std::max(worst, relErr(out.data() + t * c.H, f.ref->ffn(L, b[size_t(t)], ids[size_t(t)])));
            size_t i = 0;
            for (Wrong w : wrongs) {
                far[i] = std::max(far[i], relErr(out.data() + t * c.H, f.ref->ffn(L, b[size_t(t)], ids[size_t(t)], w)));
                ++i;
            }
        }
    }
    for (double x : far)
        weakest = std::min(weakest, x);
    return {worst, wrongs.size() ? weakest : 0.0};
}

// The engine's logits after `tokens` (chunks of 64) against the reference's last ones, and
// against a reading that must land far away.
std::pair<double, double> logitErrors(Engine &engine, const std::vector<int32_t> &tokens, const gqaref::Vec &want,
                                      const gqaref::Vec &far)
{
    const std::vector<float> got = engine.logits(tokens, 64);
    return {relErr(got.data(), want), relErr(got.data(), far)};
}

std::string tinyConfig() { return fixture().weights.source().configText(); }
waste::format::ModelConfig readConfig(const nlohmann::json &j) { return waste::format::readReleaseConfig(j); }

} // namespace

TEST(Dsv4, TheTinyModelReadsAsDeepSeekV4)
{
    const auto &m = fixture().engine->manifest;
    const auto &c = m.config;
    EXPECT_EQ(c.arch, "deepseek-v4");
    ASSERT_TRUE(c.v4.on);
    EXPECT_EQ(c.v4.ratios, (std::vector<int>{0, 0, 4, 8, 4, 8}));
    EXPECT_EQ(c.v4.headDim, 96);
    EXPECT_EQ(c.v4.ropeDim, 32);
    EXPECT_EQ(c.v4.window, 8);
    EXPECT_EQ(c.v4.indexTopk, 4);
    EXPECT_EQ(c.v4.hashLayers, 2);
    EXPECT_EQ(c.v4.hcMult, 4);
    EXPECT_EQ(c.v4.oGroups, 2);
    EXPECT_FLOAT_EQ(c.v4.swigluLimit, 10.0f);
    EXPECT_EQ(c.experts, 8);
    EXPECT_EQ(c.topK, 2);
    EXPECT_EQ(c.sharedExperts, 1);
    EXPECT_FLOAT_EQ(c.routedScale, 1.5f);
    EXPECT_EQ(m.quant.fmtName, "MXFP4"); // the FP4 experts kept as released
    EXPECT_EQ(m.banks.size(), 6u);
    // The MTP block is read past: none of its tensors, no bank for it.
    const auto names = fixture().weights.source().tensorNames();
    EXPECT_TRUE(std::count(names.begin(), names.end(), "mtp.0.e_proj.weight"));
    for (const auto &t : m.trunk)
        EXPECT_FALSE(t.name.starts_with("mtp.")) << t.name;
    // The FP8 trunk arrives decoded (its ue8m0 scales read), the mixes, tables and ids as F32.
    EXPECT_EQ(m.find("layers.0.ffn.gate.tid2eid")->format, waste::format::TrunkFormat::F32);
    EXPECT_EQ(m.find("layers.2.hc_attn_fn")->format, waste::format::TrunkFormat::F32);
}

TEST(Dsv4, QatRoundTripsOnTheirGrids)
{
    using namespace waste::model;
    // e4m3: 3 mantissa bits, ties to the even code, saturation at 448; e2m1: {0, .5, 1, 1.5, 2, 3, 4, 6}.
    EXPECT_EQ(roundE4m3(1.0625f), 1.0f);   // halfway between 1 and 1.125: even code
    EXPECT_EQ(roundE4m3(1.1875f), 1.25f);  // halfway between 1.125 and 1.25: even code
    EXPECT_EQ(roundE4m3(500.0f), 448.0f);
    EXPECT_EQ(roundE4m3(std::ldexp(1.4f, -10)), std::ldexp(1.0f, -9)); // subnormals step by 2^-9
    EXPECT_EQ(roundE2m1(1.75f), 2.0f);
    EXPECT_EQ(roundE2m1(2.5f), 2.0f);
    EXPECT_EQ(roundE2m1(5.0f), 4.0f);
    EXPECT_EQ(roundE2m1(-7.0f), -6.0f);
    // A block's scale is the power of two that brings its largest value within qmax.
    std::vector<float> x(64, 0.0f);
    x[0] = 900.0f; // 900/448 → scale 4: 225 → e4m3 224 → 896
    x[1] = 3.0f;   // 0.75 → 0.75 → 3
    fp8RoundTrip(x.data(), 64, 64);
    EXPECT_EQ(x[0], 896.0f);
    EXPECT_EQ(x[1], 3.0f);
    std::vector<float> h = {1, 0, 0, 0};
    hadamard(h.data(), 4);
    for (float v : h)
        EXPECT_FLOAT_EQ(v, 0.5f);
}

TEST(Dsv4, WindowOnlyAttention)
{
    const auto [worst, weakest] = attentionErrors({0, 1}, {Wrong::NoSink, Wrong::FlipRounding});
    report("deepseek-v4", "window-only attention, sinks, plain float kv (2 x 40)", worst, weakest);
    EXPECT_LT(worst, kTolerance);
    EXPECT_GT(weakest, 100 * kTolerance);
}

TEST(Dsv4, RatioFourAttentionWithTheIndexer)
{
    const auto [worst, weakest] =
        attentionErrors({2, 4}, {Wrong::NoCompressed, Wrong::NoOverlap, Wrong::AllRows, Wrong::PlainRope});
    report("deepseek-v4", "ratio-4 rows, overlap, indexer top-4 of 10 (2 x 40)", worst, weakest);
    EXPECT_LT(worst, kTolerance);
    EXPECT_GT(weakest, 100 * kTolerance);
}

TEST(Dsv4, RatioEightAttention)
{
    const auto [worst, weakest] = attentionErrors({3, 5}, {Wrong::NoCompressed, Wrong::PlainRope});
    report("deepseek-v4", "ratio-8 rows, YaRN-blended RoPE (2 x 40)", worst, weakest);
    EXPECT_LT(worst, kTolerance);
    EXPECT_GT(weakest, 100 * kTolerance);
}

TEST(Dsv4, HashRoutedLayers)
{
    const auto [worst, weakest] = ffnErrors({0, 1}, {Wrong::NoHash, Wrong::SoftmaxRouter});
    report("deepseek-v4", "tid2eid routing, sqrt-softplus weights, shared expert", worst, weakest);
    EXPECT_LT(worst, kTolerance);
    EXPECT_GT(weakest, 100 * kTolerance);
}

TEST(Dsv4, ScoreRoutedLayers)
{
    const auto [worst, weakest] = ffnErrors({2, 3, 4, 5}, {Wrong::SoftmaxRouter});
    report("deepseek-v4", "sqrt-softplus top-2 with bias, scale 1.5, experts", worst, weakest);
    EXPECT_LT(worst, kTolerance);
    EXPECT_GT(weakest, 100 * kTolerance);
}

TEST(Dsv4, WholeForwardPassMatchesFloat64)
{
    auto &f = fixture();
    const auto tokens = f.tokens(40, 9);
    const auto [err, wrong] =
        logitErrors(*f.engine, tokens, f.ref->logits(tokens).back(), f.ref->logits(tokens, Wrong::NoSinkhorn).back());
    report("deepseek-v4", "logits after 40 tokens (hyper-connections)", err, wrong);
    EXPECT_LT(err, kTolerance);
    EXPECT_GT(wrong, 100 * kTolerance);
}

TEST(Dsv4, TrainedRoundingRoundsAsModelPy)
{
    // Every kind of layer: the FP8 kv rows and compressed rows, the indexer's Hadamard and FP4.
    const auto [worst, weakest] = attentionErrors({0, 2, 3}, {Wrong::FlipRounding}, 40, true);
    report("deepseek-v4", "trained rounding: window, ratio 4 + indexer, ratio 8", worst, weakest);
    EXPECT_LT(worst, kTolerance);
    EXPECT_GT(weakest, 100 * kTolerance);
    auto &r = rounded();
    const auto tokens = fixture().tokens(40, 9);
    const auto [err, plain] = logitErrors(r.engine, tokens, r.ref.logits(tokens).back(), fixture().ref->logits(tokens).back());
    report("deepseek-v4", "trained rounding: logits after 40 tokens", err, plain);
    EXPECT_LT(err, kTolerance);
    EXPECT_GT(plain, 100 * kTolerance);
}

TEST(Dsv4, TrainedRoundingIsAnOpenOption)
{
    auto &f = fixture();
    const auto tokens = f.tokens(12, 5);
    waste::OpenOptions o;
    o.trainedRounding = true;
    auto trained = waste::Model::open(f.dir, o);
    EXPECT_TRUE(trained->info().trainedRounding);
    auto plain = waste::Model::open(f.dir);
    EXPECT_FALSE(plain->info().trainedRounding);
    // The option is the flag the component tests set. (Model::eval reads the prompt in one
    // pass, the component engine in chunks of 64: the sums' order differs, not the rounding.)
    const auto gap = [](const std::vector<float> &x, const std::vector<float> &y) {
        double g = 0;
        for (size_t i = 0; i < x.size(); ++i)
            g = std::max(g, double(std::fabs(x[i] - y[i])));
        return g;
    };
    const std::vector<float> a = trained->eval(tokens), b = plain->eval(tokens);
    EXPECT_LT(gap(a, rounded().engine.logits(tokens, 64)), 1e-4);
    EXPECT_LT(gap(b, f.engine->logits(tokens, 64)), 1e-4);
    EXPECT_GT(gap(a, b), 1e-3);
}

TEST(Dsv4, ChunkedPrefillEqualsTokenByToken)
{
    expectChunkingIdentical(*fixture().engine, fixture().tokens(90, 11)); // past one 64-token chunk
}

TEST(Dsv4, ThreadCountsGiveIdenticalLogits)
{
    expectThreadCountsIdentical(*fixture().engine, fixture().tokens(40, 13));
}

TEST(Dsv4, SessionStateSavesLoadsAndReturnsToCheckpoints)
{
    auto &f = fixture();
    checkSessionState(f.dir, f.tokens(30, 21), f.tokens(20, 22), f.tokens(5, 23), f.tokens(9, 24));
}

TEST(Dsv4, ConfigKeysAndRefusals)
{
    const nlohmann::json base = nlohmann::json::parse(tinyConfig());
    // model_type alone names the family.
    nlohmann::json j = base;
    j.erase("architectures");
    EXPECT_EQ(readConfig(j).arch, "deepseek-v4");
    // The release's own quantization_config describes the trunk; expert_dtype fp4 the experts.
    EXPECT_EQ(waste::format::defaultExpertFormat(base), waste::format::kFmtMXFP4);
    const auto refusal = [&](const char *key, nlohmann::json value) {
        nlohmann::json k = base;
        k[key] = value;
        try {
            readConfig(k);
        } catch (const waste::Error &e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_NE(refusal("scoring_func", "softmax").find("scoring_func 'softmax' is not supported"), std::string::npos);
    EXPECT_NE(refusal("n_shared_experts", 2).find("exactly one shared expert"), std::string::npos);
    EXPECT_NE(refusal("compress_ratios", nlohmann::json::array({0, 4})).find("compress_ratios"), std::string::npos);
    EXPECT_NE(refusal("qk_rope_head_dim", 33).find("even"), std::string::npos);
    // The indexer's Hadamard transform needs a power of two only when the rounding is asked for.
    nlohmann::json wide = base;
    wide["index_head_dim"] = 48;
    EXPECT_NO_THROW(waste::format::checkTrainedRounding(readConfig(base)));
    try {
        waste::format::checkTrainedRounding(readConfig(wide));
        ADD_FAILURE() << "index_head_dim 48 accepted for the trained rounding";
    } catch (const waste::Error &e) {
        EXPECT_NE(std::string(e.what()).find("power of two"), std::string::npos) << e.what();
    }
    EXPECT_NE(refusal("num_key_value_heads", 2).find("num_key_value_heads"), std::string::npos);
    nlohmann::json noRatios = base;
    noRatios.erase("compress_ratios"); // HF would build V4-Pro's schedule: required here
    EXPECT_THROW(readConfig(noRatios), waste::Error);
}

TEST(Dsv4, HfDefaultsForKeysLeftOut)
{
    // HF's DeepseekV4Config: routed_scaling_factor 1.5, swiglu_limit 10, three hash layers,
    // compress_rope_theta 160000, qk_rope_head_dim 64/512 of head_dim, max_position_embeddings
    // as YaRN's original length.
    nlohmann::json j = nlohmann::json::parse(tinyConfig());
    for (const char *key : {"routed_scaling_factor", "swiglu_limit", "num_hash_layers", "compress_rope_theta", "qk_rope_head_dim"})
        j.erase(key);
    j["rope_scaling"].erase("original_max_position_embeddings");
    const auto c = readConfig(j);
    EXPECT_FLOAT_EQ(c.routedScale, 1.5f);
    EXPECT_FLOAT_EQ(c.v4.swigluLimit, 10.0f);
    EXPECT_EQ(c.v4.hashLayers, 3);
    EXPECT_EQ(c.v4.compressTheta, 160000.0);
    EXPECT_EQ(c.v4.ropeDim, 96 / 8);
    EXPECT_EQ(c.v4.yarnOrig, j["max_position_embeddings"].get<double>());
    // norm_topk_prob is read past: model.py and HF always divide by the chosen scores' sum.
    j["norm_topk_prob"] = false;
    EXPECT_TRUE(readConfig(j).renormalize);
}

TEST(Dsv4, ConfigAsHfSavesIt)
{
    // A config HF's DeepseekV4Config saved: layer kinds and rates, the MoE schedule, both RoPE
    // tables nested, the rotated share as a factor. It reads as the release's own keys do.
    const nlohmann::json base = nlohmann::json::parse(tinyConfig());
    const auto want = readConfig(base);
    nlohmann::json j = base;
    nlohmann::json kinds = nlohmann::json::array(), mlp = nlohmann::json::array();
    for (int L = 0; L < want.layers; ++L) {
        const int r = want.v4.ratio(L);
        kinds.push_back(r == 0 ? "sliding_attention" : r == 4 ? "compressed_sparse_attention" : "heavily_compressed_attention");
        mlp.push_back(L < want.v4.hashLayers ? "hash_moe" : "moe");
    }
    j["layer_types"] = kinds;
    j["compress_rates"] = {{"compressed_sparse_attention", 4}, {"heavily_compressed_attention", 8}};
    j["mlp_layer_types"] = mlp;
    j["partial_rotary_factor"] = double(want.v4.ropeDim) / double(want.v4.headDim);
    nlohmann::json compress = base["rope_scaling"];
    compress["rope_type"] = "yarn";
    compress["rope_theta"] = base["compress_rope_theta"];
    compress["attention_factor"] = 1.0;
    j["rope_parameters"] = {{"main", {{"rope_type", "default"}, {"rope_theta", base["rope_theta"]}}}, {"compress", compress}};
    for (const char *key : {"compress_ratios", "num_hash_layers", "qk_rope_head_dim", "rope_theta", "compress_rope_theta", "rope_scaling"})
        j.erase(key);
    const auto got = readConfig(j);
    EXPECT_EQ(got.v4.ratios, want.v4.ratios);
    EXPECT_EQ(got.v4.hashLayers, want.v4.hashLayers);
    EXPECT_EQ(got.v4.ropeDim, want.v4.ropeDim);
    EXPECT_EQ(got.v4.ropeTheta, want.v4.ropeTheta);
    EXPECT_EQ(got.v4.compressTheta, want.v4.compressTheta);
    EXPECT_EQ(got.v4.yarnFactor, want.v4.yarnFactor);
    EXPECT_EQ(got.v4.yarnOrig, want.v4.yarnOrig);
    EXPECT_EQ(got.v4.betaFast, want.v4.betaFast);
    EXPECT_EQ(got.v4.betaSlow, want.v4.betaSlow);
    // compress_rate_hca overrides the ratio the release's list gives that kind, as HF lets it.
    nlohmann::json over = base;
    over["compress_ratios"][3] = 128;
    over["compress_rate_hca"] = 16;
    EXPECT_EQ(readConfig(over).v4.ratio(3), 16);
    // What the engine cannot compute is refused, not dropped.
    const auto refused = [&](const nlohmann::json &k, const char *what) {
        try {
            readConfig(k);
        } catch (const waste::Error &e) {
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
            return;
        }
        ADD_FAILURE() << "accepted: " << what;
    };
    nlohmann::json magnitude = j;
    magnitude["rope_parameters"]["compress"].erase("attention_factor"); // HF would derive 0.1·ln(f) + 1
    refused(magnitude, "attention_factor");
    nlohmann::json late = j;
    late["mlp_layer_types"][0] = "moe";
    late["mlp_layer_types"][1] = "hash_moe";
    refused(late, "hash-routed layers after");
    nlohmann::json rate = j;
    rate["compress_rates"]["compressed_sparse_attention"] = 8;
    refused(rate, "rate other than 4");
    nlohmann::json kind = j;
    kind["layer_types"][0] = "full_attention";
    refused(kind, "layer_types[0]");
}
