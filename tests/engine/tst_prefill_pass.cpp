// A prompt read in passes (model/forward.hpp: decoded panels, the MoE expert-major, blocked
// attention) against the same prompt read one token at a time by the decode kernels, on a
// tiny model of every architecture and every expert format: the logits agree within 1e-4 of
// the largest (the summation order is all that differs), greedy continuations are the same,
// and a pass's logits are the same bit for bit however the prompt is cut into passes, whatever
// the thread count and however short the pieces its attention and dense layers run in (in
// either of MLA's forms: model/mla_form.hpp).
#include <gtest/gtest.h>

#include "model/forward.hpp"
#include "session/model_impl.hpp"
#include "test_files.hpp"
#include "waste/convert.hpp"
#include "waste/waste.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

namespace {

struct Case {
    std::string name;
    waste::TinyModelOptions options;
};

std::vector<Case> cases()
{
    std::vector<Case> out;
    auto add = [&](const std::string &name, auto set) {
        Case c;
        c.name = name;
        c.options.seed = 3;
        c.options.compactVocabulary = true;
        set(c.options);
        out.push_back(c);
    };
    add("kimi-linear-vq3r", [](waste::TinyModelOptions &) {});
    add("kimi-k3-mxfp4", [](waste::TinyModelOptions &o) { o.k3 = true; });
    add("deepseek-v3-fp8", [](waste::TinyModelOptions &o) { o.arch = "deepseek-v3"; });
    add("kimi-k2-int4", [](waste::TinyModelOptions &o) {
        o.arch = "kimi-k2";
        o.experts = waste::TinyExperts::INT4G32;
    });
    add("qwen3-moe-bf16", [](waste::TinyModelOptions &o) {
        o.arch = "qwen3-moe";
        o.expertEncoding = waste::ExpertEncoding::Native;
    });
    add("qwen3-next", [](waste::TinyModelOptions &o) { o.arch = "qwen3-next"; });
    add("qwen35-moe-vq3r", [](waste::TinyModelOptions &o) { o.arch = "qwen3.5-moe"; });
    add("qwen35-moe-bf16", [](waste::TinyModelOptions &o) {
        o.arch = "qwen3.5-moe";
        o.expertEncoding = waste::ExpertEncoding::Native;
    });
    add("gpt-oss-mxfp4", [](waste::TinyModelOptions &o) { o.arch = "gpt-oss"; });
    add("glm4-moe-vq3r", [](waste::TinyModelOptions &o) { o.arch = "glm4-moe"; });
    add("glm4-moe-air-bf16", [](waste::TinyModelOptions &o) {
        o.arch = "glm4-moe";
        o.glmAir = true;
        o.expertEncoding = waste::ExpertEncoding::Native;
    });
    // DeepSeek Sparse Attention: index_topk 8, so most of the 150 positions attend over a selection.
    add("deepseek-v32-fp8", [](waste::TinyModelOptions &o) { o.arch = "deepseek-v32"; });
    add("glm-moe-dsa-vq3r", [](waste::TinyModelOptions &o) { o.arch = "glm-moe-dsa"; });
    add("deepseek-v4-mxfp4", [](waste::TinyModelOptions &o) { o.arch = "deepseek-v4"; });
    add("kimi-linear-bf16-native", [](waste::TinyModelOptions &o) {
        o.experts = waste::TinyExperts::BF16;
        o.expertEncoding = waste::ExpertEncoding::Native;
    });
    add("kimi-linear-fp8-native", [](waste::TinyModelOptions &o) {
        o.experts = waste::TinyExperts::FP8B128;
        o.expertEncoding = waste::ExpertEncoding::Native;
    });
    return out;
}

std::string containerFor(const Case &c)
{
    const std::string dir = freshOutputDir("prefill-pass", c.name) + "/model.waste";
    waste::makeTinyContainer(dir, c.options);
    return dir;
}

std::vector<int32_t> promptFor(const waste::Model &m, int n, uint32_t seed)
{
    std::mt19937 rng(seed);
    const int vocab = std::min(m.info().vocab, 500); // learned words of every tiny vocabulary
    std::vector<int32_t> ids(static_cast<size_t>(n));
    for (int32_t &t : ids)
        t = int32_t(rng() % uint32_t(vocab - 10)) + 5;
    return ids;
}

bool sameBits(const std::vector<float> &a, const std::vector<float> &b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

double relativeGap(const std::vector<float> &a, const std::vector<float> &b)
{
    double gap = 0, largest = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        gap = std::max(gap, std::fabs(double(a[i]) - double(b[i])));
        largest = std::max(largest, std::fabs(double(b[i])));
    }
    return gap / std::max(largest, 1e-30);
}

waste::OpenOptions opts(int threads)
{
    waste::OpenOptions o;
    o.threads = threads;
    o.directIo = false;
    return o;
}

} // namespace

