// Every Kimi K3 component of the engine against a plain float64 implementation written
// here from reference/k3-math.md and kimi-linear-math.md, on the real weights of the
// tiny K3 container (`waste mktiny --k3`, MXFP4 experts converted to VQ3R):
//   KDA with the bounded decay gate and the full-rank output gate (state across tokens),
//   MLA with q_lora and the output gate (expanded, not absorbed, form),
//   the latent MoE with SiTU-GLU, the router and 2 shared experts, and the SiTU dense FFN,
//   the Attention-Residuals mixing function, and the whole forward pass (block history,
//   output aggregation) against Model::eval.
// The reference (k3_reference.hpp) reads manifest.json, trunk.bin, codebooks.bin and the
// expert banks with its own decoders. Error = max |engine − reference| / max |reference| per output vector;
// each component must be within 1e-5. Each test also checks that a plausible wrong
// reading of its K3 switch is far from the engine, so none of them can pass by accident.
#include "format/manifest.hpp"
#include "model/attn_res.hpp"
#include "model/forward.hpp"
#include "model/state.hpp"

#include "k3_reference.hpp"
#include "opened_container.hpp"
#include "test_files.hpp"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>

namespace fs = std::filesystem;
using namespace k3ref; // Vec, json, the readers and the float64 Reference

namespace {

constexpr double kTolerance = 1e-5;

// ---- The engine's side -----------------------------------------------------------------

using Engine = enginetest::OpenedContainer;
using enginetest::inputs;
using enginetest::relErr;

struct Fixture {
    std::string dir;
    std::unique_ptr<Container> container;
    std::unique_ptr<Reference> ref;
    std::unique_ptr<Engine> engine;
    Fixture()
    {
        dir = std::string(WASTE_TEST_OUTPUT_DIR) + "/k3-components/tiny-k3";
        fs::remove_all(dir);
        waste::TinyModelOptions o;
        o.k3 = true;
        o.seed = 3;
        o.expertEncoding = waste::ExpertEncoding::VQ3R; // the reference below reads VQ records
        waste::makeTinyContainer(dir, o);
        container = std::make_unique<Container>(dir);
        ref = std::make_unique<Reference>(*container);
        engine = std::make_unique<Engine>(dir);
    }
};
const Fixture &fixture()
{
    static Fixture f;
    return f;
}

// max |engine − reference| / max |reference|.
std::vector<float> toFloat(const std::vector<Vec> &v)
{
    std::vector<float> out;
    for (const auto &x : v)
        out.insert(out.end(), x.begin(), x.end());
    return out;
}

void report(const char *what, double err, double wrong = 0)
{
    std::printf("[k3-component] %-58s max rel err %.2e (limit %.0e)", what, err, kTolerance);
    if (wrong > 0)
        std::printf("; wrong reading %.2e", wrong);
    std::printf("\n");
}

} // namespace

TEST(K3Components, TheTinyModelHasEveryK3SwitchOn)
{
    const auto &c = fixture().engine->manifest.config;
    EXPECT_EQ(c.arch, "kimi-k3");
    EXPECT_EQ(fixture().engine->manifest.prefix, "language_model.");
    EXPECT_GT(c.latentMoe, 0);
    EXPECT_TRUE(c.latentNorm);
    EXPECT_TRUE(c.situ);
    EXPECT_TRUE(c.fullRankGate);
    EXPECT_LT(c.gateLowerBound, 0.0f);
    EXPECT_GT(c.qLora, 0);
    EXPECT_TRUE(c.mlaOutputGate);
    EXPECT_GT(c.attnResBlock, 0);
    EXPECT_EQ(c.sharedExperts, 2);
    EXPECT_EQ(c.experts, 16);
    EXPECT_EQ(c.topK, 4);
}

