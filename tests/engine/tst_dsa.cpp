// DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5.x; docs/architectures/dsa.md) against a
// plain float64 implementation (dsa_reference.hpp), on the real weights of the tiny
// releases (`waste mktiny --arch deepseek-v32 --hf`, FP8 trunk and experts, converted with
// its experts native; `--arch glm-moe-dsa`, GLM-5.2's layout with shared indexer layers):
// index_topk is 8 and every check runs 40 positions, so the first 8 attend densely and the
// rest over the indexer's selection. The config reader (arch names, indexer keys, the three
// ways to say which layers share a selection), the state (the indexer's keys per token),
// the attention sub-layer, the whole forward pass, a prompt's pass against token by token,
// and thread counts. Error = max |engine − reference| / max |reference|; limit 1e-5.
// Ablations (dense attention past index_topk, the other family's RoPE pair layout) are shown
// to be far off or to pick other keys, so the checks cannot pass by accident.
#include "format/manifest.hpp"
#include "format/release_config.hpp"
#include "model/forward.hpp"
#include "model/state.hpp"
#include "session/model_impl.hpp"

#include "dsa_reference.hpp"
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
constexpr int kPositions = 40; // past index_topk (8) five times over

using Engine = enginetest::OpenedContainer;
using enginetest::inputs;
using enginetest::relErr;

struct Model {
    std::string hf, dir;
    std::unique_ptr<dsref::Container> container;
    std::unique_ptr<dsaref::Reference> ref;
    std::unique_ptr<Engine> engine;
};

const std::string kRoot = std::string(WASTE_TEST_OUTPUT_DIR) + "/dsa";

// The release layout made by mktiny --hf, converted as `waste convert` does by default
// (V3.2: its FP8 experts kept native; GLM-5.2: BF16 experts, also native here so the
// reference reads the release's values).
Model make(const std::string &arch, uint64_t seed)
{
    Model m;
    m.hf = kRoot + "/" + arch + "-hf";
    m.dir = kRoot + "/" + arch;
    fs::remove_all(m.hf);
    fs::remove_all(m.dir);
    waste::TinyModelOptions o;
    o.arch = arch;
    o.seed = seed;
    waste::makeTinyHf(m.hf, o);
    waste::ConvertOptions c;
    if (arch == "glm-moe-dsa")
        c.experts = waste::ExpertEncoding::Native;
    waste::convertModel(m.hf, m.dir, c);
    m.container = std::make_unique<dsref::Container>(m.dir);
    m.ref = std::make_unique<dsaref::Reference>(*m.container);
    m.engine = std::make_unique<Engine>(m.dir);
    return m;
}

const Model &v32()
{
    static Model m = make("deepseek-v32", 7);
    return m;
}
const Model &glm()
{
    static Model m = make("glm-moe-dsa", 8);
    return m;
}

std::vector<int32_t> someIds(int n, int vocab, unsigned seed)
{
    std::mt19937 rng(seed);
    std::vector<int32_t> ids(static_cast<size_t>(n));
    for (auto &i : ids)
        i = int32_t(rng() % unsigned(vocab));
    return ids;
}

void report(const std::string &what, double err, double wrong = 0)
{
    std::printf("[dsa] %-64s max rel err %.2e (limit %.0e)", what.c_str(), err, kTolerance);
    if (wrong > 0)
        std::printf("; ablated reference %.2e", wrong);
    std::printf("\n");
}

waste::format::ModelConfig readConfig(json cfg)
{
    return waste::format::readReleaseConfig(cfg);
}

} // namespace

