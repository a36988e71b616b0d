// The DeepSeek-V3 family's components against a plain float64 implementation
// (deepseek_reference.hpp, written from docs/architectures/deepseek-v3.md), on the
// real weights of the tiny releases (`waste mktiny --arch deepseek-v3 --hf` converted
// with its FP8 experts kept native; `--arch kimi-k2 --int4`):
//   RoPE with YaRN (frequencies, cos/sin and score scales, the interleaved pairs against
//   HF's de-interleave + rotate_half), group-limited noaux_tc routing, MLA with q/kv
//   LoRA and the rotated shared key in the compressed cache, the MoE layer (grouped
//   router, norm_topk_prob, routed_scaling_factor, shared expert) and the dense FFN,
//   the FP8 128x128 block decoding of the trunk, and the whole forward pass over FP8
//   and INT4 expert records. Error = max |engine − reference| / max |reference|; limit
//   1e-5. Chunked prefill equals token by token, and any thread count gives the same
//   logits, bit for bit. Ablations (no YaRN, no groups) are shown to be far off, so the
//   checks cannot pass by accident.
#include "format/manifest.hpp"
#include "model/forward.hpp"
#include "model/grouped_router.hpp"
#include "model/state.hpp"
#include "model/yarn.hpp"
#include "session/model_impl.hpp"

#include "deepseek_reference.hpp"
#include "opened_container.hpp"
#include "test_files.hpp"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>

namespace fs = std::filesystem;
using dsref::Vec;
using dsref::json;

namespace {

constexpr double kTolerance = 1e-5;

using Engine = enginetest::OpenedContainer;
using enginetest::inputs;
using enginetest::relErr;

struct Model {
    std::string hf, dir;
    std::unique_ptr<dsref::Container> container;
    std::unique_ptr<dsref::Reference> ref;
    std::unique_ptr<Engine> engine;
    void open()
    {
        container = std::make_unique<dsref::Container>(dir);
        ref = std::make_unique<dsref::Reference>(*container);
        engine = std::make_unique<Engine>(dir);
    }
};

const std::string kRoot = std::string(WASTE_TEST_OUTPUT_DIR) + "/deepseek-components";

// DeepSeek-V3 as released (FP8 trunk and experts), converted with native experts.
const Model &deepseek()
{
    static Model m = [] {
        Model m;
        m.hf = kRoot + "/v3-hf";
        m.dir = kRoot + "/v3";
        fs::remove_all(m.hf);
        fs::remove_all(m.dir);
        waste::TinyModelOptions o;
        o.arch = "deepseek-v3";
        o.seed = 5;
        waste::makeTinyHf(m.hf, o);
        waste::convertModel(m.hf, m.dir);
        m.open();
        return m;
    }();
    return m;
}

// Kimi K2-Thinking's layout: BF16 trunk, INT4 experts (one routing group).
const Model &kimiK2Int4()
{
    static Model m = [] {
        Model m;
        m.dir = kRoot + "/k2-int4";
        fs::remove_all(m.dir);
        waste::TinyModelOptions o;
        o.arch = "kimi-k2";
        o.experts = waste::TinyExperts::INT4G32;
        o.seed = 6;
        waste::makeTinyContainer(m.dir, o);
        m.open();
        return m;
    }();
    return m;
}

double relErr(const Vec &got, const Vec &want)
{
    std::vector<float> f(got.begin(), got.end());
    return relErr(f.data(), want);
}

void report(const char *what, double err, double wrong = 0)
{
    std::printf("[deepseek-component] %-52s max rel err %.2e (limit %.0e)", what, err, kTolerance);
    if (wrong > 0)
        std::printf("; ablated reference %.2e", wrong);
    std::printf("\n");
}

std::vector<int32_t> someIds(int n, int vocab, unsigned seed)
{
    std::mt19937 rng(seed);
    std::vector<int32_t> ids(static_cast<size_t>(n));
    for (auto &i : ids)
        i = int32_t(rng() % unsigned(vocab));
    return ids;
}

} // namespace

