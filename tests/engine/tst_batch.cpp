// Several sequences decoded together (waste/batch.hpp) give each sequence the logits, bit
// for bit, and so the tokens it gets alone: on Kimi-Linear (KDA + MLA, plain residual) and
// on K3 (Attention Residuals, latent MoE). A long prompt is read a chunk per step while the
// other sequences keep getting a token every step. Decode steps of several sequences read
// their predicted experts early (router lookahead) and that changes no logit either. The
// same on a Kimi-Linear whose experts stay MXFP4 (native records, computed several at once
// as they land: Forward::nativeExperts).
#include <gtest/gtest.h>

#include "cache/streamed_expert_source.hpp"
#include "test_files.hpp"
#include "model/forward.hpp"
#include "session/model_impl.hpp"
#include "waste/batch.hpp"
#include "waste/convert.hpp"
#include "waste/prefix.hpp"
#include "waste/waste.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>

namespace {

const std::string kFixtures = WASTE_FIXTURES_DIR;
const std::string kR3 = kFixtures + "/reference-container/r3.waste";
const std::string kK3 = kFixtures + "/k3-container/k3s1.waste";

// The tiny Kimi-Linear with MXFP4 experts kept native (mktiny --container --experts-layout
// mxfp4 --experts native), made once per run of this program.
const std::string &nativeMxfp4()
{
    static const std::string dir = [] {
        const std::string d = freshOutputDir("tst_batch", "native-mxfp4");
        waste::TinyModelOptions o;
        o.seed = 11;
        o.experts = waste::TinyExperts::MXFP4;
        o.expertEncoding = waste::ExpertEncoding::Native;
        waste::makeTinyContainer(d, o);
        return d;
    }();
    return dir;
}

std::vector<int32_t> ids(const std::string &file)
{
    std::ifstream in(file);
    return nlohmann::json::parse(in)["ids"].get<std::vector<int32_t>>();
}

std::vector<int32_t> foxIds(const std::string &container)
{
    return ids(container == kR3 ? kFixtures + "/reference-container/r3.tok.fox.json"
                                : kFixtures + "/k3-container/k3s1.tok.fox.json");
}

bool sameBits(const std::vector<float> &a, const std::vector<float> &b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// A budget with room beside the default for the states of a full batch.
waste::OpenOptions options(const std::string &container)
{
    waste::OpenOptions o;
    const waste::MemoryPlan plan = waste::planMemory(container, 512);
    o.ramBudget = plan.recommended_bytes + 2 * waste::kMaxSequences * plan.state_bytes;
    o.ctxTokens = 512;
    o.threads = 2;
    return o;
}

// Three token streams fed through Forward::runParts in one chunk per step (prompt pieces
// of uneven sizes beside single tokens) leave each state with the logits Forward::run gives
// that stream alone, after every step. aloneOneByOne: the alone runs read one record at a
// time, so they take every expert singly (no read-ahead: records handed over one by one)
// while the batched run takes the records that land together at once.
void expectPartsEqualAlone(const std::string &container, bool aloneOneByOne = false)
{
    const std::vector<int32_t> fox = foxIds(container);
    const std::vector<std::vector<int32_t>> streams = {
        std::vector<int32_t>(fox.begin(), fox.begin() + 40), {72, 101, 108, 108, 111, 280, 258, 9, 33},
        std::vector<int32_t>(fox.rbegin(), fox.rbegin() + 25)};
    // Tokens each stream reads per step: prompt pieces, then one at a time.
    const std::vector<std::vector<int>> plan = {{17, 1, 22}, {9, 7, 1}, {1, 1, 1}, {1, 0, 1}};

    waste::session::ModelImpl batched(container, options(container));
    waste::OpenOptions aloneOptions = options(container);
    if (aloneOneByOne) {
        aloneOptions.readAhead = false;
        aloneOptions.threads = 1;
        batched.computePool().setMinWork(1); // and every loop of the batched run split
    }
    waste::session::ModelImpl alone(container, aloneOptions);
    const waste::format::ModelConfig &c = batched.manifest().config;
    std::vector<waste::model::State> bs(streams.size()), as(streams.size());
    for (size_t i = 0; i < streams.size(); ++i) {
        bs[i].allocate(c, 512);
        as[i].allocate(c, 512);
    }
    std::vector<size_t> at(streams.size(), 0);
    for (size_t s = 0; s < 4; ++s) {
        std::vector<int32_t> tokens;
        std::vector<waste::model::Forward::Part> parts;
        for (size_t i = 0; i < streams.size(); ++i) {
            const int n = plan[s][i];
            if (n == 0)
                continue;
            const std::span<const int32_t> piece(streams[i].data() + at[i], size_t(n));
            tokens.insert(tokens.end(), piece.begin(), piece.end());
            parts.push_back({&bs[i], n});
            alone.forward().run(piece, as[i], alone.experts(), nullptr);
            at[i] += size_t(n);
        }
        batched.forward().runParts(tokens, parts, batched.experts());
        for (size_t i = 0; i < streams.size(); ++i) {
            SCOPED_TRACE("step " + std::to_string(s) + ", stream " + std::to_string(i));
            EXPECT_EQ(bs[i].pos, as[i].pos);
            EXPECT_FALSE(bs[i].lastLogits.empty());
            EXPECT_TRUE(sameBits(bs[i].lastLogits, as[i].lastLogits));
        }
    }
    // The batch read each expert once per step for all streams: fewer reads than alone.
    EXPECT_LT(batched.stats().demandHits + batched.stats().demandMisses,
              alone.stats().demandHits + alone.stats().demandMisses);
}

struct Alone {
    waste::GenResult result;
    std::vector<float> logprobs;
    std::vector<int32_t> read; // what the session read (waste/prefix.hpp)
    int checkpoint = 0;
};

Alone generateAlone(const std::string &container, const std::vector<int32_t> &prompt, const waste::GenParams &params)
{
    auto m = waste::Model::open(container, options(container));
    Alone a;
    a.result = m->generate(prompt, params, [&](const waste::TokenEvent &ev) {
        a.logprobs.push_back(ev.logprob);
        return true;
    });
    a.read = waste::readTokens(*m);
    a.checkpoint = waste::checkpointPosition(*m);
    return a;
}

// Sampled generations (seeded, different settings), one with a long prompt added once the
// others decode, give exactly the tokens, log-probabilities and text of each generated
// alone (a prompt's logits do not depend on how it is cut into passes); the short ones get a
// token in every step while the long prompt is read beside them, at most
// Batch::kPromptPieceWhileDecoding tokens a step.
void expectBatchEqualsAlone(const std::string &container)
{
    const std::vector<int32_t> fox = foxIds(container);
    std::vector<int32_t> longPrompt;
    for (int r = 0; r < 2; ++r)
        longPrompt.insert(longPrompt.end(), fox.begin(), fox.end());
    const std::vector<std::vector<int32_t>> prompts = {{72, 101, 108, 108, 111, 280, 258}, longPrompt,
                                                       std::vector<int32_t>(fox.begin(), fox.begin() + 30)};
    std::vector<waste::GenParams> params(3);
    params[0].maxTokens = 24;
    params[0].temperature = 0.9f;
    params[0].seed = 7;
    params[1].maxTokens = 6;
    params[2].maxTokens = 20;
    params[2].temperature = 0.7f;
    params[2].topP = 0.9f;
    params[2].seed = 3;

    auto model = waste::openForBatch(container, options(container), 3);
    ASSERT_EQ(waste::batchSequences(*model), 3);
    // Every loop of the batched steps split over the threads, however small (the alone runs
    // keep the default): the chunk-wide projections split by rows, each row's sum unchanged.
    waste::compute::ThreadPool &pool = static_cast<waste::session::ModelImpl &>(*model).computePool();
    pool.setMinWork(1);
    waste::Batch batch(*model);
    std::map<waste::Batch::Id, size_t> which;
    std::vector<std::vector<float>> logprobs(3);
    std::vector<std::vector<int>> tokenSteps(3);
    int stepNo = 0;
    auto add = [&](size_t i) {
        waste::Batch::Request r;
        r.prompt = prompts[i];
        r.params = params[i];
        r.useSession = i == 0;
        r.onToken = [&, i](const waste::TokenEvent &ev) {
            logprobs[i].push_back(ev.logprob);
            tokenSteps[i].push_back(stepNo);
            return true;
        };
        which[batch.add(std::move(r))] = i;
    };
    add(0);
    add(2);
    std::vector<std::optional<waste::GenResult>> results(3);
    const int64_t splitBefore = pool.splitLoops();
    for (; batch.active() > 0; ++stepNo) {
        ASSERT_LT(stepNo, 200);
        if (stepNo == 1) // the others have read their prompts: the long one comes while they decode
            add(1);
        for (waste::Batch::Ended &e : batch.step()) {
            ASSERT_FALSE(e.failed) << e.message;
            results[which.at(e.id)] = std::move(e.result);
        }
    }
    EXPECT_GT(pool.splitLoops(), splitBefore + 100) << "the batched steps were not split over the threads";
    for (size_t i = 0; i < 3; ++i) {
        SCOPED_TRACE("sequence " + std::to_string(i));
        ASSERT_TRUE(results[i].has_value());
        const Alone a = generateAlone(container, prompts[i], params[i]);
        EXPECT_EQ(results[i]->tokens, a.result.tokens);
        EXPECT_EQ(results[i]->text, a.result.text);
        EXPECT_EQ(results[i]->finish, a.result.finish);
        EXPECT_EQ(results[i]->promptTokens, int(prompts[i].size()));
        ASSERT_EQ(logprobs[i].size(), a.logprobs.size());
        EXPECT_EQ(0, std::memcmp(logprobs[i].data(), a.logprobs.data(), a.logprobs.size() * sizeof(float)));
        // The session's sequence left the session where generate() would, for the next turn's reuse.
        if (i == 0) {
            EXPECT_EQ(waste::readTokens(*model), a.read);
            EXPECT_EQ(waste::checkpointPosition(*model), a.checkpoint);
            EXPECT_EQ(model->position(), int(a.read.size()));
        }
    }
    // The long prompt came while the others decoded, and they got a token every step.
    ASSERT_FALSE(tokenSteps[1].empty());
    EXPECT_GE(tokenSteps[1][0], 2) << "the long prompt was answered before it was read";
    for (size_t i : {size_t(0), size_t(2)}) {
        ASSERT_GE(tokenSteps[i].size(), 3u);
        EXPECT_LE(tokenSteps[i][1], tokenSteps[1][0]) << "sequence " << i << " was not decoded beside the long prompt";
        for (size_t k = 1; k < tokenSteps[i].size(); ++k)
            EXPECT_EQ(tokenSteps[i][k], tokenSteps[i][k - 1] + 1) << "sequence " << i << " waited at token " << k;
    }
}

// Decode steps of several sequences predict the next layer's experts for every sequence
// (router lookahead, model/lookahead.cpp) and read the guesses early, at a budget whose
// cache is a few records, so guesses are read from disk; each sequence's logits stay those
// of running it alone with no lookahead at all, bit for bit, after every step. (r3 has 8
// experts a layer: three streams' guesses are all resident there, so only K3 reads any.)
// tight: a cache whose slots one step's demand fills (three streams' top-k and the next
// layer's), so the guesses wait for the layer's records to be consumed (issueDeferred).
void expectBatchedLookaheadChangesNoLogit(const std::string &container, bool guessesRead, bool tight = false)
{
    const std::vector<int32_t> fox = foxIds(container);
    const std::vector<std::vector<int32_t>> streams = {std::vector<int32_t>(fox.begin(), fox.begin() + 12),
                                                       {72, 101, 108, 108, 111, 280, 258, 9, 33, 44, 55, 66},
                                                       std::vector<int32_t>(fox.rbegin(), fox.rbegin() + 12)};
    const waste::MemoryPlan plan = waste::planMemory(container, 512);
    const int topK = waste::session::ModelImpl(container, options(container)).manifest().config.topK;
    // The floor holds two layers' top-k; past them (and the session's checkpoint, which
    // comes out of the cache first), room for the guesses of three streams (the source
    // keeps a top-k per stream and one more free, and counts guesses already resident
    // against the room) and a few records more.
    waste::OpenOptions small = options(container);
    small.ramBudget = plan.floor_bytes + plan.checkpoint_bytes + (tight ? topK : 4 * topK + 2) * plan.max_record_bytes;
    waste::OpenOptions none = small;
    none.lookahead = false;
    none.ioRing = false; // the reference reads on reader threads, the batch through io_uring where allowed
    waste::session::ModelImpl batched(container, small);
    waste::session::ModelImpl alone(container, none);
    EXPECT_FALSE(alone.stats().ioRing);
    ASSERT_LT(batched.info().expertCacheBytes, plan.expert_bytes_total) << "the cache must not hold every record";
    const waste::format::ModelConfig &c = batched.manifest().config;
    std::vector<waste::model::State> bs(streams.size()), as(streams.size());
    for (size_t i = 0; i < streams.size(); ++i) {
        bs[i].allocate(c, 512);
        as[i].allocate(c, 512);
    }
    // The first token of each alone (a one-token step, predicted before too), then steps
    // of one token of every stream.
    int64_t batchedFills = 0;
    for (size_t k = 0; k < streams[0].size(); ++k) {
        std::vector<int32_t> tokens;
        std::vector<waste::model::Forward::Part> parts;
        for (size_t i = 0; i < streams.size(); ++i) {
            if (k == 0 && i > 0)
                continue;
            tokens.push_back(streams[i][k]);
            parts.push_back({&bs[i], 1});
            alone.forward().run(std::span<const int32_t>(&streams[i][k], 1), as[i], alone.experts(), nullptr);
        }
        const waste::Stats before = batched.stats();
        batched.forward().runParts(tokens, parts, batched.experts());
        if (parts.size() > 1) { // the prediction is for every sequence of the step, not none
            EXPECT_GE(batched.stats().lookaheadPredicted - before.lookaheadPredicted,
                      int64_t(parts.size()) * (c.layers - 1 - c.firstDense))
                << "step " << k;
            batchedFills += batched.stats().speculativeFills - before.speculativeFills;
        }
        for (size_t i = 0; i < streams.size(); ++i) {
            if (k == 0 && i > 0)
                continue;
            SCOPED_TRACE("step " + std::to_string(k) + ", stream " + std::to_string(i));
            EXPECT_EQ(bs[i].pos, as[i].pos);
            EXPECT_FALSE(bs[i].lastLogits.empty());
            EXPECT_TRUE(sameBits(bs[i].lastLogits, as[i].lastLogits));
        }
        if (k == 0) // the other streams' first tokens on their own, to keep them in step
            for (size_t i = 1; i < streams.size(); ++i) {
                const waste::model::Forward::Part one{&bs[i], 1};
                batched.forward().runParts(std::span<const int32_t>(&streams[i][0], 1),
                                           std::span<const waste::model::Forward::Part>(&one, 1), batched.experts());
                alone.forward().run(std::span<const int32_t>(&streams[i][0], 1), as[i], alone.experts(), nullptr);
                EXPECT_TRUE(sameBits(bs[i].lastLogits, as[i].lastLogits));
            }
    }
    if (guessesRead)
        EXPECT_GT(batchedFills, 0) << "no guess of a batched step was read early";
    EXPECT_EQ(alone.stats().lookaheadPredicted, 0);
}

} // namespace

TEST(Batch, KimiLinearBatchedLookaheadChangesNoLogit) { expectBatchedLookaheadChangesNoLogit(kR3, false); }

TEST(Batch, K3BatchedLookaheadChangesNoLogit) { expectBatchedLookaheadChangesNoLogit(kK3, true); }

// At a cache a step's demand fills, the guesses are still read: once the layer is done,
// during the next layer's attention.
TEST(Batch, K3GuessesOfAStepThatFillsTheCacheAreReadAfterIt) { expectBatchedLookaheadChangesNoLogit(kK3, true, true); }

TEST(Batch, KimiLinearPartsEqualAloneBitForBit) { expectPartsEqualAlone(kR3); }

TEST(Batch, K3PartsEqualAloneBitForBit) { expectPartsEqualAlone(kK3); }

TEST(Batch, KimiLinearSequencesEqualAlone) { expectBatchEqualsAlone(kR3); }

TEST(Batch, K3SequencesEqualAlone) { expectBatchEqualsAlone(kK3); }

TEST(Batch, NativeMxfp4BatchedLookaheadChangesNoLogit) { expectBatchedLookaheadChangesNoLogit(nativeMxfp4(), false); }

TEST(Batch, NativeMxfp4PartsEqualAloneBitForBit) { expectPartsEqualAlone(nativeMxfp4(), true); }

TEST(Batch, NativeMxfp4SequencesEqualAlone) { expectBatchEqualsAlone(nativeMxfp4()); }

// A prompt stopped by its caller while it is read alone beside decoding sequences ends by
// itself (Cancelled, at the next layer); the others go on and get, bit for bit, what they get
// alone. (The pass's stop once failed every sequence of the step.)
TEST(Batch, AStoppedPromptEndsAloneAndTheOthersGoOn)
{
    const std::vector<int32_t> fox = foxIds(kR3);
    auto model = waste::openForBatch(kR3, options(kR3), 4);
    waste::Batch batch(*model);
    waste::GenParams params;
    params.maxTokens = 12;
    params.temperature = 0.8f;
    std::map<waste::Batch::Id, int> seedOf;
    for (int seed : {1, 2}) {
        waste::Batch::Request r;
        r.prompt.assign(fox.begin(), fox.begin() + 10 + seed);
        r.params = params;
        r.params.seed = uint64_t(seed);
        seedOf[batch.add(std::move(r))] = seed;
    }
    ASSERT_TRUE(batch.step().empty()); // both prompts read: they decode from now on

    waste::Batch::Request stopped;
    stopped.prompt.assign(fox.begin(), fox.end());
    stopped.params = params;
    int reports = 0;
    stopped.onPrefill = [&reports](int, int) { return ++reports < 2; }; // stop after the first layer
    const waste::Batch::Id stoppedId = batch.add(std::move(stopped));

    std::map<int, waste::GenResult> results;
    bool stoppedEnded = false;
    for (int steps = 0; batch.active() > 0; ++steps) {
        ASSERT_LT(steps, 100);
        for (waste::Batch::Ended &e : batch.step()) {
            if (e.id == stoppedId) {
                EXPECT_TRUE(e.failed);
                EXPECT_EQ(e.code, waste::ErrorCode::Cancelled) << e.message;
                stoppedEnded = true;
                continue;
            }
            ASSERT_FALSE(e.failed) << "a sequence beside the stopped prompt failed: " << e.message;
            results[seedOf.at(e.id)] = std::move(e.result);
        }
    }
    EXPECT_TRUE(stoppedEnded);
    EXPECT_EQ(reports, 2) << "the stop took effect at the next layer";
    ASSERT_EQ(results.size(), 2u);
    for (const auto &[seed, r] : results) {
        waste::GenParams alone = params;
        alone.seed = uint64_t(seed);
        const Alone a = generateAlone(kR3, std::vector<int32_t>(fox.begin(), fox.begin() + 10 + seed), alone);
        EXPECT_EQ(r.tokens, a.result.tokens) << "seed " << seed;
    }
}

TEST(Batch, RefusesPastItsCapacityWithAReason)
{
    auto model = waste::openForBatch(kR3, options(kR3), 2);
    ASSERT_EQ(waste::batchSequences(*model), 2);
    waste::Batch batch(*model);
    EXPECT_EQ(batch.capacity(), 2);
    waste::Batch::Request r;
    r.prompt = {72, 101, 108};
    r.params.maxTokens = 2;
    batch.add(r);
    try {
        batch.add(r); // a second own state: the budget holds the session's and one more
        FAIL() << "a sequence past the budget's states was added";
    } catch (const waste::Error &e) {
        EXPECT_NE(std::string(e.what()).find("useSession"), std::string::npos) << e.what();
    }
    r.useSession = true;
    batch.add(r);
    try {
        batch.add(r);
        FAIL() << "a third sequence was added to a batch of two";
    } catch (const waste::Error &e) {
        EXPECT_NE(std::string(e.what()).find("batch is full"), std::string::npos) << e.what();
    }
    r.prompt = {1 << 30};
    EXPECT_THROW(waste::Batch(*model).add(r), waste::Error);
    int ended = 0;
    while (batch.active() > 0)
        ended += int(batch.step().size());
    EXPECT_EQ(ended, 2);
}

// A budget that holds one full-context state beside the session's: sequences that need only
// a few positions each (their prompt and maxTokens) share that room, more of them at once
// than full-context ones, and each gets what it gets alone, bit for bit. One that needs the
// whole context waits for the room the short ones leave (admits() says so, add() refuses
// with a reason), and is taken once they end.
TEST(Batch, ShortSequencesShareTheRoomOfOneFullState)
{
    const waste::MemoryPlan plan = waste::planMemory(kR3, 512);
    auto model = waste::openForBatch(kR3, options(kR3), 8);
    // r3's floor alone has room for dozens of its states (Batch.ExtraSequences…): the room is
    // narrowed to one full state, as a budget of a real model's size gives it.
    static_cast<waste::session::ModelImpl &>(*model).limitStateRoom(plan.state_bytes);
    waste::Batch batch(*model);
    EXPECT_EQ(batch.capacity(), 8);

    const waste::format::ModelConfig &c = static_cast<waste::session::ModelImpl &>(*model).manifest().config;
    const std::vector<int32_t> fox = foxIds(kR3);
    const std::vector<int32_t> prompt(fox.begin(), fox.begin() + 12);
    const int maxTokens = 10;
    const int64_t shortState = waste::model::State::bytesFor(c, int(prompt.size()) + maxTokens);
    const int64_t room = plan.state_bytes;
    const int fit = int(std::min<int64_t>(room / shortState, 7));
    ASSERT_GE(fit, 2) << "r3's short states must be small enough for the test to mean anything";

    waste::GenParams params;
    params.maxTokens = maxTokens;
    params.temperature = 0.8f;
    std::map<waste::Batch::Id, int> seedOf;
    auto request = [&](int seed, int tokens) {
        waste::Batch::Request r;
        r.prompt = prompt;
        r.params = params;
        r.params.seed = uint64_t(seed);
        r.params.maxTokens = tokens;
        return r;
    };
    for (int i = 0; i < fit; ++i) {
        ASSERT_TRUE(batch.admits(prompt.size(), maxTokens, false)) << i;
        seedOf[batch.add(request(i + 1, maxTokens))] = i + 1;
    }
    // The room is spent: neither another short one nor a whole-context one fits now, but
    // the session (whose state is there anyway) still takes one.
    EXPECT_FALSE(batch.admits(prompt.size(), 0, false));
    if (fit < 7)
        EXPECT_FALSE(batch.admits(prompt.size(), maxTokens, false));
    try {
        batch.add(request(99, 0));
        FAIL() << "a whole-context sequence was added past the room for states";
    } catch (const waste::Error &e) {
        EXPECT_NE(std::string(e.what()).find("maxTokens"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(batch.admits(prompt.size(), 0, true));

    std::map<int, waste::GenResult> results;
    int steps = 0;
    while (batch.active() > 0) {
        ASSERT_LT(++steps, 100);
        for (waste::Batch::Ended &e : batch.step()) {
            ASSERT_FALSE(e.failed) << e.message;
            results[seedOf.at(e.id)] = std::move(e.result);
        }
    }
    ASSERT_EQ(int(results.size()), fit);
    for (const auto &[seed, r] : results) {
        waste::GenParams alone = params;
        alone.seed = uint64_t(seed);
        const Alone a = generateAlone(kR3, prompt, alone);
        EXPECT_EQ(r.tokens, a.result.tokens) << "seed " << seed;
        EXPECT_EQ(r.finish, a.result.finish) << "seed " << seed;
    }
    // Their room is back: the whole-context one fits now.
    EXPECT_TRUE(batch.admits(prompt.size(), 0, false));
    batch.add(request(99, 0));
}

// Forbids the end of text, so a sampled answer runs to the end of its context.
struct NoEnd : waste::TokenConstraint {
    explicit NoEnd(int32_t eos) : eos(eos) {}
    void allowed(std::vector<bool> &mask) override
    {
        std::fill(mask.begin(), mask.end(), true);
        mask[size_t(eos)] = false;
    }
    void accept(int32_t) override {}
    bool complete() const override { return false; }
    int32_t eos;
};

// Answers with no maxTokens start in states of their prompt and kAnswerRoom positions, so
// four of them share a room of three full-context states; as they run to the context's end
// their states grow, the room runs out, and the youngest give their states up and read their
// prompt and answer so far again later. Each still gets, bit for bit, the log-probabilities
// and tokens it gets alone. On Kimi-Linear (KDA states of fixed size, an MLA cache that
// grows) and gpt-oss (GQA caches that grow, sliding layers' rings of 16 that do not).
void expectGrowingAnswersLoseNothing(const std::string &container, const std::vector<int32_t> &prompt)
{
    const waste::MemoryPlan plan = waste::planMemory(container, 512);
    // The room of three full states beside the session's (a tiny model's floor holds more:
    // Batch.ShortSequencesShareTheRoomOfOneFullState).
    auto model = waste::openForBatch(container, options(container), 8);
    static_cast<waste::session::ModelImpl &>(*model).limitStateRoom(3 * plan.state_bytes);
    ASSERT_EQ(static_cast<waste::session::ModelImpl &>(*model).statePoolBytes(), 3 * plan.state_bytes);
    const int32_t eos = int32_t(model->info().eosId);
    waste::Batch batch(*model);

    const waste::format::ModelConfig &c = static_cast<waste::session::ModelImpl &>(*model).manifest().config;
    const int64_t first = waste::model::State::bytesFor(c, int(prompt.size()) + waste::kAnswerRoom);
    ASSERT_LE(4 * first, 3 * plan.state_bytes) << "four first states must fit the room of three full ones";

    waste::GenParams params;
    params.maxTokens = 0; // to the context's end
    params.temperature = 0.8f;
    params.constraint = std::make_shared<NoEnd>(eos);
    std::map<waste::Batch::Id, int> seedOf;
    std::map<int, std::vector<float>> logprobs;
    for (int seed = 1; seed <= 4; ++seed) {
        ASSERT_TRUE(batch.admits(prompt.size(), 0, false)) << seed;
        waste::Batch::Request r;
        r.prompt = prompt;
        r.params = params;
        r.params.seed = uint64_t(seed);
        r.onToken = [&logprobs, seed](const waste::TokenEvent &ev) {
            logprobs[seed].push_back(ev.logprob);
            return true;
        };
        seedOf[batch.add(std::move(r))] = seed;
    }
    std::map<int, waste::GenResult> results;
    int steps = 0;
    while (batch.active() > 0) {
        ASSERT_LT(++steps, 20000);
        for (waste::Batch::Ended &e : batch.step()) {
            ASSERT_FALSE(e.failed) << e.message;
            results[seedOf.at(e.id)] = std::move(e.result);
        }
    }
    EXPECT_GT(batch.preemptions(), 0) << "the states never outgrew the room: the test means nothing";
    ASSERT_EQ(results.size(), 4u);
    for (const auto &[seed, r] : results) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        waste::GenParams alone = params;
        alone.seed = uint64_t(seed);
        const Alone a = generateAlone(container, prompt, alone);
        EXPECT_EQ(r.finish, waste::FinishReason::ContextFull);
        EXPECT_EQ(int(r.tokens.size()), 512 - int(prompt.size()) + 1);
        EXPECT_EQ(r.tokens, a.result.tokens);
        EXPECT_EQ(r.finish, a.result.finish);
        ASSERT_EQ(logprobs[seed].size(), a.logprobs.size());
        for (size_t i = 0; i < a.logprobs.size(); ++i)
            if (logprobs[seed][i] != a.logprobs[i]) {
                ADD_FAILURE() << "first log-probability that differs: token " << i << ", " << logprobs[seed][i]
                              << " against " << a.logprobs[i] << " alone";
                break;
            }
    }
    // The room is whole again.
    EXPECT_TRUE(batch.admits(prompt.size(), 0, false));
}

TEST(Batch, KimiLinearGrowingAnswersPreemptTheYoungestAndLoseNothing)
{
    const std::vector<int32_t> fox = foxIds(kR3);
    expectGrowingAnswersLoseNothing(kR3, std::vector<int32_t>(fox.begin(), fox.begin() + 12));
}

TEST(Batch, GptOssGrowingAnswersPreemptTheYoungestAndLoseNothing)
{
    static const std::string dir = [] {
        const std::string d = freshOutputDir("tst_batch", "gpt-oss");
        waste::TinyModelOptions t;
        t.arch = "gpt-oss";
        t.compactVocabulary = true;
        waste::makeTinyContainer(d, t);
        return d;
    }();
    expectGrowingAnswersLoseNothing(dir, {72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100});
}

// The room for sequences beyond the session's comes first from the floor's prompt room that a
// piece of kPromptPieceWhileDecoding tokens leaves, then from half of the expert cache above its
// smallest size (batchShareAt), written out here from the plan's terms.
int64_t promptSpare(const waste::MemoryPlan &p)
{
    return std::max<int64_t>(0, p.pass_floor_bytes - p.pass_fixed_bytes - waste::kPromptPieceWhileDecoding * p.pass_token_bytes);
}

TEST(Batch, ExtraSequencesComeFromThePromptRoomThenTheExpertCache)
{
    auto one = waste::Model::open(kR3, options(kR3));
    EXPECT_EQ(waste::batchSequences(*one), 1);
    const waste::MemoryPlan r3 = one->memoryPlan();
    ASSERT_GE(promptSpare(r3), 7 * r3.state_bytes) << "r3's floor must hold a full batch's states in its prompt room";
    // The prompt room holds them all: the cache is untouched, at the default as at the floor.
    auto four = waste::openForBatch(kR3, options(kR3), 4);
    ASSERT_EQ(waste::batchSequences(*four), 4);
    EXPECT_EQ(four->info().budgetBytes, one->info().budgetBytes);
    EXPECT_EQ(four->info().expertCacheBytes, one->info().expertCacheBytes);
    EXPECT_EQ(static_cast<waste::session::ModelImpl &>(*four).statePoolBytes(), 3 * r3.state_bytes);
    waste::OpenOptions floor = options(kR3);
    floor.ramBudget = r3.floor_bytes;
    auto atFloor = waste::openForBatch(kR3, floor, 8);
    EXPECT_EQ(waste::batchSequences(*atFloor), 8);
    EXPECT_EQ(atFloor->info().expertCacheBytes, waste::Model::open(kR3, floor)->info().expertCacheBytes);

    // k3s1 at 4096 positions: its prompt room holds one full state and a part of another; the
    // rest of three comes from the cache.
    waste::OpenOptions o = options(kK3);
    o.ctxTokens = 4096;
    const waste::MemoryPlan k3 = waste::planMemory(kK3, 4096);
    o.ramBudget = k3.recommended_bytes + 8 * k3.state_bytes;
    const int64_t spare = promptSpare(k3);
    ASSERT_GT(spare, k3.state_bytes);
    ASSERT_LT(spare, 2 * k3.state_bytes);
    auto k3one = waste::Model::open(kK3, o);
    auto k3four = waste::openForBatch(kK3, o, 4);
    ASSERT_EQ(waste::batchSequences(*k3four), 4);
    EXPECT_EQ(k3one->info().expertCacheBytes - k3four->info().expertCacheBytes, 3 * k3.state_bytes - spare);
    // At the floor the prompt room alone holds one beside the session's.
    o.ramBudget = k3.floor_bytes;
    EXPECT_EQ(waste::batchSequences(*waste::openForBatch(kK3, o, 8)), 2);
    EXPECT_THROW(waste::openForBatch(kR3, options(kR3), 0), waste::Error);
}

// While batch states hold the floor's prompt room, a prompt read beside decoding sequences
// still gets a piece of kPromptPieceWhileDecoding tokens in what is left of it, and a pass gets
// the whole room back once they end.
TEST(Batch, StatesInThePromptRoomLeaveAPieceForPrompts)
{
    auto model = waste::openForBatch(kR3, options(kR3), 8);
    auto &impl = static_cast<waste::session::ModelImpl &>(*model);
    const int whole = impl.unborrowedPassTokens();
    ASSERT_GT(whole, waste::kPromptPieceWhileDecoding);
    {
        waste::Batch batch(*model);
        waste::Batch::Request r;
        const std::vector<int32_t> fox = foxIds(kR3);
        r.prompt.assign(fox.begin(), fox.begin() + 12);
        r.params.maxTokens = 0; // a whole-context state each
        for (int i = 0; i < 7; ++i)
            batch.add(r);
        EXPECT_EQ(impl.statesHeld(), 7 * waste::model::State::bytesFor(impl.manifest().config, 12 + waste::kAnswerRoom));
        EXPECT_GE(impl.unborrowedPassTokens(), waste::kPromptPieceWhileDecoding);
        EXPECT_LT(impl.unborrowedPassTokens(), whole);
        batch.step();
    }
    EXPECT_EQ(impl.statesHeld(), 0);
    EXPECT_EQ(impl.unborrowedPassTokens(), whole);
}

// States in the prompt room make a pass borrow more of the expert cache than the budget's
// plan counted on; the pass still leaves the cache twice its smallest size for its own reads
// (it had taken every slot: "no free slot ... with nothing in flight").
TEST(Batch, APassBesideStatesLeavesTheCacheRoomForItsReads)
{
    waste::OpenOptions o = options(kK3);
    o.ctxTokens = 4096;
    o.ramBudget = 0; // the default, whose cache a full pass could borrow all of
    auto model = waste::openForBatch(kK3, o, 8);
    waste::Batch batch(*model);
    const std::vector<int32_t> fox = foxIds(kK3);
    int added = 0;
    for (int i = 0; i < 7; ++i) {
        waste::Batch::Request r;
        for (int k = 0; k < 8; ++k)
            r.prompt.insert(r.prompt.end(), fox.begin(), fox.end());
        r.prompt.push_back(fox[size_t(i)]);
        r.params.maxTokens = 4;
        if (!batch.admits(r.prompt.size(), 4, false))
            break;
        batch.add(std::move(r));
        ++added;
    }
    ASSERT_GE(added, 2);
    for (int steps = 0; batch.active() > 0; ++steps) {
        ASSERT_LT(steps, 100);
        for (const waste::Batch::Ended &e : batch.step())
            ASSERT_FALSE(e.failed) << e.message;
    }
}

// At the floor, while tokens are generated and no prompt waits, the expert cache holds the
// floor's prompt room that batch states leave (ModelImpl::roomToCache); every pass gets it back
// first, a prompt read beside decoding sequences included. It changes no logit: the batch at
// the floor gives, bit for bit, what it gives with the cache off (no room, every expert read
// each time it is used).
TEST(Batch, TheFloorsPromptRoomIsTheCachesWhileTokensAreGenerated)
{
    waste::OpenOptions o = options(kK3);
    o.ramBudget = waste::planMemory(kK3, o.ctxTokens).floor_bytes;
    const std::vector<int32_t> fox = foxIds(kK3);
    auto run = [&](bool cache, std::vector<int> *roomWhileReading, std::vector<int> *roomWhileWriting) {
        waste::OpenOptions oo = o;
        oo.expertCache = cache;
        auto model = waste::openForBatch(kK3, oo, 4);
        auto &impl = static_cast<waste::session::ModelImpl &>(*model);
        auto *stream = dynamic_cast<waste::cache::StreamedExpertSource *>(&impl.experts());
        EXPECT_TRUE(stream);
        if (cache) {
            // As many slots as the room holds, but no more than the cache needs to hold every record.
            const waste::format::ModelConfig &c = impl.manifest().config;
            int64_t records = 0;
            for (int L = 0; L < c.layers; ++L)
                records += c.moeLayer(L) ? c.experts : 0;
            EXPECT_GT(stream->roomSlots(), 0);
            EXPECT_EQ(stream->roomSlots(), std::min(impl.memoryPlan().pass_floor_bytes / stream->slotBytes(),
                                                    records - stream->slots()));
            EXPECT_EQ(stream->roomInCache(), 0) << "withheld until tokens are generated";
        }
        waste::Batch batch(*model);
        std::map<waste::Batch::Id, std::vector<float>> logprobs;
        auto request = [&](size_t promptLength, uint64_t seed) {
            waste::Batch::Request r;
            r.prompt.assign(fox.begin(), fox.begin() + std::ptrdiff_t(promptLength));
            r.params.maxTokens = 10;
            r.params.temperature = 0.9f;
            r.params.seed = seed;
            auto id = std::make_shared<waste::Batch::Id>();
            r.onToken = [&, id](const waste::TokenEvent &ev) {
                logprobs[*id].push_back(ev.logprob);
                if (roomWhileWriting)
                    roomWhileWriting->push_back(stream->roomInCache());
                return true;
            };
            r.onPrefill = [&](int, int) {
                if (roomWhileReading)
                    roomWhileReading->push_back(stream->roomInCache());
                return true;
            };
            *id = batch.add(std::move(r));
        };
        request(9, 1);
        request(12, 2);
        for (int steps = 0; batch.active() > 0; ++steps) {
            EXPECT_LT(steps, 100);
            if (steps == 4)
                request(fox.size(), 3); // a prompt read beside the two decoding
            for (const waste::Batch::Ended &e : batch.step())
                EXPECT_FALSE(e.failed) << e.message;
        }
        return logprobs;
    };
    std::vector<int> reading, writing;
    const auto withRoom = run(true, &reading, &writing);
    ASSERT_FALSE(reading.empty());
    ASSERT_FALSE(writing.empty());
    EXPECT_EQ(*std::max_element(reading.begin(), reading.end()), 0) << "a pass ran while the cache held its room";
    EXPECT_GT(*std::max_element(writing.begin(), writing.end()), 0) << "the cache never held the prompt room";
    const auto cacheOff = run(false, nullptr, nullptr);
    ASSERT_EQ(withRoom.size(), 3u);
    for (const auto &[id, lp] : withRoom)
        EXPECT_TRUE(sameBits(lp, cacheOff.at(id))) << "sequence " << id;
}

// A model opened for several sequences has a reader for every record a step of all of them
// can miss in a layer (top-k each, at most 16), so their misses are read together rather
// than queued behind one sequence's worth of readers; one sequence keeps top-k (at least
// 2), and an explicit ioThreads wins.
TEST(Batch, ReadersCoverEveryMissOfAStep)
{
    auto readers = [](waste::Model &m) {
        auto *s = dynamic_cast<waste::cache::StreamedExpertSource *>(&static_cast<waste::session::ModelImpl &>(m).experts());
        return s ? s->readerThreads() : -1;
    };
    for (const std::string &container : {kR3, kK3}) {
        SCOPED_TRACE(container);
        auto one = waste::Model::open(container, options(container));
        const int topK = int(static_cast<waste::session::ModelImpl &>(*one).manifest().config.topK);
        EXPECT_EQ(readers(*one), std::clamp(topK, 2, 16));
        for (int n : {2, 3, 4, 8}) {
            auto batch = waste::openForBatch(container, options(container), n);
            ASSERT_EQ(waste::batchSequences(*batch), n);
            EXPECT_EQ(readers(*batch), std::clamp(n * topK, 2, 16)) << n << " sequences";
        }
        waste::OpenOptions fixed = options(container);
        fixed.ioThreads = 3;
        EXPECT_EQ(readers(*waste::openForBatch(container, fixed, 4)), 3);
    }
}