TEST(Dsa, TheTinyReleasesHaveTheFamiliesFeatures)
{
    const auto &c = v32().engine->manifest.config;
    EXPECT_EQ(c.arch, "deepseek-v32");
    EXPECT_TRUE(c.dsa.on);
    EXPECT_EQ(c.dsa.topk, 8);
    EXPECT_FALSE(c.dsa.ropeInterleave) << "V3.2's indexer rotates halves";
    EXPECT_GT(c.dsa.headDim, c.qkRope) << "rotated and unrotated indexer dims both";
    EXPECT_TRUE(c.rope.yarn);
    EXPECT_GT(c.groups, 1);
    EXPECT_EQ(v32().engine->manifest.quant.fmtName, "FP8B128");
    EXPECT_EQ(c.layers, 5) << "the MTP layer (with its own indexer) is read past";
    EXPECT_EQ(v32().engine->manifest.find("model.layers.5.self_attn.indexer.wk.weight"), nullptr);
    EXPECT_NE(v32().engine->manifest.find("model.layers.4.self_attn.indexer.wk.weight"), nullptr);
    for (int L = 0; L < c.layers; ++L)
        EXPECT_FALSE(c.dsa.sharedLayer(L));

    const auto &g = glm().engine->manifest.config;
    EXPECT_EQ(g.arch, "glm-moe-dsa");
    EXPECT_TRUE(g.dsa.ropeInterleave);
    EXPECT_FALSE(g.rope.yarn);
    EXPECT_DOUBLE_EQ(g.rope.theta, 8e6) << "from rope_parameters";
    EXPECT_NE(g.vHead, g.qkNope);
    const std::vector<bool> shared = {false, false, true, false, true, false};
    EXPECT_EQ(g.dsa.shared, shared);
    EXPECT_EQ(g.dsa.indexerLayer(4), 3);
    EXPECT_EQ(glm().engine->manifest.find("model.layers.2.self_attn.indexer.wk.weight"), nullptr)
        << "shared layers ship no indexer";
    EXPECT_EQ(glm().engine->manifest.config.eosId, json::parse(slurp(glm().hf + "/config.json"))["eos_token_id"][0].get<int64_t>());

    // The state per token: the latent and rotated key on every layer, the indexer's key on
    // the layers that run one (4 bytes a float).
    for (const auto *cfg : {&c, &g}) {
        waste::model::State st;
        st.allocate(*cfg, 10);
        int indexers = 0;
        for (int L = 0; L < cfg->layers; ++L) {
            indexers += !cfg->dsa.sharedLayer(L);
            EXPECT_EQ(st.layers[size_t(L)].indexKeys.size(), cfg->dsa.sharedLayer(L) ? 0u : size_t(10 * cfg->dsa.headDim));
        }
        const int64_t perToken = int64_t(cfg->layers) * (cfg->kvLora + cfg->qkRope) * 4 + int64_t(indexers) * cfg->dsa.headDim * 4;
        EXPECT_EQ(waste::model::State::bytesFor(*cfg, 10), 10 * perToken);
        EXPECT_EQ(st.bytes(), 10 * perToken);
    }
}