TEST(DeepseekComponents, TheTinyReleasesHaveTheFamilysFeatures)
{
    const auto &c = deepseek().engine->manifest.config;
    EXPECT_EQ(c.arch, "deepseek-v3");
    EXPECT_GE(c.firstDense, 2);
    EXPECT_GE(c.layers - c.firstDense, 2);
    EXPECT_GT(c.groups, 1);
    EXPECT_LT(c.topkGroups, c.groups);
    EXPECT_TRUE(c.rope.enabled && c.rope.yarn);
    EXPECT_GT(c.qLora, 0);
    EXPECT_TRUE(c.renormalize);
    EXPECT_EQ(c.sharedExperts, 1);
    EXPECT_EQ(deepseek().engine->manifest.quant.fmtName, "FP8B128");
    EXPECT_EQ(c.layers, 5) << "the MTP layer is read past";
    EXPECT_EQ(deepseek().engine->manifest.find("model.layers.5.eh_proj.weight"), nullptr);
    // The cache holds the latent and the rotated key: kv_lora_rank + qk_rope_head_dim a token.
    waste::model::State st;
    st.allocate(c, 10);
    EXPECT_EQ(st.layers[0].latent.size(), size_t(10 * (c.kvLora + c.qkRope)));
    const auto &k2 = kimiK2Int4().engine->manifest.config;
    EXPECT_EQ(k2.arch, "kimi-k2");
    EXPECT_EQ(k2.groups, 1);
    EXPECT_EQ(kimiK2Int4().engine->manifest.quant.fmtName, "INT4G32");
}

TEST(DeepseekComponents, YarnFrequenciesScalesAndRotation)
{
    json cfgs[3] = {deepseek().container->config(), kimiK2Int4().container->config(), deepseek().container->config()};
    // A third reading where mscale and mscale_all_dim differ, so the cos/sin scale is not 1.
    cfgs[2]["rope_scaling"]["mscale"] = 0.707;
    cfgs[2]["rope_scaling"]["factor"] = 16;
    double worst = 0;
    for (const json &cj : cfgs) {
        waste::format::Manifest m = deepseek().engine->manifest;
        json wrap = {{"format_version", 0}, {"config", cj}, {"trunk", json::array()}};
        const auto c = waste::format::parseManifest(wrap.dump(), "test").config;
        const waste::model::Rope rope(c.rope, c.qkRope, c.qkNope + c.qkRope);
        const dsref::Yarn ref(cj);
        ASSERT_EQ(rope.invFreq().size(), ref.invFreq.size());
        for (size_t i = 0; i < ref.invFreq.size(); ++i)
            worst = std::max(worst, std::fabs(rope.invFreq()[i] - ref.invFreq[i]) / ref.invFreq[i]);
        worst = std::max(worst, std::fabs(rope.cosSinScale() - ref.cosSin) / ref.cosSin);
        worst = std::max(worst, std::fabs(double(rope.scoreScale()) - ref.score) / ref.score);
        // q·k after rotation at two positions: the engine's interleaved pairs against HF's
        // de-interleaved rotate_half (the dims come out in another order, the dot does not).
        const auto v = inputs(2, c.qkRope, 9);
        for (int pq : {0, 5, 700, 4000}) {
            for (int pk : {0, 3, 699}) {
                std::vector<float> q(v[0].begin(), v[0].end()), k(v[1].begin(), v[1].end());
                rope.rotate(q.data(), pq);
                rope.rotate(k.data(), pk);
                double got = 0, want = 0;
                const Vec rq = ref.rotate(v[0], pq), rk = ref.rotate(v[1], pk);
                for (int i = 0; i < c.qkRope; ++i) {
                    got += double(q[size_t(i)]) * k[size_t(i)];
                    want += rq[size_t(i)] * rk[size_t(i)];
                }
                double norm = 0;
                for (double x : rq)
                    norm += x * x;
                worst = std::max(worst, std::fabs(got - want) / norm);
            }
        }
        EXPECT_NE(ref.invFreq.front() / ref.invFreq.back(), std::pow(cj["rope_theta"].get<double>(), 1.0 - 2.0 / c.qkRope))
            << "YaRN must change some frequencies";
    }
    report("YaRN frequencies, scales and q.k after rotation", worst);
    EXPECT_LE(worst, kTolerance);
    EXPECT_NEAR(dsref::mscaleOf(40, 1), 1.368888, 1e-6);
}

TEST(DeepseekComponents, GroupLimitedRoutingPicksLikeTheReference)
{
    std::mt19937 rng(3);
    std::normal_distribution<float> g(0.0f, 1.0f);
    int differsFromPlain = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const int groups = 4, topkGroups = trial % 3 + 1, E = 16, K = 4;
        std::vector<float> key(E);
        for (float &k : key)
            k = g(rng);
        if (trial % 10 == 0)
            key[3] = key[7]; // ties
        Vec kd(key.begin(), key.end());
        std::vector<int> got(K);
        waste::model::selectExperts(key.data(), E, K, groups, topkGroups, got.data());
        const std::vector<int> want = dsref::route(kd, K, groups, topkGroups);
        ASSERT_EQ(got, want) << "trial " << trial;
        differsFromPlain += want != dsref::route(kd, K, 1, 1);
    }
    std::printf("[deepseek-component] grouped routing: 300 of 300 choices equal; %d differ from plain top-k\n",
                differsFromPlain);
    EXPECT_GT(differsFromPlain, 30);
}

