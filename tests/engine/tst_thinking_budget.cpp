// The thinking budget (waste::makeThinkingBudget, text/thinking_budget.hpp) on the tiny
// models of the families that reason first, generating greedily: DeepSeek-V3 (R1's prompt
// opens <think>), Qwen3 (the model opens it: the budget writes <think>\n for it) and
// gpt-oss (harmony: the analysis channel, then the final channel's header at the cut).
// Tiny models have random weights, so they never close their reasoning themselves: the
// budget is what gives them an answer. Checked: the tokens up to the cut are exactly the
// ones the model writes without a cut, the close markup comes right at the budget, the
// parser reads reasoning and answer apart with no markup left in either, a budget of 0
// answers at once, and a prompt that turned thinking off gets no constraint at all.
#include "quant/simd.hpp"
#include "test_files.hpp"

#include <waste/chat.hpp>
#include <waste/convert.hpp>
#include <waste/thinking_budget.hpp>
#include <waste/waste.hpp>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>

using namespace waste;

namespace {

struct Family {
    const char *arch;
    const char *closeMarkup;  // the close the budget writes, as text
    const char *answerLead;   // what follows it before the answer (markup), or ""
};

const Family kFamilies[] = {
    {"deepseek-v3", "</think>", ""},
    {"qwen3-moe", "</think>", ""},
    {"gpt-oss", "<|end|><|start|>assistant", "<|channel|>final<|message|>"},
};

std::unique_ptr<Model> tinyModel(const std::string &arch)
{
    // One SIMD level wherever it runs (AVX2 on x86 machines that have it, AVX-512 ones
    // included): the levels agree to 1e-5, which could flip a near tie of random weights.
    quant::setActiveSimd(quant::SimdLevel::Avx2);
    TinyModelOptions o;
    o.arch = arch;
    o.seed = 3;
    o.compactVocabulary = true; // gpt-oss: its specials without the release's 201088 rows
    const std::string dir = freshOutputDir("thinking_budget", arch);
    makeTinyContainer(dir, o);
    return Model::open(dir);
}

std::vector<int32_t> chatPrompt(const Model &m, bool thinking)
{
    nlohmann::json req = {{"messages", {{{"role", "user"}, {"content", "Hello"}}}}, {"thinking", thinking}};
    std::vector<int32_t> ids;
    for (const ChatSegment &s : renderChat(m.info().chatFormat, req.dump())) {
        const std::vector<int32_t> part = m.tokenize(s.text, s.markup);
        ids.insert(ids.end(), part.begin(), part.end());
    }
    return ids;
}

GenResult greedy(Model &m, const std::vector<int32_t> &prompt, int maxTokens, std::shared_ptr<TokenConstraint> c)
{
    GenParams p;
    p.temperature = 0;
    p.maxTokens = maxTokens;
    p.constraint = std::move(c);
    p.reply = m.replyParser(prompt);
    m.resetState();
    return m.generate(prompt, p);
}

bool hasMarkup(const std::string &s)
{
    for (const char *m : {"<think>", "</think>", "<|channel|>", "<|message|>", "<|end|>", "<|start|>"})
        if (s.find(m) != std::string::npos)
            return true;
    return false;
}

} // namespace

TEST(ThinkingBudget, CutsTheReasoningAtTheBudgetAndTheAnswerFollows)
{
    for (const Family &f : kFamilies) {
        SCOPED_TRACE(f.arch);
        auto model = tinyModel(f.arch);
        const std::vector<int32_t> prompt = chatPrompt(*model, true);
        const std::vector<int32_t> close = model->tokenize(f.closeMarkup, true);
        const std::vector<int32_t> lead = model->tokenize(f.answerLead, true);
        constexpr int kBudget = 4, kMax = 40;

        // A budget beyond max_tokens: the model reasons freely, as it would without one.
        const GenResult free = greedy(*model, prompt, kMax, makeThinkingBudget(*model, 1000, prompt));
        const GenResult cut = greedy(*model, prompt, kMax, makeThinkingBudget(*model, kBudget, prompt));
        // Where the reasoning starts: after the open markup the budget wrote (none for R1,
        // whose prompt opened it). The tiny model must reason past the budget by itself for
        // the cut to mean anything.
        const std::string opened = f.arch == std::string("deepseek-v3") ? "" : f.arch == std::string("gpt-oss")
                                                                                   ? "<|channel|>analysis<|message|>"
                                                                                   : "<think>\n";
        const size_t start = model->tokenize(opened, true).size();
        if (start == 0) // nothing forced before the reasoning: the same tokens as no constraint at all
            EXPECT_EQ(greedy(*model, prompt, kMax, nullptr).tokens, free.tokens);
        const size_t at = start + kBudget;
        ASSERT_GT(free.tokens.size(), at) << "the tiny model ended its reasoning early: " << free.text;
        ASSERT_EQ(std::find(free.tokens.begin() + std::ptrdiff_t(start), free.tokens.begin() + std::ptrdiff_t(at), close[0]),
                  free.tokens.begin() + std::ptrdiff_t(at))
            << "the tiny model closed its reasoning itself: " << free.text;

        // Up to the cut, the same tokens as without it; then the close and the answer's lead.
        ASSERT_GT(cut.tokens.size(), at + close.size() + lead.size());
        EXPECT_TRUE(std::equal(free.tokens.begin(), free.tokens.begin() + std::ptrdiff_t(at), cut.tokens.begin()));
        EXPECT_TRUE(std::equal(close.begin(), close.end(), cut.tokens.begin() + std::ptrdiff_t(at)));
        EXPECT_TRUE(std::equal(lead.begin(), lead.end(), cut.tokens.begin() + std::ptrdiff_t(at + close.size())));

        // The parser reads them apart; neither shows markup.
        EXPECT_FALSE(cut.reply.reasoning.empty()) << cut.text;
        EXPECT_FALSE(cut.reply.content.empty()) << cut.text;
        EXPECT_FALSE(hasMarkup(cut.reply.reasoning)) << cut.reply.reasoning;
        EXPECT_FALSE(hasMarkup(cut.reply.content)) << cut.reply.content;

        // A budget of 0: the reasoning closes at once.
        const GenResult none = greedy(*model, prompt, kMax, makeThinkingBudget(*model, 0, prompt));
        EXPECT_TRUE(std::equal(close.begin(), close.end(), none.tokens.begin() + std::ptrdiff_t(start)));
        EXPECT_EQ(none.reply.reasoning.find_first_not_of(" \n"), std::string::npos) << none.reply.reasoning;
        EXPECT_FALSE(none.reply.content.empty()) << none.text;
    }
}

TEST(ThinkingBudget, NothingToCutWhenThePromptTurnedThinkingOff)
{
    for (const char *arch : {"deepseek-v3", "qwen3-moe"}) {
        SCOPED_TRACE(arch);
        auto model = tinyModel(arch);
        EXPECT_EQ(makeThinkingBudget(*model, 8, chatPrompt(*model, false)), nullptr);
    }
}

TEST(ThinkingBudget, RefusesANegativeBudget)
{
    auto model = tinyModel("deepseek-v3");
    try {
        makeThinkingBudget(*model, -1, chatPrompt(*model, true));
        FAIL() << "a budget of -1 was taken";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("0 or more tokens"), std::string::npos) << e.what();
    }
}
