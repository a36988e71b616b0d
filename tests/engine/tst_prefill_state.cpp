// A prompt read in passes equals itself bit for bit however it is cut, and token-at-a-time
// decode steps within rounding (tst_prefill_pass covers every architecture); a saved session
// continues bit for bit after loading; the expert cache being absent or present changes nothing.
#include <gtest/gtest.h>

#include "waste/waste.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

namespace {

const std::string kDir = std::string(WASTE_FIXTURES_DIR) + "/reference-container/";

std::vector<int32_t> foxIds()
{
    std::ifstream in(kDir + "r3.tok.fox.json");
    return nlohmann::json::parse(in)["ids"].get<std::vector<int32_t>>();
}

bool sameBits(const std::vector<float> &a, const std::vector<float> &b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Within 1e-4 of the largest logit: the same numbers summed in another order.
bool withinRounding(const std::vector<float> &a, const std::vector<float> &b)
{
    if (a.size() != b.size())
        return false;
    float gap = 0, largest = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        gap = std::max(gap, std::fabs(a[i] - b[i]));
        largest = std::max(largest, std::fabs(b[i]));
    }
    return gap <= 1e-4f * largest;
}

} // namespace

TEST(Prefill, PassesEqualEachOtherBitForBitAndTokenByTokenWithinRounding)
{
    const std::vector<int32_t> ids = foxIds(); // 189 tokens
    auto chunked = waste::Model::open(kDir + "r3.waste");
    const std::vector<float> a = chunked->eval(ids);

    auto single = waste::Model::open(kDir + "r3.waste");
    std::vector<float> b;
    for (int32_t id : ids)
        b = single->eval(std::span<const int32_t>(&id, 1));
    EXPECT_TRUE(withinRounding(a, b));
    EXPECT_EQ(chunked->position(), single->position());

    // Uneven passes (2, 63, 65, ...) give the same bits.
    auto pieces = waste::Model::open(kDir + "r3.waste");
    std::vector<float> c;
    size_t at = 0;
    for (size_t n : {size_t(2), size_t(63), size_t(65), size_t(2), size_t(57)}) {
        c = pieces->eval(std::span<const int32_t>(ids.data() + at, n));
        at += n;
    }
    ASSERT_EQ(at, ids.size());
    EXPECT_TRUE(sameBits(a, c));
}

TEST(SessionState, SaveLoadContinuesBitForBit)
{
    const std::vector<int32_t> ids = foxIds();
    const std::span<const int32_t> head(ids.data(), 100), tail(ids.data() + 100, ids.size() - 100);
    const std::string path = std::string(WASTE_TEST_OUTPUT_DIR) + "/r3.state";

    auto m1 = waste::Model::open(kDir + "r3.waste");
    m1->eval(head);
    m1->saveState(path);
    const std::vector<float> a = m1->eval(tail);

    auto m2 = waste::Model::open(kDir + "r3.waste");
    m2->eval(std::vector<int32_t>{5, 6, 7}); // some other conversation, replaced by the load
    m2->loadState(path);
    EXPECT_EQ(m2->position(), 100);
    const std::vector<float> b = m2->eval(tail);
    EXPECT_TRUE(sameBits(a, b));

    // Generation continues identically from a loaded state (logits of the last token kept).
    auto m3 = waste::Model::open(kDir + "r3.waste");
    m3->loadState(path);
    m1->resetState();
    m1->eval(head);
    waste::GenParams gp;
    gp.maxTokens = 8;
    gp.temperature = 0.8f;
    gp.seed = 42;
    const waste::GenResult g1 = m1->generate({}, gp);
    const waste::GenResult g3 = m3->generate({}, gp);
    EXPECT_EQ(g1.tokens, g3.tokens);
    EXPECT_EQ(g1.tokens.size(), 8u);
}

TEST(SessionState, ResetStartsOver)
{
    const std::vector<int32_t> ids = foxIds();
    auto m = waste::Model::open(kDir + "r3.waste");
    const std::vector<float> a = m->eval(std::span<const int32_t>(ids.data(), 20));
    m->eval(std::span<const int32_t>(ids.data() + 20, 30));
    m->resetState();
    EXPECT_EQ(m->position(), 0);
    EXPECT_TRUE(sameBits(a, m->eval(std::span<const int32_t>(ids.data(), 20))));
}

TEST(SessionState, LoadRefusesDamagedFile)
{
    const std::string path = std::string(WASTE_TEST_OUTPUT_DIR) + "/r3.bad.state";
    auto m = waste::Model::open(kDir + "r3.waste");
    m->eval(std::vector<int32_t>{1, 2, 3});
    m->saveState(path);
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    in.close();
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(bytes.size() - 10));
    m->resetState();
    EXPECT_THROW(m->loadState(path), waste::Error);
    EXPECT_EQ(m->position(), 0); // untouched
}

TEST(Prefill, K3PassEqualsSequentialWithinRounding)
{
    // Attention Residuals, latent MoE, SiTU, q_lora, both output gates.
    const std::string dir = std::string(WASTE_FIXTURES_DIR) + "/k3-container/";
    std::ifstream in(dir + "k3s1.tok.fox.json");
    const auto ids = nlohmann::json::parse(in)["ids"].get<std::vector<int32_t>>();
    const std::vector<float> a = waste::Model::open(dir + "k3s1.waste")->eval(ids);
    auto single = waste::Model::open(dir + "k3s1.waste");
    std::vector<float> b;
    for (int32_t id : ids)
        b = single->eval(std::span<const int32_t>(&id, 1));
    EXPECT_TRUE(withinRounding(a, b));
}

TEST(Prefill, StopDuringAPassLeavesACleanSession)
{
    // Progress comes after every layer of a pass (done grows within it); a stop takes effect
    // at the next layer. The pass's state is then half-read, so the session starts again
    // from nothing, and reading the prompt again gives its logits bit for bit.
    const std::vector<int32_t> ids = foxIds();
    const std::vector<float> full = waste::Model::open(kDir + "r3.waste")->eval(ids);
    auto m = waste::Model::open(kDir + "r3.waste");
    std::vector<int> seen;
    try {
        m->eval(ids, [&](int done, int total) {
            EXPECT_EQ(total, int(ids.size()));
            seen.push_back(done);
            return done < 64;
        });
        FAIL() << "the stop was not heard";
    } catch (const waste::Error &e) {
        EXPECT_EQ(e.code(), waste::ErrorCode::Cancelled);
    }
    ASSERT_GE(seen.size(), 2u);
    EXPECT_LT(seen.front(), int(ids.size())) << "progress came only at the end of the pass";
    EXPECT_EQ(m->position(), 0);
    EXPECT_TRUE(sameBits(full, m->eval(ids)));
}