TEST(DeepseekComponents, MlaWithDecoupledRopeAndYarn)
{
    for (const Model *m : {&deepseek(), &kimiK2Int4()}) {
        const auto &c = m->engine->manifest.config;
        const int T = 12;
        double worst = 0, ablated = INFINITY;
        const dsref::Yarn plain(m->container->config(), /*withYarn=*/false);
        for (int L : {0, c.firstDense, c.layers - 1}) {
            const auto a = inputs(T, c.hidden, 40 + L);
            waste::model::State st;
            st.allocate(c, T);
            dsref::Reference::Cache rc, wc;
            std::vector<float> in, out(static_cast<size_t>(T * c.hidden));
            for (const Vec &x : a)
                in.insert(in.end(), x.begin(), x.end());
            // Tokens 0..7 one at a time, 8..11 as one chunk: both extend the same cache.
            for (int t = 0; t < 8; ++t)
                m->engine->forward->attention(L, 1, in.data() + t * c.hidden, out.data() + t * c.hidden, st.layers[size_t(L)], t);
            m->engine->forward->attention(L, 4, in.data() + 8 * c.hidden, out.data() + 8 * c.hidden, st.layers[size_t(L)], 8);
            for (int t = 0; t < T; ++t) {
                worst = std::max(worst, relErr(out.data() + t * c.hidden, m->ref->mla(L, a[size_t(t)], rc)));
                const Vec w = m->ref->mla(L, a[size_t(t)], wc, &plain);
                if (t > 0)
                    ablated = std::min(ablated, relErr(out.data() + t * c.hidden, w));
            }
        }
        report((c.arch + ": MLA, q/kv LoRA, RoPE with YaRN").c_str(), worst, ablated);
        EXPECT_LE(worst, kTolerance);
        EXPECT_GT(ablated, 100 * kTolerance) << "without YaRN the reference must disagree";
    }
}

TEST(DeepseekComponents, MoeWithGroupedRouterAndSharedExpert)
{
    for (const Model *m : {&deepseek(), &kimiK2Int4()}) {
        const auto &c = m->engine->manifest.config;
        double worst = 0;
        int regrouped = 0;
        for (int L = c.firstDense; L < c.layers; ++L) {
            const auto b = inputs(16, c.hidden, 70 + L);
            for (const Vec &x : b) {
                std::vector<float> in(x.begin(), x.end()), out(static_cast<size_t>(c.hidden));
                m->engine->forward->feedForward(L, 1, in.data(), out.data(), *m->engine->experts);
                std::vector<int> chosen, plain;
                worst = std::max(worst, relErr(out.data(), m->ref->moe(L, x, &chosen)));
                m->ref->moe(L, x, &plain, 1);
                regrouped += chosen != plain;
            }
        }
        report((c.arch + ": MoE (" + c.moeBlock + "), " + std::to_string(regrouped) + " choices set by the groups").c_str(), worst);
        EXPECT_LE(worst, kTolerance);
        if (c.groups > 1)
            EXPECT_GT(regrouped, 0) << "the groups must matter on these weights";
    }
}

TEST(DeepseekComponents, DenseFfnLayers)
{
    const Model &m = deepseek();
    const auto &c = m.engine->manifest.config;
    double worst = 0;
    for (int L = 0; L < c.firstDense; ++L)
        for (const Vec &x : inputs(4, c.hidden, 90 + L)) {
            std::vector<float> in(x.begin(), x.end()), out(static_cast<size_t>(c.hidden));
            m.engine->forward->feedForward(L, 1, in.data(), out.data(), *m.engine->experts);
            worst = std::max(worst, relErr(out.data(), m.ref->denseFfn(L, x)));
        }
    report("dense FFN (first_k_dense_replace)", worst);
    EXPECT_LE(worst, kTolerance);
}

// A tensor of a safetensors shard, as bytes: our own reading of the header.
std::string shardTensor(const std::string &hf, const std::string &name, json *info)
{
    const json index = json::parse(slurp(hf + "/model.safetensors.index.json"));
    const std::string file = slurp(hf + "/" + index["weight_map"][name].get<std::string>());
    uint64_t n;
    std::memcpy(&n, file.data(), 8);
    const json header = json::parse(file.substr(8, n));
    *info = header[name];
    const auto off = (*info)["data_offsets"];
    return file.substr(8 + n + off[0].get<size_t>(), off[1].get<size_t>() - off[0].get<size_t>());
}

