// Multi-turn prefix reuse (waste/prefix.hpp: reusePrefix, checkpoints): over a 6-turn conversation,
// turns 2-6 read only the tokens past what the session already holds (all it read when
// the new prompt extends it, the checkpoint at the last answer's start when the format
// rewrites that answer), and the logits equal a fresh read of the whole prompt bit for
// bit. Per architecture: Kimi-Linear (r3, ChatML) and K3 (k3s1, XTML) with thinking on
// and off. The answers are the tokens a model writes (text and markup tokenised piece by
// piece, the end-of-message stop sampled but not read), so the test also proves on token
// ids that each renderer's turn N+1 begins with turn N's prompt plus that answer.
#include <gtest/gtest.h>

#include "chat_turns.hpp"
#include "session/model_impl.hpp"
#include "test_files.hpp"

#include <waste/convert.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>

namespace {

using Json = nlohmann::json;
using namespace chat_turns;
const std::string kFixtures = std::string(WASTE_FIXTURES_DIR);
const std::string kKimiLinear = kFixtures + "/reference-container/r3.waste";
const std::string kK3 = kFixtures + "/k3-container/k3s1.waste";

void expectReuse(const std::vector<TurnFigures> &turns, const char *what)
{
    ASSERT_EQ(turns.size(), 6u);
    EXPECT_EQ(turns[0].reused, 0) << what;
    for (size_t i = 0; i < turns.size(); ++i) {
        const TurnFigures &t = turns[i];
        EXPECT_TRUE(t.identical) << what << ": turn " << i + 1 << " logits differ from a fresh read";
        EXPECT_EQ(t.reused, t.expectedReuse) << what << ": turn " << i + 1;
        // On token ids: the new prompt begins with all that was read (the format kept the
        // answer as the model wrote it), or, where the format rewrote the answer, its
        // earliest changed token is the answer's first, where the checkpoint is.
        if (i > 0)
            EXPECT_EQ(t.common, size_t(t.expectedReuse)) << what << ": turn " << i + 1;
        EXPECT_LT(size_t(t.reused), t.promptTokens) << what << ": turn " << i + 1;
        if (i > 0)
            EXPECT_GT(t.reused, 0) << what << ": turn " << i + 1;
        std::printf("%-32s turn %zu: prompt %4zu tokens, read %4zu, reused %4d\n", what, i + 1, t.promptTokens,
                    t.promptTokens - size_t(t.reused), t.reused);
    }
}

} // namespace

TEST(PrefixReuse, KimiLinearChatMlAnswerSentBackAsWritten)
{
    expectReuse(converse(kKimiLinear, Format::ChatMl, true), "kimi-linear chatml, as written");
}

TEST(PrefixReuse, KimiLinearChatMlReasoningDroppedGoesBackToTheCheckpoint)
{
    expectReuse(converse(kKimiLinear, Format::ChatMl, false), "kimi-linear chatml, think dropped");
}

TEST(PrefixReuse, K3ThinkingOffReadsOnlyNewTokens)
{
    expectReuse(converse(kK3, Format::K3Plain, false), "k3 thinking off");
}

TEST(PrefixReuse, K3ThinkingOnWithReasoningContentReadsOnlyNewTokens)
{
    expectReuse(converse(kK3, Format::K3Thinking, true), "k3 thinking on, reasoning sent");
}

TEST(PrefixReuse, K3ThinkingOnWithoutReasoningGoesBackToTheAnswerStart)
{
    expectReuse(converse(kK3, Format::K3Thinking, false), "k3 thinking on, reasoning dropped");
}

namespace {

std::vector<int32_t> foxIds(const std::string &file)
{
    std::ifstream in(file);
    return Json::parse(in)["ids"].get<std::vector<int32_t>>();
}

} // namespace

TEST(Checkpoints, GenerateMarksTheAnswerStartAndARegenerateGoesBackThere)
{
    const std::vector<int32_t> ids = foxIds(kFixtures + "/k3-container/k3s1.tok.fox.json");
    auto m = waste::Model::open(kK3);
    waste::GenParams gp;
    gp.maxTokens = 6;
    gp.temperature = 0.7f;
    gp.seed = 7;
    const waste::GenResult first = m->generate(ids, gp);
    ASSERT_GT(m->position(), int(ids.size()));
    EXPECT_EQ(waste::readTokens(*m).size(), size_t(m->position()));
    EXPECT_TRUE(std::equal(ids.begin(), ids.end(), waste::readTokens(*m).begin()));

    // The same prompt again: nothing to read, the logits are the checkpoint's.
    EXPECT_EQ(waste::reusablePrefix(*m, ids), int(ids.size()));
    EXPECT_GT(m->position(), int(ids.size())); // asking changed nothing
    EXPECT_EQ(waste::reusePrefix(*m, ids), int(ids.size()));
    EXPECT_EQ(m->position(), int(ids.size()));
    const waste::GenResult again = m->generate({}, gp);
    EXPECT_EQ(again.tokens, first.tokens);

    // A prompt that leaves the shared part before the checkpoint starts over.
    std::vector<int32_t> other(ids.begin(), ids.begin() + 10);
    other.push_back(ids[3]);
    EXPECT_EQ(waste::reusePrefix(*m, other), 0);
    EXPECT_EQ(m->position(), 0);
}

