// Sampling (kimi-linear-math.md §5), stop strings and the output stream.
#include <gtest/gtest.h>

#include "text/output_stream.hpp"
#include "text/sampler.hpp"
#include "text/stop_matcher.hpp"
#include "text/tokenizer.hpp"

#include <cmath>
#include <map>
#include <numeric>
#include <limits>
#include <random>

using waste::text::Sampler;
using waste::text::SamplerParams;
using waste::text::StopMatcher;

namespace {

SamplerParams params(float t, float topP, int topK, uint64_t seed)
{
    SamplerParams p;
    p.temperature = t;
    p.topP = topP;
    p.topK = topK;
    p.seed = seed;
    return p;
}

std::vector<float> randomLogits(size_t n, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 3.0f);
    std::vector<float> v(n);
    for (float &x : v)
        x = d(rng);
    return v;
}

} // namespace

TEST(Sampler, LcgMatchesTheReferenceSequence)
{
    Sampler s(params(1, 1, 0, 0));
    EXPECT_EQ(s.state(), 0x853c49e6748fea9bULL);
    EXPECT_DOUBLE_EQ(s.nextUniform(), 0.0076803857030456335);
    EXPECT_EQ(s.state(), 0x01f7577d6a4da38eULL);
    EXPECT_DOUBLE_EQ(s.nextUniform(), 0.5309462536868874);
    EXPECT_DOUBLE_EQ(s.nextUniform(), 0.1511201215100656);
    Sampler s42(params(1, 1, 0, 42));
    EXPECT_DOUBLE_EQ(s42.nextUniform(), 0.5682303266439076);
}

TEST(Sampler, GreedyTakesTheLowestIdAmongEqualMaxima)
{
    const std::vector<float> logits = {1.0f, 3.0f, -2.0f, 3.0f, 0.5f};
    Sampler s(params(0, 1, 0, 7));
    EXPECT_EQ(s.sample(logits), 1);
    EXPECT_EQ(s.state(), 7u); // greedy does not draw
    std::vector<bool> mask = {true, false, true, true, true};
    EXPECT_EQ(s.sample(logits, &mask), 3);
    EXPECT_EQ(Sampler(params(-1, 0.5f, 3, 1)).sample(logits), 1);
}

// The untruncated rule: r = u * sum(p), first id whose running sum reaches r.
TEST(Sampler, FullDistributionFollowsTheCumulativeRule)
{
    const std::vector<float> logits = randomLogits(50, 3);
    for (uint64_t seed : {1ULL, 5ULL, 99ULL, 123456789ULL}) {
        for (float t : {0.5f, 1.0f, 1.7f}) {
            Sampler s(params(t, 1, 0, seed));
            Sampler lcg(params(t, 1, 0, seed));
            for (int step = 0; step < 20; ++step) {
                const double u = lcg.nextUniform();
                const float m = *std::max_element(logits.begin(), logits.end());
                std::vector<double> p;
                double total = 0;
                for (float l : logits)
                    total += p.emplace_back(std::exp((double(l) - m) / t));
                double running = 0;
                int32_t want = int32_t(logits.size()) - 1;
                for (size_t i = 0; i < p.size(); ++i) {
                    running += p[i];
                    if (running >= u * total) {
                        want = int32_t(i);
                        break;
                    }
                }
                EXPECT_EQ(s.sample(logits), want) << "seed " << seed << " t " << t << " step " << step;
            }
        }
    }
}