TEST(DeepseekComponents, Fp8TrunkBlocksDecodeLikeTheRelease)
{
    const Model &m = deepseek();
    // Converted again with a lossless trunk: FP8 tensors become their decoded F32 values.
    const std::string dir = kRoot + "/v3-trunk16";
    fs::remove_all(dir);
    waste::ConvertOptions o;
    o.trunkBits = 16;
    waste::convertModel(m.hf, dir, o);
    const dsref::Container c16(dir);
    double worst = 0;
    int tensors = 0;
    for (const char *name : {"model.layers.0.self_attn.q_a_proj.weight", "model.layers.2.self_attn.kv_a_proj_with_mqa.weight",
                             "model.layers.3.mlp.shared_experts.down_proj.weight", "model.layers.1.mlp.up_proj.weight"}) {
        json wi, si;
        const std::string w = shardTensor(m.hf, name, &wi), s = shardTensor(m.hf, std::string(name) + "_scale_inv", &si);
        ASSERT_EQ(wi["dtype"], "F8_E4M3") << name;
        ASSERT_EQ(si["dtype"], "F32") << name;
        const int64_t rows = wi["shape"][0], cols = wi["shape"][1], bc = si["shape"][1];
        ASSERT_EQ(si["shape"][0].get<int64_t>(), (rows + 127) / 128);
        Vec want(static_cast<size_t>(rows * cols));
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t i = 0; i < cols; ++i) {
                float sc;
                std::memcpy(&sc, s.data() + 4 * ((r / 128) * bc + i / 128), 4);
                want[size_t(r * cols + i)] = k3ref::e4m3(uint8_t(w[size_t(r * cols + i)])) * sc;
            }
        worst = std::max(worst, relErr(c16.tensor(name).w, want));
        ++tensors;
    }
    report("FP8 e4m3 x 128x128 weight_scale_inv (trunk)", worst);
    EXPECT_EQ(tensors, 4);
    EXPECT_LE(worst, 1e-7); // one f32 rounding of the product
}

TEST(DeepseekComponents, WholeForwardPassOverFp8AndInt4Experts)
{
    for (const Model *m : {&deepseek(), &kimiK2Int4()}) {
        const auto &c = m->engine->manifest.config;
        const auto ids = someIds(7, c.vocab, 11);
        waste::OpenOptions o;
        o.warmFromUsage = false;
        const std::vector<float> got = waste::Model::open(m->dir, o)->eval(ids);
        const double err = relErr(got.data(), m->ref->logits(ids));
        report((c.arch + " (" + m->engine->manifest.quant.fmtName + " experts): logits after 7 tokens").c_str(), err);
        EXPECT_LE(err, kTolerance);
    }
}

TEST(DeepseekComponents, PromptPassMatchesTokenByToken)
{
    // A prompt's pass against token-by-token decode steps: within rounding (the summation
    // order differs); the pass cut in two: the same bits.
    const Model &m = deepseek();
    const auto ids = someIds(70, m.engine->manifest.config.vocab, 12);
    waste::OpenOptions o;
    o.warmFromUsage = false;
    const std::vector<float> whole = waste::Model::open(m.dir, o)->eval(ids);
    auto single = waste::Model::open(m.dir, o);
    std::vector<float> last;
    for (int32_t id : ids)
        last = single->eval(std::span<const int32_t>(&id, 1));
    ASSERT_EQ(whole.size(), last.size());
    EXPECT_LE(relErr(whole.data(), Vec(last.begin(), last.end())), 1e-4);
    auto cut = waste::Model::open(m.dir, o);
    cut->eval(std::span<const int32_t>(ids.data(), 41));
    const std::vector<float> rest = cut->eval(std::span<const int32_t>(ids.data() + 41, ids.size() - 41));
    EXPECT_EQ(std::memcmp(whole.data(), rest.data(), whole.size() * 4), 0);
}

TEST(DeepseekComponents, AnyThreadCountGivesTheSameLogits)
{
    for (const Model *m : {&deepseek(), &kimiK2Int4()}) {
        const auto ids = someIds(70, m->engine->manifest.config.vocab, 13);
        std::vector<std::vector<float>> runs;
        for (int threads : {1, 2, 5}) {
            waste::OpenOptions o;
            o.threads = threads;
            o.warmFromUsage = false;
            auto model = waste::Model::open(m->dir, o);
            static_cast<waste::session::ModelImpl &>(*model).computePool().setMinWork(1); // split every loop
            std::vector<float> last = model->eval(ids), all = last;
            for (int step = 0; step < 4; ++step) {
                const int32_t next = waste::topTokens(last, 1)[0].id;
                last = model->eval(std::span<const int32_t>(&next, 1));
                all.insert(all.end(), last.begin(), last.end());
            }
            if (threads > 1)
                EXPECT_GT(static_cast<waste::session::ModelImpl &>(*model).computePool().splitLoops(), 0);
            runs.push_back(std::move(all));
        }
        for (size_t i = 1; i < runs.size(); ++i)
            EXPECT_TRUE(runs[i] == runs[0] && std::memcmp(runs[i].data(), runs[0].data(), runs[0].size() * 4) == 0)
                << m->engine->manifest.config.arch << ": thread count " << i;
    }
}