TEST(Checkpoints, ARegenerateAtTheCheckpointCopiesNothingAndKeepsTheLogits)
{
    // A regenerate goes back to the checkpoint and marks the same position again; the state
    // there is the checkpoint's, so no copy is made, and what the checkpoint holds still
    // equals a fresh read of the prompt bit for bit.
    const std::vector<int32_t> ids = foxIds(kFixtures + "/k3-container/k3s1.tok.fox.json");
    auto m = waste::Model::open(kK3);
    auto &impl = dynamic_cast<waste::session::ModelImpl &>(*m);
    waste::GenParams gp;
    gp.maxTokens = 4;
    gp.temperature = 0.7f;
    gp.seed = 3;
    const waste::GenResult first = m->generate(ids, gp);
    EXPECT_EQ(impl.checkpointCopies(), 1);
    for (int round = 0; round < 2; ++round) {
        ASSERT_EQ(waste::reusePrefix(*m, ids), int(ids.size()));
        EXPECT_EQ(m->generate({}, gp).tokens, first.tokens) << "round " << round;
        EXPECT_EQ(impl.checkpointCopies(), 1) << "round " << round; // marked at the kept position: skipped
    }
    ASSERT_EQ(waste::reusePrefix(*m, ids), int(ids.size()));
    const std::vector<float> kept = m->eval({});
    auto fresh = waste::Model::open(kK3);
    const std::vector<float> want = fresh->eval(ids);
    ASSERT_EQ(kept.size(), want.size());
    EXPECT_EQ(std::memcmp(kept.data(), want.data(), want.size() * sizeof(float)), 0);
    // From the checkpoint's recurrent state on, the reads equal a fresh read too.
    const std::vector<int32_t> more(first.tokens.begin(), first.tokens.end());
    const std::vector<float> onKept = m->eval(more), onFresh = fresh->eval(more);
    EXPECT_EQ(std::memcmp(onKept.data(), onFresh.data(), onFresh.size() * sizeof(float)), 0);

    // An answer that starts somewhere new is copied.
    m->generate(std::vector<int32_t>{ids[1], ids[2]}, gp);
    EXPECT_EQ(impl.checkpointCopies(), 2);
}

TEST(Checkpoints, OneIsKeptTheNewest)
{
    const std::vector<int32_t> ids = foxIds(kFixtures + "/reference-container/r3.tok.fox.json");
    auto m = waste::Model::open(kKimiLinear);
    m->eval(std::span<const int32_t>(ids).first(40));
    waste::markCheckpoint(*m);
    m->eval(std::span<const int32_t>(ids).subspan(40, 40));
    waste::markCheckpoint(*m);
    m->eval(std::span<const int32_t>(ids).subspan(80, 20));
    std::vector<int32_t> edited(ids.begin(), ids.begin() + 60); // leaves what was read at 60
    edited.push_back(ids[0] == ids[60] ? ids[1] : ids[0]);
    EXPECT_EQ(waste::reusablePrefix(*m, edited), 0); // the checkpoint at 40 went when 80 was marked
    edited.assign(ids.begin(), ids.begin() + 85);
    edited.push_back(ids[0] == ids[85] ? ids[1] : ids[0]);
    EXPECT_EQ(waste::reusablePrefix(*m, edited), 80);
    EXPECT_EQ(waste::reusablePrefix(*m, std::span<const int32_t>(ids).first(120)), 100); // the live state counts too
    EXPECT_EQ(m->position(), 100);                                                      // asking changed nothing
}