TEST(K3Components, KdaWithBoundedDecayGateAndFullRankOutputGate)
{
    const auto &f = fixture();
    const Config &c = f.ref->cfg();
    const int T = 24;
    double worst = 0, wrongGate = INFINITY;
    int layers = 0;
    for (int L = 0; L < c.layers; ++L) {
        if (!c.kda[size_t(L)])
            continue;
        ++layers;
        const auto a = inputs(T, c.Hd, 100 + L);
        waste::model::State st;
        st.allocate(f.engine->manifest.config, T);
        auto rs = f.ref->kdaState(), wrongState = f.ref->kdaState();
        // Tokens 0..15 one at a time, 16..23 as one chunk: both keep the state.
        std::vector<float> out(static_cast<size_t>(T * c.Hd));
        const auto in = toFloat(a);
        for (int t = 0; t < 16; ++t)
            f.engine->forward->attention(L, 1, in.data() + t * c.Hd, out.data() + t * c.Hd, st.layers[size_t(L)], t);
        f.engine->forward->attention(L, 8, in.data() + 16 * c.Hd, out.data() + 16 * c.Hd, st.layers[size_t(L)], 16);
        for (int t = 0; t < T; ++t) {
            worst = std::max(worst, relErr(out.data() + t * c.Hd, f.ref->kda(L, a[size_t(t)], rs)));
            const Vec w = f.ref->kda(L, a[size_t(t)], wrongState, Wrong::SoftplusGate);
            if (t > 0) // token 0 sees an empty state, where the decay gate does not matter
                wrongGate = std::min(wrongGate, relErr(out.data() + t * c.Hd, w));
        }
        // The state itself, after 24 tokens.
        const auto &S = st.layers[size_t(L)].S;
        double num = 0, den = 0;
        for (size_t i = 0; i < S.size(); ++i)
            num = std::max(num, std::fabs(double(S[i]) - rs.S[i])), den = std::max(den, std::fabs(rs.S[i]));
        worst = std::max(worst, num / den);
    }
    EXPECT_EQ(layers, 4);
    report("KDA (bounded decay gate, full-rank output gate; 4 layers x 24)", worst, wrongGate);
    EXPECT_LE(worst, kTolerance);
    EXPECT_GT(wrongGate, 1e-3) << "the Kimi-Linear softplus gate would pass too";
}

TEST(K3Components, MlaWithQLoraAndOutputGate)
{
    const auto &f = fixture();
    const Config &c = f.ref->cfg();
    const int T = 20;
    double worst = 0, wrongGate = INFINITY;
    int layers = 0;
    for (int L = 0; L < c.layers; ++L) {
        if (c.kda[size_t(L)])
            continue;
        ++layers;
        const auto a = inputs(T, c.Hd, 200 + L);
        waste::model::State st;
        st.allocate(f.engine->manifest.config, T);
        Reference::MlaCache cache, wrongCache;
        std::vector<float> out(static_cast<size_t>(T * c.Hd));
        const auto in = toFloat(a);
        f.engine->forward->attention(L, 12, in.data(), out.data(), st.layers[size_t(L)], 0);
        for (int t = 12; t < T; ++t)
            f.engine->forward->attention(L, 1, in.data() + t * c.Hd, out.data() + t * c.Hd, st.layers[size_t(L)], t);
        for (int t = 0; t < T; ++t) {
            worst = std::max(worst, relErr(out.data() + t * c.Hd, f.ref->mla(L, a[size_t(t)], cache)));
            wrongGate = std::min(wrongGate, relErr(out.data() + t * c.Hd, f.ref->mla(L, a[size_t(t)], wrongCache, Wrong::NoOutputGate)));
        }
    }
    EXPECT_EQ(layers, 2);
    report("MLA (q_lora + q_a_layernorm, sigmoid output gate; 2 layers x 20)", worst, wrongGate);
    EXPECT_LE(worst, kTolerance);
    EXPECT_GT(wrongGate, 1e-3) << "an MLA without its output gate would pass too";
}

TEST(K3Components, LatentMoeWithSituGluAndTwoSharedExperts)
{
    const auto &f = fixture();
    const Config &c = f.ref->cfg();
    const int T = 12;
    double worst = 0, wrongAct = INFINITY;
    std::map<int, int> used;
    for (int L = int(c.firstDense); L < c.layers; ++L) {
        const auto b = inputs(T, c.Hd, 300 + L);
        const auto in = toFloat(b);
        std::vector<float> chunk(static_cast<size_t>(T * c.Hd)), single(static_cast<size_t>(c.Hd));
        f.engine->forward->feedForward(L, T, in.data(), chunk.data(), *f.engine->experts); // one chunk
        for (int t = 0; t < T; ++t) {
            std::vector<int> chosen;
            const Vec want = f.ref->moe(L, b[size_t(t)], &chosen);
            for (int e : chosen)
                ++used[e];
            worst = std::max(worst, relErr(chunk.data() + t * c.Hd, want));
            f.engine->forward->feedForward(L, 1, in.data() + t * c.Hd, single.data(), *f.engine->experts);
            worst = std::max(worst, relErr(single.data(), want));
            wrongAct = std::min(wrongAct, relErr(single.data(), f.ref->moe(L, b[size_t(t)], nullptr, Wrong::Silu)));
        }
    }
    EXPECT_GE(used.size(), 12u) << "the inputs should route to most of the 16 experts";
    report("latent MoE (router, SiTU-GLU, latent norm, 2 shared; 5 layers x 12)", worst, wrongAct);
    EXPECT_LE(worst, kTolerance);
    EXPECT_GT(wrongAct, 1e-3) << "SiLU-GLU would pass too";
}