class PrefillPass : public ::testing::TestWithParam<Case> {};

TEST_P(PrefillPass, MatchesTokenByTokenAndDoesNotDependOnTheCut)
{
    const Case &c = GetParam();
    const std::string dir = containerFor(c);
    auto pass = waste::Model::open(dir, opts(2));
    const std::vector<int32_t> ids = promptFor(*pass, 150, 7);
    const std::vector<float> whole = pass->eval(ids);

    // Token by token: each eval of one token is a generated token's step (decode kernels).
    auto steps = waste::Model::open(dir, opts(2));
    std::vector<float> last;
    for (int32_t t : ids)
        last = steps->eval(std::span<const int32_t>(&t, 1));
    const double gap = relativeGap(whole, last);
    EXPECT_LT(gap, 1e-4) << c.name;
    RecordProperty("relative_gap", std::to_string(gap));

    // In each of MLA's two forms (model/mla_form.hpp; one form on the other architectures):
    // other cuts into passes, one thread, and pieces of 32 tokens (a pass where the room is
    // short of the prompt takes pieces under 256) give the same bits as the whole prompt.
    using Form = waste::model::Forward::MlaForm;
    std::vector<float> byForm[2];
    for (const Form form : {Form::Absorbed, Form::Expanded}) {
        const char *named = form == Form::Absorbed ? "absorbed" : "expanded";
        auto formed = [&](int threads) {
            auto m = waste::Model::open(dir, opts(threads));
            static_cast<waste::session::ModelImpl &>(*m).forward().setMlaForm(form);
            return m;
        };
        auto one = formed(2);
        const std::vector<float> inOne = one->eval(ids);
        auto cut = formed(1);
        std::vector<float> pieces;
        size_t at = 0;
        for (size_t n : {size_t(2), size_t(61), size_t(70), size_t(17)}) {
            pieces = cut->eval(std::span<const int32_t>(ids.data() + at, n));
            at += n;
        }
        ASSERT_EQ(at, ids.size());
        EXPECT_TRUE(sameBits(inOne, pieces)) << c.name << ", " << named << ": a pass's logits moved with the cut or the thread count";

        auto shortPieces = formed(2);
        auto &impl = static_cast<waste::session::ModelImpl &>(*shortPieces);
        impl.limitPassPiece(32);
        impl.borrowForPass(int(ids.size()));
        EXPECT_EQ(impl.forward().passPiece(), 32);
        impl.returnPassRoom();
        EXPECT_EQ(impl.forward().passPiece(), waste::model::Forward::kPassPiece);
        EXPECT_TRUE(sameBits(inOne, shortPieces->eval(ids))) << c.name << ", " << named << ": a pass's logits moved with its pieces";
        EXPECT_LT(relativeGap(inOne, last), 1e-4) << c.name << ", " << named;
        byForm[form == Form::Expanded] = inOne;
    }
    // Where the model has MLA layers the two forms differ only in rounding, and the whole
    // prompt took one of them.
    const bool mla = static_cast<waste::session::ModelImpl &>(*pass).forward().mlaExpandBytes(1) > 0;
    EXPECT_EQ(mla, !sameBits(byForm[0], byForm[1])) << c.name;
    EXPECT_LT(relativeGap(byForm[1], byForm[0]), 1e-5) << c.name;
    EXPECT_TRUE(sameBits(whole, byForm[0]) || sameBits(whole, byForm[1])) << c.name;

    // Greedy continuations after the pass and after token by token are the same.
    waste::GenParams greedy;
    greedy.maxTokens = 12;
    const waste::GenResult a = pass->generate({}, greedy), b = steps->generate({}, greedy);
    EXPECT_EQ(a.tokens, b.tokens) << c.name;
}

INSTANTIATE_TEST_SUITE_P(EveryArchitectureAndFormat, PrefillPass, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case> &i) {
                             std::string n = i.param.name;
                             std::replace(n.begin(), n.end(), '-', '_');
                             return n;
                         });