TEST(Checkpoints, TheBudgetCountsThem)
{
    // A checkpoint is the recurrent state plus one row of logits. Every budget, the engine's
    // default included, gives it from the expert cache, or keeps none when that would leave
    // less than the smallest cache; the plan says which (resolveBudget) and the engine opens so.
    const waste::MemoryPlan p = waste::planMemory(kKimiLinear, 4096);
    const int64_t bytes = waste::checkpointBytes(kKimiLinear);
    EXPECT_EQ(bytes, (3 * (4 * 32 * 32 + 3 * 3 * 4 * 32) + 316) * 4); // r3: 3 KDA layers of 4 x 32, 316 logits
    EXPECT_EQ(p.checkpoint_bytes, bytes);
    const waste::BudgetChoice byEngine = waste::resolveBudget(p, 0);
    EXPECT_TRUE(byEngine.checkpoint_kept);
    EXPECT_EQ(byEngine.expert_cache_bytes, byEngine.budget_bytes - p.floor_bytes + p.min_expert_cache - bytes);
    auto byDefault = waste::Model::open(kKimiLinear);
    EXPECT_EQ(byDefault->info().budgetBytes, byEngine.budget_bytes); // what `waste plan` says
    EXPECT_EQ(byDefault->info().expertCacheBytes, byEngine.expert_cache_bytes);

    waste::OpenOptions o;
    o.ramBudget = p.recommended_bytes;
    auto m = waste::Model::open(kKimiLinear, o);
    EXPECT_EQ(m->info().expertCacheBytes, waste::resolveBudget(p, o.ramBudget).expert_cache_bytes);
    EXPECT_EQ(m->info().expertCacheBytes, o.ramBudget - p.floor_bytes + p.min_expert_cache - bytes);

    o.ramBudget = p.floor_bytes; // no room: the cache stays whole, no checkpoint is kept
    EXPECT_FALSE(waste::resolveBudget(p, o.ramBudget).checkpoint_kept);
    auto tight = waste::Model::open(kKimiLinear, o);
    EXPECT_EQ(tight->info().expertCacheBytes, p.min_expert_cache);
    const std::vector<int32_t> ids = foxIds(kFixtures + "/reference-container/r3.tok.fox.json");
    tight->eval(std::span<const int32_t>(ids).first(40));
    waste::markCheckpoint(*tight);
    tight->eval(std::span<const int32_t>(ids).subspan(40, 10));
    EXPECT_EQ(waste::reusablePrefix(*tight, std::span<const int32_t>(ids).first(45)), 0);
    bool said = false;
    for (const std::string &w : tight->info().warnings)
        said = said || w.find("checkpoint") != std::string::npos;
    EXPECT_TRUE(said);

    // The full K3: 69 KDA layers of 96 heads x 128 x 128, conv rings of kernel 4, 163840 logits.
    EXPECT_EQ(waste::checkpointBytes(kFixtures + "/k3-full-manifest"), (69 * (96LL * 128 * 128 + 3 * 3 * 96 * 128) + 163840) * 4);
}

TEST(Checkpoints, ASavedStateHoldsThemSoAReopenedChatContinues)
{
    const std::vector<int32_t> ids = foxIds(kFixtures + "/k3-container/k3s1.tok.fox.json");
    const std::string path = std::string(WASTE_TEST_OUTPUT_DIR) + "/k3s1.checkpoint.state";
    auto m = waste::Model::open(kK3);
    m->eval(std::span<const int32_t>(ids).first(50));
    waste::markCheckpoint(*m);
    m->eval(std::span<const int32_t>(ids).subspan(50, 30));
    m->saveState(path);

    // The next turn rewrote what came after position 50.
    std::vector<int32_t> next(ids.begin(), ids.begin() + 50);
    next.insert(next.end(), ids.begin() + 100, ids.end());
    auto reopened = waste::Model::open(kK3);
    reopened->loadState(path);
    EXPECT_EQ(reopened->position(), 80);
    EXPECT_EQ(waste::readTokens(*reopened), waste::readTokens(*m));
    ASSERT_EQ(waste::reusePrefix(*reopened, next), 50);
    const std::vector<float> a = reopened->eval(std::span<const int32_t>(next).subspan(50));
    auto fresh = waste::Model::open(kK3);
    EXPECT_TRUE(sameBits(a, fresh->eval(next)));

    // Only the part the next turn needs: the state at the checkpoint (a plain state there),
    // or the live state; each is the whole file less the other's bytes.
    const std::string atCheckpoint = path + ".checkpoint", live = path + ".live";
    waste::saveState(*m, atCheckpoint, waste::SavedParts::Checkpoint);
    waste::saveState(*m, live, waste::SavedParts::LiveState);
    const auto size = [](const std::string &p) { return int64_t(std::ifstream(p, std::ios::binary | std::ios::ate).tellg()); };
    EXPECT_EQ(size(path) - size(live), 8 + waste::checkpointBytes(kK3));
    auto fromCheckpoint = waste::Model::open(kK3);
    fromCheckpoint->loadState(atCheckpoint);
    EXPECT_EQ(fromCheckpoint->position(), 50);
    EXPECT_EQ(waste::checkpointPosition(*fromCheckpoint), 0);
    ASSERT_EQ(waste::reusePrefix(*fromCheckpoint, next), 50);
    EXPECT_TRUE(sameBits(a, fromCheckpoint->eval(std::span<const int32_t>(next).subspan(50))));
    auto fromLive = waste::Model::open(kK3);
    fromLive->loadState(live);
    EXPECT_EQ(fromLive->position(), 80);
    EXPECT_EQ(waste::reusablePrefix(*fromLive, next), 0); // no checkpoint to go back to
}

