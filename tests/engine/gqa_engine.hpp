// The engine's pieces for a tiny GQA-family container (Qwen3-MoE, gpt-oss), opened the way
// a session opens them (opened_container.hpp), so the component tests can call
// Forward::attention / feedForward and run chunks directly, and the tiny model's generator
// as the float64 reference's weights.
#pragma once

#include "convert/tiny_model.hpp"
#include "format/manifest.hpp"
#include "model/state.hpp"

#include "gqa_reference.hpp"
#include "opened_container.hpp"
#include "test_files.hpp"

#include <waste/convert.hpp>

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <mutex>
#include <cstring>
#include <random>

namespace gqatest {

// A tiny container opened with a pool of `threads`, and its logits over a prompt.
struct Engine : enginetest::OpenedContainer {
    Engine(const std::string &d, int threads) : OpenedContainer(d, threads) {}

    // Logits after running `tokens` in chunks of `chunk` tokens from a fresh state.
    std::vector<float> logits(const std::vector<int32_t> &tokens, size_t chunk, int ctx = 256)
    {
        waste::model::State st;
        st.allocate(manifest.config, ctx);
        for (size_t i = 0; i < tokens.size(); i += chunk) {
            const size_t n = std::min(chunk, tokens.size() - i);
            forward->run(std::span<const int32_t>(tokens).subspan(i, n), st, *experts, nullptr);
        }
        return st.lastLogits;
    }
};

// Forward::attention of `layer` over the inputs `in` (n rows of `width`) from a fresh state at
// positions 0.., tokens 0..11 one at a time and the rest as one chunk: both ways of meeting
// the cache, for the component tests.
inline std::vector<float> attentionOutputs(Engine &e, int layer, const std::vector<float> &in, int width)
{
    const int n = int(in.size() / size_t(width)), single = std::min(n, 12);
    waste::model::State st;
    st.allocate(e.manifest.config, n);
    std::vector<float> out(in.size());
    for (int t = 0; t < single; ++t)
        e.forward->attention(layer, 1, in.data() + t * width, out.data() + t * width, st.layers[size_t(layer)], t);
    if (n > single)
        e.forward->attention(layer, n - single, in.data() + single * width, out.data() + single * width,
                             st.layers[size_t(layer)], single);
    return out;
}

// Feeding a prompt in chunks of 1, 7 and 64 tokens (64: the engine's own chunk) gives the
// logits of the whole prompt in one chunk, bit for bit.
inline void expectChunkingIdentical(Engine &e, const std::vector<int32_t> &tokens)
{
    const std::vector<float> whole = e.logits(tokens, tokens.size());
    for (size_t chunk : {size_t(1), size_t(7), size_t(64)}) {
        const std::vector<float> got = e.logits(tokens, chunk);
        ASSERT_EQ(got.size(), whole.size());
        EXPECT_EQ(std::memcmp(got.data(), whole.data(), got.size() * 4), 0) << "chunks of " << chunk;
    }
}

// 1, 3 and 5 threads give the logits `e` gives (chunks of 16), bit for bit.
inline void expectThreadCountsIdentical(Engine &e, const std::vector<int32_t> &tokens)
{
    const std::vector<float> reference = e.logits(tokens, 16);
    for (int threads : {1, 3, 5}) {
        Engine other(e.dir, threads);
        const std::vector<float> got = other.logits(tokens, 16);
        EXPECT_EQ(std::memcmp(got.data(), reference.data(), got.size() * 4), 0) << threads << " threads";
    }
}

// The tiny model's own generator: the release's weights, decoded to double once each.
class SourceWeights {
public:
    explicit SourceWeights(const waste::TinyModelOptions &o) : m_src(o) {}
    const waste::convert::TinySource &source() const { return m_src; }
    gqaref::Vec operator()(const std::string &name)
    {
        std::lock_guard lock(m_mutex);
        auto it = m_cache.find(name);
        if (it != m_cache.end())
            return it->second;
        const waste::convert::SourceTensor t = m_src.info(name);
        std::vector<float> f(size_t(t.elements()));
        m_src.readRows(t, 0, t.rows(), f.data());
        return m_cache[name] = gqaref::Vec(f.begin(), f.end());
    }

private:
    waste::convert::TinySource m_src;
    std::map<std::string, gqaref::Vec> m_cache;
    std::mutex m_mutex;
};

// The tiny model one test program checks, made once: its container (from `options`), the
// engine on it with two threads, and a float64 Reference (built from the config.json text
// and a tensor getter) over the generator's own weights.
template <typename Reference> struct TinyModel {
    std::string dir;
    SourceWeights weights;
    std::unique_ptr<Reference> ref;
    std::unique_ptr<Engine> engine;

    // name: the folder under test-output/<arch>/, one per test program of that arch.
    explicit TinyModel(const waste::TinyModelOptions &options, const std::string &name = "tiny") : weights(options)
    {
        dir = freshOutputDir(options.arch, name);
        waste::makeTinyContainer(dir, options);
        ref = std::make_unique<Reference>(weights.source().configText(),
                                          [this](const std::string &n) { return weights(n); });
        engine = std::make_unique<Engine>(dir, 2);
    }

    // n token ids drawn from the whole vocabulary, the same for the same seed.
    std::vector<int32_t> tokens(int n, unsigned seed) const
    {
        std::mt19937 rng(seed);
        std::vector<int32_t> t(static_cast<size_t>(n));
        for (auto &x : t)
            x = int32_t(rng() % uint32_t(engine->manifest.config.vocab));
        return t;
    }
};

using enginetest::inputs;
using enginetest::relErr;

inline std::vector<float> flat(const std::vector<gqaref::Vec> &v)
{
    std::vector<float> out;
    for (const auto &x : v)
        out.insert(out.end(), x.begin(), x.end());
    return out;
}

inline void report(const char *family, const char *what, double err, double wrong = 0)
{
    std::printf("[%s] %-52s max rel err %.2e (limit 1e-05)", family, what, err);
    if (wrong > 0)
        std::printf("; wrong reading %.2e", wrong);
    std::printf("\n");
}

} // namespace gqatest