// MLA's expanded form needs the room for every position's keys and values (model/mla_form.hpp):
// a long prompt takes it where the budget leaves that much beyond its expert cache or of the
// cache to lend (here a budget past every expert), and stays absorbed at the floor, where
// nothing is left; the logits agree either way.
TEST(PrefillPass, MlaExpandsWhereTheRoomHoldsIt)
{
    Case c;
    c.name = "kimi-linear-room";
    const std::string dir = containerFor(c);
    const int n = 1500;
    const waste::MemoryPlan plan = waste::planMemory(dir, n + 16);
    std::vector<float> logits[2];
    for (const bool roomy : {true, false}) {
        waste::OpenOptions o = opts(2);
        o.ctxTokens = n + 16;
        o.ramBudget = roomy ? plan.recommended_bytes + plan.expert_bytes_total + (int64_t(64) << 20) : plan.floor_bytes;
        auto model = waste::Model::open(dir, o);
        auto &impl = static_cast<waste::session::ModelImpl &>(*model);
        ASSERT_GT(impl.forward().mlaExpandBytes(1), 0);
        logits[roomy] = model->eval(promptFor(*model, n, 3));
        EXPECT_EQ(impl.forward().lastPassExpanded(), roomy) << (roomy ? "every expert's budget" : "the floor");
    }
    EXPECT_FALSE(sameBits(logits[0], logits[1]));
    EXPECT_LT(relativeGap(logits[1], logits[0]), 1e-5);
}

TEST(PrefillPass, TheReferenceContainerToo)
{
    const std::string dir = std::string(WASTE_FIXTURES_DIR) + "/reference-container/r3.waste";
    auto pass = waste::Model::open(dir, opts(2)), steps = waste::Model::open(dir, opts(2));
    const std::vector<int32_t> ids = promptFor(*pass, 189, 11);
    const std::vector<float> whole = pass->eval(ids);
    std::vector<float> last;
    for (int32_t t : ids)
        last = steps->eval(std::span<const int32_t>(&t, 1));
    EXPECT_LT(relativeGap(whole, last), 1e-4);
}

namespace {

// The process's peak resident memory so far (VmHWM), bytes.
int64_t peakResidentBytes()
{
    std::FILE *f = std::fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    int64_t kb = -1;
    while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    std::fclose(f);
    return kb * 1024;
}

} // namespace

// A 32K-token prompt at the floor budget of a 32K context: read in passes as small as the
// floor allows, the memory it takes while reading stays within the budget, and the session ends
// at position 32 768 with finite logits. Full attention over 32K positions takes 20 s to minutes
// per tiny model on two cores (DeepSeek-V3 35 s, Qwen3-MoE and gpt-oss over 2 min), so ctest
// reads 32K on Kimi-Linear (its KDA layers are linear) and 4K on the others, still 64 floor
// passes each; WASTE_LONG_PROMPT_TESTS=1 reads 32K on every one.
class LongPromptAtTheFloor : public ::testing::TestWithParam<Case> {};

TEST_P(LongPromptAtTheFloor, ThirtyTwoThousandTokens)
{
    const Case &c = GetParam();
    const std::string dir = freshOutputDir("prefill-32k", c.name) + "/model.waste";
    waste::makeTinyContainer(dir, c.options);
    const bool all = std::getenv("WASTE_LONG_PROMPT_TESTS") && std::string(std::getenv("WASTE_LONG_PROMPT_TESTS")) == "1";
    const int n = all || c.name == "kimi-linear-vq3r" ? 32768 : 4096;
    const waste::MemoryPlan plan = waste::planMemory(dir, n + 16);
    waste::OpenOptions o = opts(2);
    o.ctxTokens = n + 16;
    o.ramBudget = plan.floor_bytes;
    auto model = waste::Model::open(dir, o);
    const std::vector<int32_t> ids = promptFor(*model, n, 5);
    const int64_t before = peakResidentBytes();
    const std::vector<float> logits = model->eval(ids);
    const int64_t grew = peakResidentBytes() - before;
    EXPECT_EQ(model->position(), n) << c.name;
    EXPECT_EQ(model->stats().tokensPrefilled, n) << c.name;
    EXPECT_TRUE(std::all_of(logits.begin(), logits.end(), [](float v) { return std::isfinite(v); })) << c.name;
    // What reading took beyond what the open already held: inside the budget.
    EXPECT_LE(grew, plan.floor_bytes) << c.name << ": the read took " << grew << " bytes more at a budget of "
                                      << plan.floor_bytes;
    RecordProperty("floor_bytes", std::to_string(plan.floor_bytes));
    RecordProperty("grew_bytes", std::to_string(grew));
}

INSTANTIATE_TEST_SUITE_P(EveryArchitecture, LongPromptAtTheFloor, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case> &i) {
                             std::string n = i.param.name;
                             std::replace(n.begin(), n.end(), '-', '_');
                             return n;
                         });