namespace {

// Bit for bit: the logits of a session that kept `kept` tokens and read the rest of
// `prompt` as generate() reads a prompt (a pass, even of one token: eval() reads a single
// token as a generated one), against a fresh session that read it all.
void expectSameAsFresh(waste::Model &m, const std::string &dir, const std::vector<int32_t> &prompt, int kept)
{
    waste::GenParams gp;
    gp.maxTokens = 1;
    gp.temperature = 0.0f;
    m.generate(std::vector<int32_t>(prompt.begin() + kept, prompt.end()), gp);
    ASSERT_EQ(waste::reusePrefix(m, prompt), int(prompt.size())); // the checkpoint at the answer's start
    const std::vector<float> got = m.eval({});
    auto fresh = waste::Model::open(dir);
    const std::vector<float> want = fresh->eval(prompt);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0) << "kept " << kept;
}

} // namespace

// A model whose state is only rows by position (global attention: MLA latents, DSA keys,
// GQA keys and values) goes back to any prefix it read, with no checkpoint there: the
// prompt that changes the last answer's start (DeepSeek-V3.2 rewrites the generation
// prompt's <think> as </think>) reads only from its first changed token. Recurrent models
// still go back only to a checkpoint.
TEST(PrefixReuse, AStateOfPositionalRowsIsCutWhereThePromptsPart)
{
    for (const char *arch : {"deepseek-v3", "deepseek-v32", "qwen3-moe"}) {
        waste::TinyModelOptions o;
        o.arch = arch;
        o.seed = 5;
        const std::string dir = freshOutputDir("prefix_reuse", arch);
        waste::makeTinyContainer(dir, o);
        auto m = waste::Model::open(dir);
        std::vector<int32_t> ids;
        for (int i = 0; i < 40; ++i)
            ids.push_back(int32_t(3 + (i * 37) % 200));
        m->eval(ids);
        ASSERT_EQ(waste::checkpointPosition(*m), 0) << arch; // eval marks none

        // Another continuation after 25 shared tokens: 25 kept, the rest read.
        std::vector<int32_t> other(ids.begin(), ids.begin() + 25);
        for (int i = 0; i < 10; ++i)
            other.push_back(int32_t(211 + i));
        EXPECT_EQ(waste::reusablePrefix(*m, other), 25) << arch;
        EXPECT_EQ(m->position(), 40) << arch; // asking changed nothing
        ASSERT_EQ(waste::reusePrefix(*m, other), 25) << arch;
        EXPECT_EQ(m->position(), 25) << arch;
        expectSameAsFresh(*m, dir, other, 25);

        // A prompt the state read all of: its last token is read again for its logits.
        const std::vector<int32_t> shorter(other.begin(), other.begin() + 30);
        ASSERT_EQ(waste::reusePrefix(*m, shorter), 29) << arch;
        expectSameAsFresh(*m, dir, shorter, 29);
        // Nothing shared: from the start.
        EXPECT_EQ(waste::reusePrefix(*m, std::vector<int32_t>{int32_t(250), int32_t(251)}), 0) << arch;
        EXPECT_EQ(m->position(), 0) << arch;
    }
    // Kimi-Linear's KDA layers are recurrent: without a checkpoint nothing is kept.
    auto r3 = waste::Model::open(kKimiLinear);
    std::vector<int32_t> ids;
    for (int i = 0; i < 20; ++i)
        ids.push_back(int32_t(3 + i));
    r3->eval(ids);
    std::vector<int32_t> other(ids.begin(), ids.begin() + 12);
    other.push_back(int32_t(99));
    EXPECT_EQ(waste::reusablePrefix(*r3, other), 0);
}