TEST(Dsa, ConfigSaysWhichLayersShareInThreeWays)
{
    // GLM-5.2's 78 layers: freq 4, offset 3 ⇒ full at 0, 1, 2, 6, 10, …, 74 (21 layers).
    json cfg = json::parse(slurp(glm().hf + "/config.json"));
    cfg["num_hidden_layers"] = 78;
    cfg["index_topk_freq"] = 4;
    cfg["index_skip_topk_offset"] = 3;
    cfg.erase("indexer_types");
    cfg.erase("mlp_layer_types");
    const auto bySchedule = readConfig(cfg);
    int full = 0;
    for (int L = 0; L < 78; ++L)
        full += !bySchedule.dsa.sharedLayer(L);
    EXPECT_EQ(full, 21);
    for (int L : {0, 1, 2, 6, 10, 74})
        EXPECT_FALSE(bySchedule.dsa.sharedLayer(L)) << L;
    for (int L : {3, 4, 5, 7, 75, 77})
        EXPECT_TRUE(bySchedule.dsa.sharedLayer(L)) << L;
    // An explicit list wins over the schedule; a pattern string is read when there is no list.
    json listed = cfg;
    listed["indexer_types"] = json::array();
    for (int L = 0; L < 78; ++L)
        listed["indexer_types"].push_back(L % 2 ? "shared" : "full");
    EXPECT_TRUE(readConfig(listed).dsa.sharedLayer(1));
    EXPECT_FALSE(readConfig(listed).dsa.sharedLayer(2));
    json pattern = cfg;
    pattern["index_topk_pattern"] = "F" + std::string(77, 'S');
    EXPECT_EQ(readConfig(pattern).dsa.indexerLayer(77), 0);
    // GLM-5 / 5.1 and V3.2 say none of these: every layer runs its indexer.
    json plain = cfg;
    plain.erase("index_topk_freq");
    plain.erase("index_skip_topk_offset");
    for (int L = 0; L < 78; ++L)
        EXPECT_FALSE(readConfig(plain).dsa.sharedLayer(L));
    // Bad input gets a clear error naming the key.
    json bad = listed;
    bad["indexer_types"][5] = "sometimes";
    EXPECT_THROW(readConfig(bad), waste::Error);
    json first = listed;
    first["indexer_types"][0] = "shared";
    try {
        readConfig(first);
        ADD_FAILURE() << "layer 0 cannot share";
    } catch (const waste::Error &e) {
        EXPECT_NE(std::string(e.what()).find("layer 0"), std::string::npos) << e.what();
    }
    json noLora = cfg;
    noLora["q_lora_rank"] = 0;
    EXPECT_THROW(readConfig(noLora), waste::Error);
}

TEST(Dsa, IndexedAttentionMatchesTheReference)
{
    for (const Model *m : {&v32(), &glm()}) {
        const auto &c = m->engine->manifest.config;
        double worst = 0, ablated = INFINITY;
        for (int L = 0; L < c.layers; ++L) {
            if (c.dsa.sharedLayer(L))
                continue; // their selection is another layer's: the whole pass checks them
            const auto a = inputs(kPositions, c.hidden, 40 + unsigned(L));
            waste::model::State st;
            st.allocate(c, kPositions);
            std::vector<float> in, out(static_cast<size_t>(kPositions * c.hidden));
            for (const Vec &x : a)
                in.insert(in.end(), x.begin(), x.end());
            // Positions 0..11 one at a time, then chunks of 9, 1 and 18: each extends the same cache.
            int at = 0;
            for (int n : {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 9, 1, 18}) {
                m->engine->forward->attention(L, n, in.data() + at * c.hidden, out.data() + at * c.hidden,
                                              st.layers[size_t(L)], at);
                at += n;
            }
            ASSERT_EQ(at, kPositions);
            dsaref::Reference::Cache rc, dc;
            m->ref->forgetInputs();
            std::vector<int> sel, dsel;
            for (int t = 0; t < kPositions; ++t) {
                worst = std::max(worst, relErr(out.data() + t * c.hidden, m->ref->mla(L, a[size_t(t)], rc, sel)));
                EXPECT_EQ(sel.size(), size_t(std::min(t + 1, 8)));
            }
            m->ref->forgetInputs();
            for (int t = 0; t < kPositions; ++t) {
                const Vec w = m->ref->mla(L, a[size_t(t)], dc, dsel, /*dense=*/true);
                if (t >= 12) // well past index_topk
                    ablated = std::min(ablated, relErr(out.data() + t * c.hidden, w));
            }
        }
        report(c.arch + ": MLA over the indexer's top-" + std::to_string(c.dsa.topk) + ", 40 positions", worst, ablated);
        EXPECT_LE(worst, kTolerance);
        EXPECT_GT(ablated, 100 * kTolerance) << "dense attention past index_topk must disagree";
    }
}

