// Multi-threaded decode and prefill give the same logits bit for bit as one thread:
// the compute pool splits work by output rows only. The pool is told to split every
// loop however small (setMinWork(1)), so the tiny reference containers exercise every
// split the large ones take; the pool's counter proves loops really were split.
#include <gtest/gtest.h>

#include "compute/thread_pool.hpp"
#include "format/codebooks.hpp"
#include "quant/lut.hpp"
#include "session/model_impl.hpp"
#include "waste/waste.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstring>
#include <fstream>
#include <random>

namespace {

struct Container {
    std::string dir, name;
    std::string path() const { return dir + name + ".waste"; }
    std::vector<int32_t> ids(const std::string &prompt) const
    {
        std::ifstream in(dir + name + ".tok." + prompt + ".json");
        return nlohmann::json::parse(in)["ids"].get<std::vector<int32_t>>();
    }
};
const Container kR3{std::string(WASTE_FIXTURES_DIR) + "/reference-container/", "r3"};
const Container kK3{std::string(WASTE_FIXTURES_DIR) + "/k3-container/", "k3s1"};

bool sameBits(const std::vector<float> &a, const std::vector<float> &b)
{
    return a.size() == b.size() && !a.empty() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::unique_ptr<waste::Model> openWith(const Container &c, int threads)
{
    waste::OpenOptions o;
    o.threads = threads;
    o.warmFromUsage = false;
    auto m = waste::Model::open(c.path(), o);
    static_cast<waste::session::ModelImpl &>(*m).computePool().setMinWork(1);
    return m;
}

int64_t splitLoops(waste::Model &m) { return static_cast<waste::session::ModelImpl &>(m).computePool().splitLoops(); }

// The logits after: the fox prompt as one chunked prefill (189 tokens = 64 + 64 + 61),
// then 8 greedy decode steps one token at a time.
std::vector<std::vector<float>> trace(waste::Model &m, const std::vector<int32_t> &prompt)
{
    std::vector<std::vector<float>> out;
    out.push_back(m.eval(prompt));
    for (int i = 0; i < 8; ++i) {
        const auto top = waste::topTokens(out.back(), 1);
        const int32_t next = top[0].id;
        out.push_back(m.eval(std::span<const int32_t>(&next, 1)));
    }
    return out;
}

void checkThreadCounts(const Container &c)
{
    const std::vector<int32_t> prompt = c.ids("fox");
    auto one = openWith(c, 1);
    const auto ref = trace(*one, prompt);
    EXPECT_EQ(splitLoops(*one), 0) << "a one-thread pool never splits";
    for (int threads : {2, 3}) {
        auto m = openWith(c, threads);
        ASSERT_EQ(static_cast<waste::session::ModelImpl &>(*m).computePool().threads(), threads);
        const auto got = trace(*m, prompt);
        ASSERT_EQ(got.size(), ref.size());
        for (size_t i = 0; i < ref.size(); ++i)
            EXPECT_TRUE(sameBits(ref[i], got[i])) << c.name << ": " << threads << " threads differ at step " << i;
        EXPECT_GT(splitLoops(*m), 100) << c.name << ": the work was not split over the threads";
    }
}

} // namespace

TEST(ThreadIdentity, KimiLinearAnyThreadCount) { checkThreadCounts(kR3); }

TEST(ThreadIdentity, K3AnyThreadCount) { checkThreadCounts(kK3); }

// A prompt's pass on 3 threads equals the pass on 1, and token-at-a-time steps on 3 threads
// equal those on 1, bit for bit.
TEST(ThreadIdentity, PassesAndStepsOnThreadsEqualThemOnOne)
{
    for (const Container *c : {&kR3, &kK3}) {
        const std::vector<int32_t> ids = c->ids("fox");
        const std::vector<float> a = openWith(*c, 3)->eval(ids), b = openWith(*c, 1)->eval(ids);
        EXPECT_TRUE(sameBits(a, b)) << c->name << ": a pass";
        auto s3 = openWith(*c, 3), s1 = openWith(*c, 1);
        std::vector<float> x, y;
        for (int32_t id : ids) {
            x = s3->eval(std::span<const int32_t>(&id, 1));
            y = s1->eval(std::span<const int32_t>(&id, 1));
        }
        EXPECT_TRUE(sameBits(x, y)) << c->name << ": token by token";
    }
}

// Generation with sampling takes the same tokens on any thread count.
TEST(ThreadIdentity, SeededGenerationSameTokens)
{
    waste::GenParams gp;
    gp.temperature = 0.8f;
    gp.seed = 7;
    gp.maxTokens = 24;
    std::vector<int32_t> first;
    for (int threads : {1, 2, 3}) {
        auto m = openWith(kR3, threads);
        const auto r = m->generate(kR3.ids("hello"), gp);
        if (threads == 1)
            first = r.tokens;
        else
            EXPECT_EQ(r.tokens, first) << threads << " threads";
    }
}

TEST(ComputePool, EveryIndexOnceAnySplit)
{
    for (int threads : {1, 2, 3, 5}) {
        waste::compute::ThreadPool pool(threads);
        for (int64_t n : {1, 2, 7, 64, 1000}) {
            for (int64_t grain : {1, 3, 64, 5000}) {
                std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
                pool.forRange(n, grain, [&](int64_t b, int64_t e) {
                    if (threads > 1) // one thread runs the whole range as one piece
                        ASSERT_LE(e - b, grain);
                    for (int64_t i = b; i < e; ++i)
                        hits[static_cast<size_t>(i)].fetch_add(1);
                });
                for (int64_t i = 0; i < n; ++i)
                    ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << threads << " " << n << " " << grain << " " << i;
            }
        }
    }
}

// Thousands of back-to-back small loops (decode's pattern), nested loops run inline,
// and an exception in a piece reaches the caller.
TEST(ComputePool, BackToBackNestedAndFailing)
{
    waste::compute::ThreadPool pool(3);
    std::vector<int64_t> y(97);
    for (int rep = 0; rep < 20000; ++rep) {
        pool.forRange(97, 4, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i)
                y[static_cast<size_t>(i)] = i * rep;
        });
        ASSERT_EQ(y[96], 96 * rep);
        ASSERT_EQ(y[3], 3 * rep);
    }
    std::atomic<int64_t> sum{0};
    pool.forRange(10, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
            pool.forRange(10, 1, [&](int64_t b2, int64_t e2) { sum += (e2 - b2) * i; });
    });
    EXPECT_EQ(sum.load(), 10 * 45);
    EXPECT_THROW(pool.forRange(50, 1,
                               [&](int64_t b, int64_t) {
                                   if (b == 17)
                                       throw waste::Error(waste::ErrorCode::Format, "piece 17");
                               }),
                 waste::Error);
    int64_t after = 0;
    pool.forRange(5, 1, [&](int64_t, int64_t) {}); // still usable
    pool.forRange(1, 1, [&](int64_t b, int64_t e) { after = e - b; });
    EXPECT_EQ(after, 1);
}