TEST(K3Components, DenseFfnWithSituGlu)
{
    const auto &f = fixture();
    const Config &c = f.ref->cfg();
    const auto b = inputs(8, c.Hd, 400);
    const auto in = toFloat(b);
    std::vector<float> out(in.size());
    f.engine->forward->feedForward(0, 8, in.data(), out.data(), *f.engine->experts);
    double worst = 0, wrongAct = INFINITY;
    for (int t = 0; t < 8; ++t) {
        worst = std::max(worst, relErr(out.data() + t * c.Hd, f.ref->denseFfn(0, b[size_t(t)])));
        wrongAct = std::min(wrongAct, relErr(out.data() + t * c.Hd, f.ref->denseFfn(0, b[size_t(t)], Wrong::Silu)));
    }
    report("dense FFN (SiTU-GLU, layer 0; 8 tokens)", worst, wrongAct);
    EXPECT_LE(worst, kTolerance);
    EXPECT_GT(wrongAct, 1e-3);
}

TEST(K3Components, AttentionResidualsMixing)
{
    const auto &f = fixture();
    const Config &c = f.ref->cfg();
    const auto &w = f.engine->weights;
    // Every (norm, score) pair of the model, with histories of 1..4 blocks of different
    // scales (the embedding is O(1), layer outputs smaller).
    std::vector<std::pair<const float *, const float *>> pairs;
    std::vector<std::pair<std::string, std::string>> names;
    for (int L = 0; L < c.layers; ++L) {
        const auto &lw = w.layers[size_t(L)];
        const std::string p = "model.layers." + std::to_string(L) + ".";
        pairs.push_back({lw.attnResNorm->f32.data(), lw.attnResProj->f32.data()});
        names.push_back({p + "self_attention_res_norm.weight", p + "self_attention_res_proj.weight"});
        pairs.push_back({lw.mlpResNorm->f32.data(), lw.mlpResProj->f32.data()});
        names.push_back({p + "mlp_res_norm.weight", p + "mlp_res_proj.weight"});
    }
    pairs.push_back({w.outResNorm->f32.data(), w.outResProj->f32.data()});
    names.push_back({"model.output_attn_res_norm.weight", "model.output_attn_res_proj.weight"});
    double worst = 0, wrongAvg = INFINITY;
    for (size_t k = 0; k < pairs.size(); ++k)
        for (int n = 1; n <= 4; ++n) {
            auto v = inputs(n + 1, c.Hd, unsigned(500 + 10 * k + n));
            for (int i = 1; i <= n; ++i)
                for (double &x : v[size_t(i)])
                    x = float(x * std::ldexp(1.0, -i)); // later blocks smaller
            std::vector<std::vector<float>> R;
            std::vector<Vec> Rd(v.begin(), v.begin() + n);
            for (const Vec &r : Rd)
                R.emplace_back(r.begin(), r.end());
            const std::vector<float> cur(v[size_t(n)].begin(), v[size_t(n)].end());
            std::vector<float> out(static_cast<size_t>(c.Hd));
            waste::model::attnResMix(R, cur.data(), pairs[k].first, pairs[k].second, out.data(), c.Hd,
                                     f.engine->manifest.config.eps);
            const Vec wn = f.container->vec(names[k].first), wp = f.container->vec(names[k].second);
            worst = std::max(worst, relErr(out.data(), f.ref->attnRes(Rd, v[size_t(n)], wn, wp)));
            wrongAvg = std::min(wrongAvg, relErr(out.data(), f.ref->attnRes(Rd, v[size_t(n)], wn, wp, Wrong::NormalisedAverage)));
        }
    report("Attention Residuals mixing (13 weight pairs, 1-4 blocks)", worst, wrongAvg);
    EXPECT_LE(worst, kTolerance);
    EXPECT_GT(wrongAvg, 1e-3) << "averaging the normalised candidates would pass too";
}

TEST(K3Components, WholeForwardWithBlockHistoryAndOutputAggregation)
{
    // Everything together: the block history closing at layers 0, 2, 4, the partial sums,
    // the output aggregation, the final norm and the head, against Model::eval.
    const auto &f = fixture();
    auto model = waste::Model::open(f.dir);
    const std::vector<int32_t> prompt = model->tokenize("The quick brown fox jumps over the lazy dog.", true);
    ASSERT_GE(prompt.size(), 8u);
    const std::vector<float> got = model->eval(prompt);
    const Vec want = f.ref->logits(prompt);
    ASSERT_EQ(got.size(), want.size());
    const double err = relErr(got.data(), want);
    report("whole forward pass (AttnRes block history + output aggregation)", err);
    EXPECT_LE(err, kTolerance);
}