// The truncated rule: sorted candidates, top-k, then the top-p prefix.
TEST(Sampler, TruncatedDistributionFollowsTheSortedRule)
{
    const std::vector<float> logits = randomLogits(64, 4);
    for (auto [topK, topP] : {std::pair{5, 1.0f}, {0, 0.9f}, {20, 0.7f}, {50, 0.8f}}) {
        Sampler s(params(0.8f, topP, topK, 11));
        Sampler lcg(params(0.8f, topP, topK, 11));
        std::vector<int32_t> order(logits.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
        if (topK > 0)
            order.resize(size_t(topK));
        std::vector<double> p;
        double total = 0;
        for (int32_t id : order)
            total += p.emplace_back(std::exp((double(logits[id]) - logits[order[0]]) / 0.8));
        size_t n = 0;
        double cum = 0;
        while (n < p.size()) {
            cum += p[n++] / total;
            if (cum >= topP)
                break;
        }
        for (int step = 0; step < 30; ++step) {
            const double r = lcg.nextUniform() * cum;
            double running = 0;
            int32_t want = order[0];
            for (size_t i = 0; i < n; ++i) {
                running += p[i] / total;
                if (running >= r) {
                    want = order[i];
                    break;
                }
            }
            EXPECT_EQ(s.sample(logits), want) << "k " << topK << " p " << topP << " step " << step;
        }
    }
}

TEST(Sampler, SameSeedSameTokensDifferentSeedDifferentTokens)
{
    const std::vector<float> logits = randomLogits(1000, 9);
    auto run = [&](uint64_t seed) {
        Sampler s(params(1.0f, 0.95f, 40, seed));
        std::vector<int32_t> out;
        for (int i = 0; i < 64; ++i)
            out.push_back(s.sample(logits));
        return out;
    };
    EXPECT_EQ(run(1234), run(1234));
    EXPECT_NE(run(1234), run(1235));
}

TEST(Sampler, FrequenciesMatchTheSoftmax)
{
    const std::vector<float> logits = {std::log(0.1f), std::log(0.2f), std::log(0.7f)};
    Sampler s(params(1.0f, 1.0f, 0, 2024));
    std::map<int32_t, int> counts;
    const int n = 30000;
    for (int i = 0; i < n; ++i)
        ++counts[s.sample(logits)];
    EXPECT_NEAR(counts[0] / double(n), 0.1, 0.01);
    EXPECT_NEAR(counts[1] / double(n), 0.2, 0.01);
    EXPECT_NEAR(counts[2] / double(n), 0.7, 0.01);
    // top-k 2 removes the least likely; top-p 0.5 keeps only the most likely.
    Sampler k2(params(1.0f, 1.0f, 2, 7));
    Sampler p5(params(1.0f, 0.5f, 0, 7));
    for (int i = 0; i < 2000; ++i) {
        EXPECT_NE(k2.sample(logits), 0);
        EXPECT_EQ(p5.sample(logits), 2);
    }
}

TEST(Sampler, MaskedTokensAreNeverPicked)
{
    const std::vector<float> logits = randomLogits(200, 5);
    std::vector<bool> mask(200, false);
    for (size_t i = 0; i < 200; i += 7)
        mask[i] = true;
    for (auto [k, p] : {std::pair{0, 1.0f}, {10, 1.0f}, {0, 0.5f}, {500, 0.99f}}) {
        Sampler s(params(1.5f, p, k, 77));
        for (int i = 0; i < 500; ++i)
            EXPECT_TRUE(mask[size_t(s.sample(logits, &mask))]);
    }
    std::vector<bool> none(200, false);
    EXPECT_THROW(Sampler(params(1, 1, 0, 1)).sample(logits, &none), waste::Error);
}

TEST(Sampler, NothingAllowedIsAnErrorAtEverySetting)
{
    // An empty candidate set, whatever truncation is asked, is a clear error: never a
    // pick from an empty list (top-p below 1 once read the first of no candidates).
    const std::vector<float> logits = randomLogits(64, 9);
    const std::vector<bool> none(64, false);
    for (float t : {0.0f, 0.7f, 2.0f})
        for (float p : {0.0f, 0.95f, 1.0f})
            for (int k : {0, 1, 40, 1000}) {
                Sampler s(params(t, p, k, 3));
                try {
                    s.sample(logits, &none);
                    ADD_FAILURE() << "t " << t << " p " << p << " k " << k << ": a token from nothing";
                } catch (const waste::Error &e) {
                    EXPECT_EQ(e.code(), waste::ErrorCode::Argument);
                    EXPECT_NE(std::string(e.what()).find("allows no token"), std::string::npos) << e.what();
                }
            }
}

TEST(Sampler, ExtremeSettingsAndNonFiniteLogitsStillPickAnAllowedToken)
{
    std::vector<float> logits = randomLogits(64, 11);
    logits[3] = std::numeric_limits<float>::quiet_NaN();
    logits[5] = std::numeric_limits<float>::infinity();
    logits[7] = -std::numeric_limits<float>::infinity();
    std::vector<bool> mask(64, true);
    for (float t : {1e-30f, 0.01f, 1.0f, 2.0f})
        for (float p : {0.0f, 1e-9f, 0.5f, 1.0f})
            for (int k : {0, 1, 2, 64, 1 << 20}) {
                Sampler s(params(t, p, k, 5));
                for (int i = 0; i < 20; ++i) {
                    const int32_t id = s.sample(logits, &mask);
                    ASSERT_GE(id, 0);
                    ASSERT_LT(id, 64);
                }
            }
    std::vector<bool> onlyNaN(64, false);
    onlyNaN[3] = true;
    for (float p : {0.5f, 1.0f})
        EXPECT_EQ(Sampler(params(1.0f, p, 0, 1)).sample(logits, &onlyNaN), 3);
}

TEST(Sampler, LogProbIsNormalised)
{
    const std::vector<float> logits = randomLogits(100, 6);
    double total = 0;
    for (int32_t i = 0; i < 100; ++i)
        total += std::exp(double(Sampler::logProb(logits, i)));
    EXPECT_NEAR(total, 1.0, 1e-5);
}

TEST(StopMatcher, MatchesAcrossTokenBoundaries)
{
    StopMatcher m({"STOP", "\n\n"});
    std::string out;
    out += m.push("Hello S").text;
    EXPECT_EQ(out, "Hello ");
    out += m.push("T").text;
    EXPECT_EQ(out, "Hello ");
    auto r = m.push("OP and more");
    out += r.text;
    EXPECT_TRUE(r.stopped);
    EXPECT_EQ(out, "Hello ");
    EXPECT_EQ(m.matched(), "STOP");
    EXPECT_TRUE(m.push("x").text.empty());
    EXPECT_TRUE(m.flush().empty());
}

TEST(StopMatcher, ReleasesAFalseStart)
{
    StopMatcher m({"</end>"});
    std::string out;
    out += m.push("a </e").text;
    EXPECT_EQ(out, "a ");
    out += m.push("nding").text;
    EXPECT_EQ(out, "a </ending");
    out += m.push("<").text;
    out += m.flush();
    EXPECT_EQ(out, "a </ending<");
    EXPECT_FALSE(m.stopped());
}

TEST(StopMatcher, EarliestStopWinsAndSelfOverlapIsFound)
{
    StopMatcher m({"bc", "abcd"});
    auto r = m.push("xxabc");
    EXPECT_TRUE(r.stopped);
    EXPECT_EQ(r.text, "xxa");
    StopMatcher n({"aab"});
    std::string out = n.push("aa").text;
    auto r2 = n.push("ab");
    EXPECT_TRUE(r2.stopped);
    EXPECT_EQ(out + r2.text, "a");
    StopMatcher none;
    EXPECT_EQ(none.push("anything").text, "anything");
}

TEST(OutputStream, StopsOnEosStopTokenStopStringAndLength)
{
    const auto tok = waste::text::Tokenizer::load(std::string(WASTE_FIXTURES_DIR) + "/reference-container/r3.waste");
    const auto ids = tok.encode("Hello there, world. More text follows here.");
    {
        waste::GenParams gp;
        gp.maxTokens = 4;
        waste::text::OutputStream out(tok, gp, tok.eosId());
        waste::text::OutputStream::Step st;
        for (size_t i = 0; i < ids.size() && !st.done; ++i)
            st = out.push(ids[i]);
        EXPECT_EQ(out.count(), 4);
        EXPECT_EQ(st.finish, waste::FinishReason::Length);
        EXPECT_EQ(out.text(), tok.decode(std::span(ids).first(4)));
    }
    {
        waste::GenParams gp;
        gp.stopStrings = {"world."};
        waste::text::OutputStream out(tok, gp, tok.eosId());
        waste::text::OutputStream::Step st;
        for (size_t i = 0; i < ids.size() && !st.done; ++i)
            st = out.push(ids[i]);
        EXPECT_TRUE(st.done);
        EXPECT_EQ(st.finish, waste::FinishReason::Stop);
        EXPECT_EQ(out.text(), "Hello there, ");
    }
    {
        waste::GenParams gp;
        gp.stopTokens = {ids[2]};
        waste::text::OutputStream out(tok, gp, tok.eosId());
        out.push(ids[0]);
        out.push(ids[1]);
        auto st = out.push(ids[2]);
        EXPECT_TRUE(st.done);
        EXPECT_EQ(out.text(), tok.decode(std::span(ids).first(2)));
        waste::text::OutputStream eos(tok, waste::GenParams{}, tok.eosId());
        eos.push(ids[0]);
        EXPECT_TRUE(eos.push(tok.eosId()).done);
        EXPECT_EQ(eos.text(), tok.decode(std::span(ids).first(1)));
    }
}

TEST(OutputStream, ReleasedTextIsValidUtf8)
{
    const auto tok = waste::text::Tokenizer::load(std::string(WASTE_FIXTURES_DIR) + "/reference-container/r3.waste");
    // Byte tokens that split "é" (C3 A9) and "🙂" (F0 9F 99 82).
    const std::vector<int32_t> ids = {'a', 0xC3, 0xA9, 0xF0, 0x9F, 0x99, 0x82, 0xC3};
    waste::text::OutputStream out(tok, waste::GenParams{}, tok.eosId());
    std::vector<std::string> chunks;
    for (int32_t id : ids)
        chunks.push_back(out.push(id).text);
    EXPECT_EQ(chunks[1], "");
    EXPECT_EQ(chunks[2], "\xC3\xA9");
    EXPECT_EQ(chunks[6], "\xF0\x9F\x99\x82");
    out.finish();
    EXPECT_EQ(out.text(), "a\xC3\xA9\xF0\x9F\x99\x82\xEF\xBF\xBD");
}