#include <waste/prefix.hpp>

#include <fstream>

namespace gqatest {

// The session state of a GQA container survives what sessions do with it, bit for bit:
// a state saved and loaded goes on as if never stopped, and going back to a checkpoint
// (prefix reuse, which must restore a sliding window's ring) then reading other tokens
// gives a fresh run's logits. `a`, `b`, `c`, `d`: token runs; the checkpoint after `a`.
inline void checkSessionState(const std::string &dir, const std::vector<int32_t> &a, const std::vector<int32_t> &b,
                              const std::vector<int32_t> &c, const std::vector<int32_t> &d)
{
    auto cat = [](std::vector<int32_t> x, const std::vector<int32_t> &y) {
        x.insert(x.end(), y.begin(), y.end());
        return x;
    };
    auto fresh = [&](const std::vector<int32_t> &t) { return waste::Model::open(dir)->eval(t); };
    auto same = [](const std::vector<float> &x, const std::vector<float> &y) {
        return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * 4) == 0;
    };
    auto m = waste::Model::open(dir);
    m->eval(a);
    waste::markCheckpoint(*m);
    m->eval(b);
    const std::string path = dir + "/../session.state";
    m->saveState(path);
    // What the planner counts for a checkpoint is what one holds: the same state saved
    // without it is that many bytes (and its 8-byte position) shorter.
    const std::string live = path + ".live";
    waste::saveState(*m, live, waste::SavedParts::LiveState);
    const auto size = [](const std::string &p) { return int64_t(std::ifstream(p, std::ios::binary | std::ios::ate).tellg()); };
    EXPECT_EQ(size(path) - size(live), 8 + waste::checkpointBytes(dir)) << "checkpoint bytes as planned";
    auto loaded = waste::Model::open(dir);
    loaded->loadState(path);
    EXPECT_TRUE(same(loaded->eval(c), fresh(cat(cat(a, b), c)))) << "saved, loaded and continued";
    const std::vector<int32_t> other = cat(a, d);
    EXPECT_EQ(waste::reusePrefix(*m, other), int(a.size())) << "back to the checkpoint";
    EXPECT_TRUE(same(m->eval(d), fresh(other))) << "continued from the checkpoint";
}

} // namespace gqatest