TEST(Dsa, TheIndexerRopeLayoutDecidesTheSelection)
{
    // The same weights read with the other family's pair layout pick other keys.
    for (const Model *m : {&v32(), &glm()}) {
        const auto ids = someIds(kPositions, m->engine->manifest.config.vocab, 21);
        std::vector<std::vector<std::vector<int>>> right, flipped;
        m->ref->logits(ids, &right);
        m->ref->logits(ids, &flipped, false, /*layoutFlip=*/1);
        int differ = 0;
        for (size_t t = 0; t < right.size(); ++t)
            differ += right[t][0] != flipped[t][0];
        std::printf("[dsa] %s: layer 0 picks other keys at %d of 32 positions with the other RoPE layout\n",
                    m->engine->manifest.config.arch.c_str(), differ);
        EXPECT_GT(differ, 0);
        for (int t = 0; t < 8; ++t)
            EXPECT_EQ(right[size_t(t)][0], flipped[size_t(t)][0]) << "below index_topk every key is kept";
    }
}

TEST(Dsa, WholeForwardPassOverFortyPositions)
{
    for (const Model *m : {&v32(), &glm()}) {
        const auto &c = m->engine->manifest.config;
        const auto ids = someIds(kPositions, c.vocab, 11);
        waste::OpenOptions o;
        o.warmFromUsage = false;
        auto model = waste::Model::open(m->dir, o);
        EXPECT_EQ(model->info().arch, c.arch);
        // Below index_topk the pass is dense MLA: the dense reference agrees.
        const std::vector<int32_t> few(ids.begin(), ids.begin() + 8);
        const double below = relErr(model->eval(few).data(), m->ref->logits(few, nullptr, /*dense=*/true));
        report(c.arch + ": logits after 8 tokens = dense MLA", below);
        EXPECT_LE(below, kTolerance);
        model->resetState();
        const std::vector<float> got = model->eval(ids);
        const double err = relErr(got.data(), m->ref->logits(ids));
        const double dense = relErr(got.data(), m->ref->logits(ids, nullptr, /*dense=*/true));
        report(c.arch + " (" + m->engine->manifest.quant.fmtName + " experts): logits after 40 tokens", err, dense);
        EXPECT_LE(err, kTolerance);
        EXPECT_GT(dense, 100 * kTolerance);
    }
}

TEST(Dsa, PromptPassMatchesTokenByTokenAndItsCuts)
{
    for (const Model *m : {&v32(), &glm()}) {
        const auto ids = someIds(70, m->engine->manifest.config.vocab, 12);
        waste::OpenOptions o;
        o.warmFromUsage = false;
        const std::vector<float> whole = waste::Model::open(m->dir, o)->eval(ids);
        auto single = waste::Model::open(m->dir, o);
        std::vector<float> last;
        for (int32_t id : ids)
            last = single->eval(std::span<const int32_t>(&id, 1));
        ASSERT_EQ(whole.size(), last.size());
        EXPECT_LE(relErr(whole.data(), Vec(last.begin(), last.end())), 1e-4) << m->engine->manifest.config.arch;
        auto cut = waste::Model::open(m->dir, o);
        cut->eval(std::span<const int32_t>(ids.data(), 5));
        cut->eval(std::span<const int32_t>(ids.data() + 5, 36));
        const std::vector<float> rest = cut->eval(std::span<const int32_t>(ids.data() + 41, ids.size() - 41));
        EXPECT_EQ(std::memcmp(whole.data(), rest.data(), whole.size() * 4), 0) << m->engine->manifest.config.arch;
    }
}

TEST(Dsa, AnyThreadCountGivesTheSameLogits)
{
    for (const Model *m : {&v32(), &glm()}) {
        const auto ids = someIds(45, m->engine->manifest.config.vocab, 13);
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
            runs.push_back(std::move(all));
        }
        for (size_t i = 1; i < runs.size(); ++i)
            EXPECT_TRUE(runs[i].size() == runs[0].size() &&
                        std::memcmp(runs[i].data(), runs[0].data(), runs[0].size() * 4) == 0)
                << m->engine->manifest.config.arch << ": thread count " << i;
    }
}