// The LUT kernels with a pool: every table entry and output row the same bits as
// without, for the 8-bit and the VQ4P (6-bit packed, int8 table) paths, rows not a
// multiple of the 64-row block.
// How a loop is cut: under two pieces' worth of the minimum (8 us by default) it stays on the
// calling thread; above, pieces of at least the minimum, at most four per thread.
TEST(ComputePool, GrainKeepsShortLoopsInlineAndPiecesAboveTheMinimum)
{
    waste::compute::ThreadPool pool(4);
    EXPECT_EQ(pool.grainFor(100, 100), 100) << "10 us of work: one piece";
    EXPECT_EQ(pool.grainFor(100, 159), 100) << "15.9 us: still one piece";
    EXPECT_EQ(pool.grainFor(100, 160), 50) << "16 us: two pieces of 8";
    EXPECT_EQ(pool.grainFor(100, 400), 20) << "40 us: five pieces";
    EXPECT_EQ(pool.grainFor(1600, 1000), 100) << "1.6 ms: four pieces per thread, no more";
    EXPECT_EQ(pool.grainFor(1, 1000000), 1);
    pool.setMinWork(1);
    EXPECT_EQ(pool.grainFor(32, 1), 2) << "a minimum of one unit: 16 pieces of 32 items";
    std::atomic<int64_t> items = 0;
    pool.forRange(32, pool.grainFor(32, 1), [&](int64_t b, int64_t e) { items += e - b; });
    EXPECT_EQ(pool.splitLoops(), 1);
    waste::compute::ThreadPool one(1);
    one.forRange(1600, one.grainFor(1600, 1000), [&](int64_t b, int64_t e) { items += e - b; });
    EXPECT_EQ(one.splitLoops(), 0) << "a one-thread pool runs every loop inline";
    EXPECT_EQ(items, 32 + 1600);
}

TEST(ComputePool, LutKernelsSplitBitIdentical)
{
    std::mt19937 rng(5);
    const std::string path = std::string(WASTE_TEST_OUTPUT_DIR) + "/pool-lut-books.bin";
    for (bool packed6 : {false, true}) {
        const int S = packed6 ? 4 : 3, E = packed6 ? 64 : 256, M = 200, N = 576;
        {
            std::ofstream out(path, std::ios::binary | std::ios::trunc);
            for (int b = 0; b < S; ++b) {
                char hdr[16] = {};
                out.write(hdr, 16);
                for (int i = 0; i < E * 8; ++i) {
                    const uint16_t h = static_cast<uint16_t>((rng() & 0x8000) | (0x2c00 + (rng() & 0x7ff)));
                    out.write(reinterpret_cast<const char *>(&h), 2);
                }
            }
        }
        waste::format::ExpertQuant q;
        q.stages = S;
        q.entries = E;
        q.indexBits = packed6 ? 6 : 8;
        const waste::format::Codebooks books(path, q);
        std::vector<uint8_t> idx(size_t((M + 63) / 64) * (N / 8) * 64 * (packed6 ? 3 : S));
        for (auto &b : idx)
            b = static_cast<uint8_t>(packed6 ? rng() : rng() % E);
        std::vector<uint8_t> scales(size_t(M) * 2);
        for (int r = 0; r < M; ++r) {
            const uint16_t h = static_cast<uint16_t>(0x3800 + (rng() & 0x3ff));
            std::memcpy(&scales[size_t(r) * 2], &h, 2);
        }
        std::vector<float> x(N);
        for (auto &v : x)
            v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);

        waste::quant::Lut serial, split;
        std::vector<float> y1(M), y2(M);
        waste::quant::buildLut(serial, x.data(), N, books, 0, S, packed6);
        waste::compute::ThreadPool pool(3);
        pool.setMinWork(1);
        waste::quant::buildLut(split, x.data(), N, books, 0, S, packed6, &pool);
        ASSERT_EQ(serial.table, split.table);
        ASSERT_EQ(serial.q8, split.q8);
        ASSERT_EQ(serial.blockScale, split.blockScale);
        if (packed6) {
            waste::quant::applyLut4p(serial, idx.data(), scales.data(), M, y1.data());
            waste::quant::applyLut4p(split, idx.data(), scales.data(), M, y2.data(), &pool);
        } else {
            waste::quant::applyLut8(serial, idx.data(), scales.data(), M, y1.data());
            waste::quant::applyLut8(split, idx.data(), scales.data(), M, y2.data(), &pool);
        }
        EXPECT_TRUE(sameBits(y1, y2)) << (packed6 ? "VQ4P" : "VQ3R");
        EXPECT_GT(pool.splitLoops(), 0);
    }
}
