// The expert cache: pins, states, accounting, and the policies against Belady on real routing.
#include "cache/belady.hpp"
#include "cache/cache_sim.hpp"
#include "cache/expert_cache.hpp"
#include "cache/horizon_oracle.hpp"
#include "cache/known_odds_replay.hpp"
#include "cache/layer_freq_policy.hpp"
#include "cache/reuse_policy.hpp"
#include "cache/routing_match.hpp"
#include "cache/synthetic_trace.hpp"

#include <waste/waste.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <numeric>
#include <thread>

using namespace waste::cache;

namespace {

RoutingTrace olmoe() { return loadRoutingTrace(std::string(WASTE_FIXTURES_DIR) + "/traces/olmoe_299.jsonl"); }

CacheConfig smallConfig(int slots, PolicyKind p = PolicyKind::LayerFreq)
{
    CacheConfig c;
    c.slots = slots;
    c.recordBytes = 5000;
    c.layers = 4;
    c.experts = 8;
    c.policy = p;
    return c;
}

} // namespace

TEST(ExpertCache, SlotsAreAlignedAndRecordSizedRoundedTo4K)
{
    ExpertCache c(smallConfig(3));
    EXPECT_EQ(c.slotBytes(), 8192);
    auto r = c.acquire(0, 1);
    ASSERT_TRUE(r.mustRead);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(r.data) % 4096, 0u);
    c.filled(r.slot, true, 8192);
    c.release(r.slot);
}

TEST(ExpertCache, DemandHitsMissesAndBytes)
{
    ExpertCache c(smallConfig(4));
    for (int round = 0; round < 2; ++round)
        for (int e = 0; e < 3; ++e) {
            auto r = c.acquire(1, e);
            EXPECT_EQ(r.mustRead, round == 0);
            if (r.mustRead)
                c.filled(r.slot, true, 4096);
            EXPECT_TRUE(c.waitReady(r.slot));
            c.release(r.slot);
        }
    auto s = c.stats();
    EXPECT_EQ(s.demandMisses, 3);
    EXPECT_EQ(s.demandHits, 3);
    EXPECT_EQ(s.bytesRead, 3 * 4096);
    EXPECT_EQ(s.speculativeFills, 0);
}

TEST(ExpertCache, RereadsCountRecordsEvictedThisPassOrTheLast)
{
    ExpertCache c(smallConfig(1, PolicyKind::Lru)); // one slot: every new record evicts the last
    auto use = [&](int layer, int expert) {
        auto r = c.acquire(layer, expert);
        if (r.mustRead)
            c.filled(r.slot, true, 4096);
        c.release(r.slot);
    };
    c.beginToken();
    use(0, 0);
    use(0, 1); // evicts (0,0) in pass 1
    use(0, 0); // read again in the pass it left: a re-read
    EXPECT_EQ(c.stats().rereads, 1);
    c.beginToken();
    use(0, 1); // evicted in pass 1, read in pass 2: the pass after, a re-read
    EXPECT_EQ(c.stats().rereads, 2);
    c.beginToken();
    c.beginToken();
    use(0, 0); // evicted in pass 2, read in pass 4: too long ago to count
    EXPECT_EQ(c.stats().rereads, 2);
    use(0, 2); // never read before
    EXPECT_EQ(c.stats().rereads, 2);
    auto g = c.prefetch(0, 0); // a guess of a record evicted this pass counts too
    ASSERT_TRUE(g.mustRead);
    c.filled(g.slot, true, 4096);
    c.releaseSpeculative();
    const CacheStats s = c.stats();
    EXPECT_EQ(s.rereads, 3);
    EXPECT_EQ(s.evictions, 6);
    EXPECT_EQ(s.demandMisses, 6);
    EXPECT_EQ(s.speculativeFills, 1);
}

TEST(ExpertCache, PinnedSlotsAreNeverEvicted)
{
    for (auto p : {PolicyKind::Reuse, PolicyKind::LayerFreq, PolicyKind::Lru, PolicyKind::SampledLfru}) {
        ExpertCache c(smallConfig(2, p));
        auto a = c.acquire(0, 0);
        c.filled(a.slot, true, 0); // keep a pinned
        auto b = c.acquire(0, 1);
        c.filled(b.slot, true, 0);
        c.release(b.slot);
        // the only victim is b's slot
        auto d = c.acquire(0, 2);
        EXPECT_EQ(d.slot, b.slot) << policyName(p);
        c.filled(d.slot, true, 0);
        EXPECT_TRUE(c.resident(0, 0));
        // both pinned now: a third record has nowhere to go and says so
        EXPECT_THROW(c.acquire(1, 3), waste::Error);
        c.release(a.slot);
        c.release(d.slot);
    }
}

TEST(ExpertCache, ALayersOwnHitsAreNotEvictedByItsMisses)
{
    for (auto p : {PolicyKind::Reuse, PolicyKind::LayerFreq, PolicyKind::Lru, PolicyKind::SampledLfru}) {
        ExpertCache c(smallConfig(2, p));
        for (int e : {0, 1}) { // (1,0) is the older record: LRU alone would evict it first
            c.beginToken();
            const int ids[] = {e};
            c.beginLayer(1, ids);
            auto r = c.acquire(1, e);
            c.filled(r.slot, true, 0);
            c.release(r.slot);
        }
        c.beginToken();
        const int ids[] = {2, 0}; // a miss listed before a hit of the same layer
        c.beginLayer(1, ids);
        auto miss = c.acquire(1, 2);
        ASSERT_TRUE(miss.mustRead);
        c.filled(miss.slot, true, 0);
        c.release(miss.slot);
        EXPECT_TRUE(c.resident(1, 0)) << policyName(p) << ": the layer's own hit was evicted";
        EXPECT_FALSE(c.resident(1, 1)) << policyName(p);
        auto hit = c.acquire(1, 0);
        EXPECT_TRUE(hit.hit) << policyName(p);
        c.release(hit.slot);
    }
}

TEST(ExpertCache, LayerProtectionGivesWayWhenNothingElseIsEvictable)
{
    ExpertCache c(smallConfig(1, PolicyKind::Reuse));
    c.beginToken();
    const int first[] = {0};
    c.beginLayer(0, first);
    auto a = c.acquire(0, 0);
    c.filled(a.slot, true, 0);
    c.release(a.slot);
    const int both[] = {1, 0};
    c.beginLayer(0, both); // (0,0) is protected, and it is the only slot
    auto b = c.acquire(0, 1);
    ASSERT_TRUE(b.mustRead) << "one slot: the protected record must give way";
    c.filled(b.slot, true, 0);
    c.release(b.slot);
    EXPECT_THROW(c.beginLayer(0, std::vector<int>{8}), waste::Error) << "ids outside the shape are refused";
}

TEST(ReusePolicy, LearnsThatRecentAndFrequentExpertsComeBack)
{
    // Layer 0 of 1, 8 experts: expert 0 every pass, expert 1 once at the start, the other
    // two picks rotate. After a while expert 0 must look far likelier than expert 1.
    ReusePolicy p({4, 1, 8});
    for (int pass = 0; pass < 60; ++pass) {
        p.beginToken();
        const int ids[] = {0, 2 + pass % 6, pass == 0 ? 1 : 2 + (pass + 3) % 6};
        p.layerDemand(0, ids);
    }
    EXPECT_GT(p.nextUseChance(0), 0.8);
    EXPECT_LT(p.nextUseChance(1), 0.2);
    EXPECT_GT(p.nextUseChance(0), 4 * p.nextUseChance(1));
}

TEST(ReusePolicy, ASeedAtOpenIsRememberedAsAUseBeforeTheRun)
{
    // A warm start seeds the policy before its first pass (the engine's warmFrom). Experts 0
    // and 1 come every pass, 2 and 4..7 never: the "never used" cell learns a chance near 0.
    // Expert 3, seeded and never picked since, must not be filed with them (it was, when the
    // seed's pass, -1, doubled as the "never used" mark).
    ReusePolicy p({4, 1, 8});
    p.seedUses(3, 12.0);
    for (int pass = 0; pass < 20; ++pass) {
        p.beginToken();
        const int ids[] = {0, 1};
        p.layerDemand(0, ids);
    }
    EXPECT_LT(p.nextUseChance(4), 0.05);
    EXPECT_GT(p.nextUseChance(3), 5 * p.nextUseChance(4)) << "the seeded record reads as never used";
}

TEST(LayerFreqPolicy, ASeedAtOpenSurvivesTheRecordsFirstUse)
{
    // Records 0 and 1 of one layer, each used once in the first pass; record 0 was seeded
    // with 8 uses at open, so it must outrank record 1 and record 1 is the victim.
    LayerFreqPolicy p({2, 1, 8});
    p.seedUses(0, 8.0);
    p.beginToken();
    p.atLayer(0);
    p.filled(0, 0, true);
    p.filled(1, 1, true);
    p.setEvictable(0, true);
    p.setEvictable(1, true);
    EXPECT_EQ(p.victim(), 1) << "the seeded count was dropped at the record's first use";
}

TEST(RoutingMatch, ThePassThatRoutedAlikePredictsTheRestOfThisOneAndItsSuccessorTheNext)
{
    // 4 layers x 16 experts, top-2; each pass routes every layer to the same two experts.
    auto pass = [](int a) { return std::vector<int>{a, a + 1}; };
    RoutingMatch m(4, 16);
    auto run = [&](int a, int layers) {
        for (int l = 0; l < layers; ++l)
            m.observe(l, pass(a));
    };
    for (int a : {0, 2, 4}) { // passes 1, 2, 3: nothing in common
        m.beginPass();
        run(a, 4);
        if (a > 0) {
            EXPECT_FALSE(m.valid(RoutingMatch::Ahead)) << "no earlier pass shares anything with pass of " << a;
        }
    }
    m.beginPass(); // pass 4 starts like pass 2
    run(2, 1);
    ASSERT_TRUE(m.valid(RoutingMatch::Ahead));
    EXPECT_EQ(m.source(RoutingMatch::Ahead), 2);
    EXPECT_TRUE(m.predicts(1 * 16 + 2, RoutingMatch::Ahead)) << "pass 2 picked expert 2 at layer 1";
    EXPECT_FALSE(m.predicts(1 * 16 + 0, RoutingMatch::Ahead));
    EXPECT_EQ(m.source(RoutingMatch::Behind), 3) << "the pass after the match predicts the next pass";
    EXPECT_TRUE(m.predicts(0 * 16 + 4, RoutingMatch::Behind));
    run(2, 4);
    m.beginPass(); // pass 5: until it shows its own routing, the successor of pass 4's match
    EXPECT_EQ(m.source(RoutingMatch::Ahead), 3);
    EXPECT_TRUE(m.predicts(2 * 16 + 5, RoutingMatch::Ahead));
    m.observe(0, pass(0)); // ... it routes like pass 1 instead
    EXPECT_EQ(m.source(RoutingMatch::Ahead), 1);
    EXPECT_TRUE(m.predicts(3 * 16 + 1, RoutingMatch::Ahead));
    EXPECT_FALSE(m.predicts(3 * 16 + 5, RoutingMatch::Ahead)) << "the old source's marks are gone";
}

TEST(ReusePolicy, TrustsTheRoutingMatchWhenPhrasesRepeat)
{
    // A 24-word sentence over a 40-word vocabulary (each word a fixed routing of 8 layers x
    // 32 experts, top-4) said 12 times, one word in six replaced at random: a repeated word
    // routes exactly as before, and the word after it in the sentence usually follows.
    const int L = 8, E = 32, K = 4, words = 40, sentence = 24;
    uint64_t s = 7;
    auto next = [&s] {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    std::vector<std::vector<std::vector<int>>> vocabulary(words);
    for (auto &w : vocabulary)
        for (int l = 0; l < L; ++l) {
            std::vector<int> ids;
            while (int(ids.size()) < K) {
                const int e = int(next() % E);
                if (std::find(ids.begin(), ids.end(), e) == ids.end())
                    ids.push_back(e);
            }
            w.push_back(ids);
        }
    std::vector<int> phrase;
    for (int i = 0; i < sentence; ++i)
        phrase.push_back(int(next() % words));
    RoutingTrace t;
    t.layers = L;
    t.experts = E;
    t.topK = K;
    for (int i = 0; i < 12 * sentence; ++i)
        t.tokens.push_back(vocabulary[size_t(next() % 6 == 0 ? int(next() % words) : phrase[size_t(i % sentence)])]);
    ReusePolicy p({int(t.workingSet()), L, E});
    for (const auto &tok : t.tokens) {
        p.beginToken();
        for (int l = 0; l < L; ++l) {
            p.atLayer(l);
            p.layerDemand(l, tok[size_t(l)]);
        }
    }
    EXPECT_TRUE(p.estimateInUse() & 2) << "the estimate with the routing match predicts best here";
    for (double x : {0.5, 1.0, 2.0}) {
        const int slots = int(x * double(t.workingSet()));
        auto ours = cacheSim(t, slots, PolicyKind::Reuse);
        auto lru = cacheSim(t, slots, PolicyKind::Lru, false);
        auto freq = cacheSim(t, slots, PolicyKind::LayerFreq, false);
        // measured: 11.7 / 21.0 / 38.6 % against LRU 0 / 12.0 / 25.8 %, layerfreq 9.5 / 18.7 / 36.4 %
        // and the optimum 24.8 / 39.2 / 57.7 % (keeping the next word's records means holding
        // them for a whole sentence, which these caches cannot)
        EXPECT_GT(ours.hitRate, lru.hitRate + 0.05) << x << " ws";
        EXPECT_GT(ours.hitRate, freq.hitRate + 0.01) << x << " ws";
        EXPECT_GE(ours.hitRate, 0.45 * ours.optHitRate) << x << " ws";
        EXPECT_EQ(cacheSim(t, slots, PolicyKind::Reuse, false).hits, ours.hits) << "deterministic";
    }
}

TEST(ExpertCache, InFlightSlotIsPinnedAndWaitersWake)
{
    ExpertCache c(smallConfig(1));
    auto r = c.acquire(2, 5);
    ASSERT_TRUE(r.mustRead);
    c.release(r.slot); // caller done, but the read is still in flight
    EXPECT_THROW(c.acquire(2, 6), waste::Error) << "an in-flight slot must not be reused";
    auto again = c.acquire(2, 5); // hit on the in-flight record
    EXPECT_TRUE(again.hit);
    std::thread reader([&] { c.filled(r.slot, true, 4096); });
    EXPECT_TRUE(c.waitReady(again.slot));
    reader.join();
    c.release(again.slot);
}

TEST(ExpertCache, FailedReadIsNeverServed)
{
    ExpertCache c(smallConfig(2));
    auto r = c.acquire(0, 3);
    c.filled(r.slot, false, 0);
    EXPECT_FALSE(c.waitReady(r.slot));
    c.release(r.slot);
    EXPECT_FALSE(c.resident(0, 3));
    auto again = c.acquire(0, 3);
    EXPECT_TRUE(again.mustRead);
    EXPECT_EQ(c.stats().demandMisses, 2);
    c.filled(again.slot, true, 0);
    c.release(again.slot);
}

TEST(ExpertCache, SpeculativeFillsAreNotMissesAndSurviveUntilReleased)
{
    ExpertCache c(smallConfig(2));
    auto p = c.prefetch(3, 7);
    ASSERT_TRUE(p.mustRead);
    c.filled(p.slot, true, 4096);
    EXPECT_EQ(c.prefetch(3, 7).slot, -1) << "already resident: nothing to read";
    // demand traffic cannot evict the pinned prediction
    for (int e = 0; e < 4; ++e) {
        auto r = c.acquire(0, e);
        if (r.mustRead)
            c.filled(r.slot, true, 0);
        c.release(r.slot);
    }
    EXPECT_TRUE(c.resident(3, 7));
    auto d = c.acquire(3, 7);
    EXPECT_TRUE(d.hit);
    c.release(d.slot);
    c.releaseSpeculative();
    auto s = c.stats();
    EXPECT_EQ(s.speculativeFills, 1);
    EXPECT_EQ(s.speculativeUsed, 1);
    EXPECT_EQ(s.demandMisses, 4);
    EXPECT_EQ(s.demandHits, 1);
}

TEST(ExpertCache, ACancelledPredictionFreesItsSlotAndDoesNotCount)
{
    ExpertCache c(smallConfig(2));
    auto p = c.prefetch(3, 7);
    ASSERT_TRUE(p.mustRead);
    EXPECT_EQ(c.stats().speculativeFills, 1);
    c.cancelSpeculative(3, 7); // its read never started
    c.releaseSpeculative();
    EXPECT_EQ(c.stats().speculativeFills, 0);
    EXPECT_FALSE(c.resident(3, 7));
    auto d = c.acquire(3, 7); // now a plain miss
    EXPECT_TRUE(d.mustRead);
    c.filled(d.slot, true, 4096);
    c.release(d.slot);
    c.cancelSpeculative(3, 7); // not speculative (and not in flight): no effect
    EXPECT_TRUE(c.resident(3, 7));
    // both slots usable again: the cancelled one was freed
    auto e = c.acquire(0, 1);
    c.filled(e.slot, true, 0);
    c.release(e.slot);
    EXPECT_TRUE(c.resident(3, 7) && c.resident(0, 1));
}

// The floor's prompt room: slots the cache holds only while no pass needs them. They start
// out withheld; restored, they take records like any slot; withheld again, the last go first,
// their records forgotten (counted as evictions), a read in flight waited for, and a slot a
// caller holds stops it.
TEST(ExpertCache, ThePromptRoomsSlotsComeAndGoFromTheEnd)
{
    CacheConfig config = smallConfig(4);
    config.roomSlots = 2;
    ExpertCache c(config);
    EXPECT_EQ(c.slots(), 4);
    EXPECT_EQ(c.withheld(), 2);
    EXPECT_EQ(c.working(), 2);
    auto fill = [&c](int layer, int expert) {
        auto r = c.acquire(layer, expert);
        if (r.mustRead) {
            EXPECT_EQ(reinterpret_cast<uintptr_t>(r.data) % 4096, 0u);
            std::fill(r.data, r.data + 5000, uint8_t(1 + expert)); // its pages are there to write
            c.filled(r.slot, true, 4096);
        }
        c.release(r.slot);
        return r.slot;
    };
    for (int e = 0; e < 3; ++e)
        EXPECT_LT(fill(0, e), 2) << "a withheld slot took a record";
    EXPECT_EQ(c.stats().evictions, 1);

    EXPECT_EQ(c.restore(5), 2);
    EXPECT_EQ(c.working(), 4);
    const int first = fill(1, 0), second = fill(1, 1); // into the restored slots, both empty
    EXPECT_GE(std::min(first, second), 2);
    const int64_t evicted = c.stats().evictions;
    EXPECT_EQ(c.withhold(1), 1);
    EXPECT_EQ(c.withheld(), 1);
    EXPECT_EQ(c.resident(1, 0), first != 3) << "the last slot goes first";
    EXPECT_EQ(c.resident(1, 1), second != 3);
    EXPECT_EQ(c.stats().evictions, evicted + 1);

    // A slot a caller holds stops it, its read in flight or not; let go, it moves.
    const auto held = c.acquire(1, first == 2 ? 0 : 1);
    ASSERT_EQ(held.slot, 2);
    EXPECT_EQ(c.withhold(1), 0);
    c.release(held.slot);
    EXPECT_EQ(c.withhold(1), 1);
    EXPECT_EQ(c.working(), 2);
    EXPECT_EQ(c.restore(1), 1);
    const auto reading = c.acquire(2, 5);
    ASSERT_EQ(reading.slot, 2);
    ASSERT_TRUE(reading.mustRead);
    EXPECT_EQ(c.withhold(1), 0);
    c.filled(reading.slot, true, 4096);
    c.release(reading.slot);
    EXPECT_EQ(c.withhold(1), 1);

    // A guess still in flight in a room slot is waited for, then taken.
    EXPECT_EQ(c.restore(1), 1);
    auto guess = c.prefetch(3, 7);
    ASSERT_EQ(guess.slot, 2);
    c.releaseSpeculative(); // the read is still in flight
    std::thread reader([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        c.filled(guess.slot, true, 4096);
    });
    EXPECT_EQ(c.withhold(1), 1);
    reader.join();
    EXPECT_FALSE(c.resident(3, 7));
    EXPECT_EQ(c.withheld(), 2);
}

TEST(ExpertCache, APassBorrowsSlotsFromTheEndOfTheBlock)
{
    // Neighbours from the end, so that whole huge pages go back to the system; the policy's
    // victims, here and there, split them for the cache's life.
    CacheConfig config = smallConfig(8);
    config.roomSlots = 2; // withheld, in a block of its own: never lent
    ExpertCache c(config);
    auto fill = [&c](int layer, int expert) {
        auto r = c.acquire(layer, expert);
        if (r.mustRead) {
            std::fill(r.data, r.data + 5000, uint8_t(1 + expert));
            c.filled(r.slot, true, 4096);
        }
        c.release(r.slot);
        return r.slot;
    };
    for (int e = 0; e < 6; ++e)
        ASSERT_EQ(fill(0, e), e) << "an empty cache fills from its first slot";
    const auto held = c.acquire(0, 4); // a caller holds slot 4: passed over
    const int64_t evicted = c.stats().evictions;
    EXPECT_EQ(c.lend(3), 3);
    EXPECT_EQ(c.lent(), 3);
    EXPECT_EQ(c.working(), 3);
    for (int e = 0; e < 6; ++e)
        EXPECT_EQ(c.resident(0, e), e != 5 && e != 3 && e != 2) << "expert " << e;
    EXPECT_EQ(c.stats().evictions, evicted + 3);
    c.release(held.slot);

    // Back empty: new records take them without evicting anything.
    c.returnLent();
    EXPECT_EQ(c.lent(), 0);
    EXPECT_EQ(c.working(), 6);
    for (int e = 0; e < 3; ++e)
        fill(1, e);
    EXPECT_EQ(c.stats().evictions, evicted + 3);

    // A guess still in flight is waited for, then lent; nothing is lent twice.
    auto guess = c.prefetch(2, 7);
    ASSERT_GE(guess.slot, 0);
    c.releaseSpeculative();
    std::thread reader([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        c.filled(guess.slot, true, 4096);
    });
    EXPECT_EQ(c.lend(4), 4);
    EXPECT_EQ(c.lend(10), 2);
    reader.join();
    EXPECT_EQ(c.working(), 0);
    EXPECT_FALSE(c.resident(2, 7));
    c.returnLent();
    EXPECT_EQ(c.working(), 6);
    EXPECT_EQ(c.withheld(), 2);
}

TEST(ExpertCache, RejectsRecordsOutsideItsShape)
{
    ExpertCache c(smallConfig(2));
    EXPECT_THROW(c.acquire(4, 0), waste::Error);
    EXPECT_THROW(c.acquire(0, 8), waste::Error);
    EXPECT_THROW(ExpertCache(smallConfig(0)), waste::Error);
}

TEST(RoutingTrace, ParsesTheFixtureAndRefusesJunk)
{
    auto t = olmoe();
    EXPECT_EQ(t.tokens.size(), 299u);
    EXPECT_EQ(t.layers, 16);
    EXPECT_EQ(t.experts, 64);
    EXPECT_EQ(t.topK, 8);
    EXPECT_EQ(t.workingSet(), 128);
    EXPECT_THROW(parseRoutingTrace("{\"tok\":1}\n", "x"), waste::Error);
    EXPECT_THROW(parseRoutingTrace("{\"layers\":[[1,-2]]}\n", "x"), waste::Error);
    EXPECT_THROW(parseRoutingTrace("", "x"), waste::Error);
}

TEST(Belady, MatchesABruteForceOnASmallTrace)
{
    // Two layers, cyclic pattern larger than the cache: MIN keeps a fixed subset.
    auto t = parseRoutingTrace("{\"layers\":[[0,1],[0]]}\n{\"layers\":[[0,2],[1]]}\n{\"layers\":[[0,1],[0]]}\n", "t");
    // accesses: (0,0)(0,1)(1,0) | (0,0)(0,2)(1,1) | (0,0)(0,1)(1,0)
    EXPECT_EQ(beladyHits(t, 1), 0);
    EXPECT_EQ(beladyHits(t, 2), 2);  // keep (0,0) throughout: 2 hits
    EXPECT_EQ(beladyHits(t, 3), 3);  // (0,0) twice and (0,1); (1,0) is evicted for (0,2)
    EXPECT_EQ(beladyHits(t, 100), 4);
}

TEST(HorizonOracle, KnowingTheNextPassIsWorthWhatBeladyGetsOnACycleAndLruSeesNothing)
{
    // One layer, top-1, three experts in a cycle, two slots: A B C A B C A B C.
    const auto t = parseRoutingTrace("{\"layers\":[[0]]}\n{\"layers\":[[1]]}\n{\"layers\":[[2]]}\n"
                                     "{\"layers\":[[0]]}\n{\"layers\":[[1]]}\n{\"layers\":[[2]]}\n"
                                     "{\"layers\":[[0]]}\n{\"layers\":[[1]]}\n{\"layers\":[[2]]}\n",
                                     "cycle");
    // Belady: at C it keeps A (next in 1 pass) and drops B (2); then A hits, and so on: 3 hits.
    EXPECT_EQ(beladyHits(t, 2), 3);
    // Knowing one pass ahead is enough here: B's next use is out of view, so it goes first.
    EXPECT_EQ(horizonOracleHits(t, 2, 1), 3);
    // Knowing only the current pass, every resident is out of view and the oldest goes: LRU
    // on a cycle one longer than the cache never hits.
    EXPECT_EQ(horizonOracleHits(t, 2, 0), 0);
    EXPECT_EQ(cacheSim(t, 2, PolicyKind::Lru, false).hits, 0);
}

TEST(HorizonOracle, AHorizonPastTheTraceIsBeladyAndNothingBeatsBelady)
{
    const RoutingTrace full = loadRoutingTrace(std::string(WASTE_FIXTURES_DIR) + "/traces/olmoe_299.jsonl");
    const int ws = int(full.workingSet());
    for (int slots : {ws / 2, ws, 3 * ws}) {
        const int64_t opt = beladyHits(full, slots);
        EXPECT_EQ(horizonOracleHits(full, slots, int(full.tokens.size())), opt) << slots << " slots";
        for (int passes : {0, 1, 2, 8}) {
            EXPECT_LE(horizonOracleHits(full, slots, passes), opt) << slots << " slots, " << passes << " passes";
            EXPECT_GT(horizonOracleHits(full, slots, passes), 0) << slots << " slots, " << passes << " passes";
        }
        // At one working set, seeing the next pass is worth more than the policy's guesses about
        // it. (At three the LRU order beyond the horizon costs it more than that: not a bound.)
        if (slots == ws)
            EXPECT_GT(horizonOracleHits(full, slots, 1), cacheSim(full, slots, PolicyKind::Reuse, false).hits)
                << slots << " slots";
    }
}

TEST(Belady, APreloadIsACacheFilledBeforeTheFirstToken)
{
    // Records resident at the start are what a first token touching each of them, in a cache
    // with room for them all, leaves behind: the optimum over the trace from that preload is
    // the optimum over the longer trace, whose first token itself hits nothing.
    const auto t = traceHead(olmoe(), 60);
    const std::vector<std::pair<int, int>> preload = {{0, 3}, {0, 17}, {2, 5}, {7, 40}, {15, 63}, {15, 2}};
    RoutingTrace longer = t;
    std::vector<std::vector<int>> first(size_t(t.layers));
    for (auto [layer, expert] : preload)
        first[size_t(layer)].push_back(expert);
    longer.tokens.insert(longer.tokens.begin(), first);
    for (int slots : {6, 20, 64, 200})
        EXPECT_EQ(beladyHits(t, slots, preload), beladyHits(longer, slots)) << slots << " slots";
    EXPECT_GT(beladyHits(t, 64, preload), beladyHits(t, 64));
}

TEST(CacheSim, AWarmStartLoadsWhatTheLearningRunKeptAndBeladyStartsFromTheSame)
{
    const auto full = olmoe();
    const size_t h = full.tokens.size() / 2;
    const RoutingTrace first = traceHead(full, h), second = traceTail(full, h);
    const int slots = int(full.workingSet());
    const std::vector<UsageEntry> learned = learnedUsage(first, slots, PolicyKind::Reuse);
    ASSERT_EQ(int(learned.size()), slots) << "the learning run ends with a full cache";
    int64_t uses = 0;
    for (const UsageEntry &u : learned) {
        EXPECT_GT(u.hits, 0u);
        uses += u.hits;
        // last_seen: the pass (from 1) of the record's last use, as the trace has it.
        int64_t last = 0;
        for (size_t p = 0; p < first.tokens.size(); ++p) {
            const std::vector<int> &ids = first.tokens[p][size_t(u.layer)];
            if (std::find(ids.begin(), ids.end(), u.expert) != ids.end())
                last = int64_t(p) + 1;
        }
        EXPECT_EQ(int64_t(u.lastSeen), last) << "layer " << u.layer << " expert " << u.expert;
    }
    EXPECT_LE(uses, first.accesses());
    // Its first token: a cold cache hits nothing, a warm one what the record held of it.
    const RoutingTrace one = traceHead(second, 1);
    EXPECT_EQ(cacheSim(one, slots, PolicyKind::Reuse).hits, 0);
    const CacheSimResult warmOne = cacheSim(one, slots, PolicyKind::Reuse, true, &learned);
    EXPECT_GT(warmOne.hits, 0);
    EXPECT_EQ(warmOne.hitRate, warmOne.optHitRate) << "one token: whatever is preloaded is all either can hit";
    // Over the held-out half the optimum from the same preload bounds the warm policy.
    const CacheSimResult warm = cacheSim(second, slots, PolicyKind::Reuse, true, &learned);
    const CacheSimResult cold = cacheSim(second, slots, PolicyKind::Reuse);
    EXPECT_LE(warm.hitRate, warm.optHitRate);
    EXPECT_GE(warm.optHitRate, cold.optHitRate);
    // (The policy itself gains about what the optimum does: 9343 hits warm against 9349 cold
    // here; bench_cache prints the shares for every trace.)
}

TEST(CacheSim, ReuseIsNearTheOptimumOnRealRoutingAndItsHeldOutHalf)
{
    const auto full = olmoe();
    const int ws = int(full.workingSet());
    // The policy's constants were chosen on the first half; the second half is held out.
    for (const RoutingTrace &t : {full, traceTail(full, full.tokens.size() / 2)}) {
        for (double x : {0.5, 1.0, 2.0, 3.0}) {
            auto ours = cacheSim(t, int(x * ws), PolicyKind::Reuse);
            auto old = cacheSim(t, int(x * ws), PolicyKind::LayerFreq, false);
            auto lru = cacheSim(t, int(x * ws), PolicyKind::Lru, false);
            EXPECT_LE(ours.hitRate, ours.optHitRate);
            EXPECT_GE(ours.hitRate, old.hitRate) << x;
            EXPECT_GE(ours.hitRate, lru.hitRate) << x;
            // measured on the full trace: 78 / 79 / 83 / 86 % of MIN; held-out half 76 / 78 / 82 / 87 %
            EXPECT_GE(ours.hitRate, (x < 1.0 ? 0.73 : 0.77) * ours.optHitRate)
                << x << " working sets, " << t.tokens.size() << " tokens";
        }
    }
    EXPECT_EQ(policyName(kDefaultPolicy), "reuse");
    EXPECT_EQ(parsePolicy("default"), PolicyKind::Reuse);
}

// Routing learned by small MoEs trained here (tests/bench/trained_moe_trace.py), which the
// policy was never tuned on: 6 layers of 32 experts, top-4, and 8 layers of 64, top-8. It stays
// above LRU and layerfreq at every size, on the whole trace and on each half from cold, and
// under the optimum. (Measured on the whole traces: 56 / 66 / 73 / 80 % and 59 / 67 / 74 / 81 %
// of the optimum at 0.5 / 1 / 2 / 3 working sets, LRU 0 / 63 / 64 / 72 % and 0 / 63 / 65 / 75 %:
// short of the 75 % goal at one and two working sets.)
TEST(CacheSim, ReuseStaysAboveLruOnRoutingATrainedModelLearned)
{
    struct Learned {
        const char *file;
        int layers, topK;
    };
    for (const Learned &l : {Learned{"bytemoe_600.jsonl", 6, 4}, Learned{"bytemoe_8x64_600.jsonl", 8, 8}}) {
        const RoutingTrace full = loadRoutingTrace(std::string(WASTE_FIXTURES_DIR) + "/traces/" + l.file);
        ASSERT_EQ(full.tokens.size(), 600u);
        ASSERT_EQ(full.layers, l.layers);
        ASSERT_EQ(full.topK, l.topK);
        const int ws = int(full.workingSet());
        const size_t h = full.tokens.size() / 2;
        for (const RoutingTrace &t : {full, traceHead(full, h), traceTail(full, h)}) {
            for (double x : {0.5, 1.0, 2.0, 3.0}) {
                const auto ours = cacheSim(t, int(x * ws), PolicyKind::Reuse);
                const auto old = cacheSim(t, int(x * ws), PolicyKind::LayerFreq, false);
                const auto lru = cacheSim(t, int(x * ws), PolicyKind::Lru, false);
                const std::string where = std::string(l.file) + ", " + std::to_string(x) + " working sets, " +
                                          std::to_string(t.tokens.size()) + " tokens";
                EXPECT_LE(ours.hitRate, ours.optHitRate) << where;
                EXPECT_GT(ours.hitRate, old.hitRate) << where;
                EXPECT_GT(ours.hitRate, lru.hitRate) << where;
                EXPECT_GE(ours.hitRate, (x < 1.0 ? 0.52 : x < 1.5 ? 0.62 : 0.70) * ours.optHitRate) << where;
            }
        }
    }
}

TEST(CacheSim, ReuseHoldsUpOnSyntheticRoutingOfOtherShapes)
{
    // Zipf popularity with drift and varying token locality, shapes unlike the real trace.
    const SyntheticTraceSpec specs[] = {{300, 24, 256, 8, 1.1, 1.0, 0.3, 2}, {300, 32, 8, 2, 0.8, 0.1, 0.3, 3}};
    for (const auto &spec : specs) {
        const auto t = zipfDriftTrace(spec);
        EXPECT_EQ(zipfDriftTrace(spec).tokens, t.tokens) << "deterministic for a seed";
        for (double x : {0.5, 1.0, 2.0, 3.0}) {
            const int slots = int(x * double(t.workingSet()));
            auto ours = cacheSim(t, slots, PolicyKind::Reuse);
            auto old = cacheSim(t, slots, PolicyKind::LayerFreq, false);
            EXPECT_GE(ours.hitRate, old.hitRate) << spec.experts << " experts, " << x << " ws";
            EXPECT_GE(ours.hitRate, (x < 1.0 ? 0.5 : 0.7) * ours.optHitRate) << spec.experts << " experts, " << x << " ws";
        }
    }
}

TEST(SyntheticTrace, ObservingTheGeneratorChangesNothingAndShowsItsRanks)
{
    const SyntheticTraceSpec spec{60, 6, 16, 2, 1.0, 1.0, 0.3, 9};
    const RoutingTrace plain = zipfDriftTrace(spec);
    std::vector<std::vector<std::vector<int>>> seen;
    std::vector<std::vector<int>> firstRanks, lastRanks;
    const RoutingTrace observed = zipfDriftTrace(spec, [&](int token, const auto &layers, const auto &rankToExpert) {
        EXPECT_EQ(token, int(seen.size()));
        seen.push_back(layers);
        for (const auto &perm : rankToExpert) {
            std::vector<int> sorted = perm;
            std::sort(sorted.begin(), sorted.end());
            std::vector<int> all(16);
            std::iota(all.begin(), all.end(), 0);
            EXPECT_EQ(sorted, all) << "every layer ranks each of its experts once";
        }
        (token == 0 ? firstRanks : lastRanks) = rankToExpert;
    });
    EXPECT_EQ(observed.tokens, plain.tokens) << "observing draws nothing from the random stream";
    EXPECT_EQ(seen, plain.tokens) << "the observer sees each token's routing, in order";
    EXPECT_NE(firstRanks, lastRanks) << "one swap per layer per token: the ranks drift";

    const auto chance = zipfPickChance(spec);
    ASSERT_EQ(chance.size(), 16u);
    EXPECT_TRUE(std::is_sorted(chance.rbegin(), chance.rend())) << "rank 0 is the likeliest";
    double harmonic = 0;
    for (int r = 1; r <= 16; ++r)
        harmonic += 1.0 / r;
    EXPECT_NEAR(chance[0], 1.0 - std::pow(1.0 - 1.0 / harmonic, 2), 1e-12) << "popularity 1 / r, two draws";
    for (double c : zipfPickChance({60, 6, 16, 2, 0.0, 1.0, 0.3, 9}))
        EXPECT_NEAR(c, 1.0 - std::pow(15.0 / 16.0, 2), 1e-12) << "no skew: every expert alike";
}

TEST(KnownOddsReplay, StaysUnderTheOptimumAndRanksByTheGeneratorsOdds)
{
    const SyntheticTraceSpec spec{120, 12, 32, 4, 1.2, 1.0, 0.3, 14};
    const RoutingTrace whole = zipfDriftTrace(spec);
    const size_t h = whole.tokens.size() / 2;
    const int ws = int(whole.workingSet());
    std::vector<KnownOddsRun> runs;
    for (size_t from : {size_t(0), h})
        for (int slots : {ws / 2, ws, 2 * ws, 3 * ws})
            runs.push_back({from, h, slots});
    knownOddsReplay(spec, runs);
    auto again = runs;
    knownOddsReplay(spec, again);
    for (size_t i = 0; i < runs.size(); ++i) {
        const RoutingTrace t = runs[i].first ? traceTail(whole, h) : traceHead(whole, h);
        const int slots = runs[i].slots;
        EXPECT_EQ(runs[i].accesses, t.accesses());
        EXPECT_EQ(again[i].hits, runs[i].hits) << "deterministic";
        EXPECT_LE(runs[i].hits, beladyHits(t, slots)) << slots << " slots: nothing online beats the optimum";
        // It knows which experts are popular now: 2 points of hit rate above LRU from two
        // working sets up (measured 4.7-8.7), and below one, where LRU collapses; at one
        // both hold about the last token (measured +1.6 points).
        const auto lru = cacheSim(t, slots, PolicyKind::Lru, false);
        if (slots != ws) {
            EXPECT_GT(runs[i].hits, lru.hits + runs[i].accesses / 50) << slots << " slots";
        }
    }
    // Told nothing (no skew, no reuse, no drift), the odds are alike and the reference is
    // as blind as any online cache: about the share of the records it holds.
    const SyntheticTraceSpec uniform{200, 4, 64, 4, 0.0, 0.0, 0.0, 15};
    std::vector<KnownOddsRun> blind{{0, 200, 64}};
    knownOddsReplay(uniform, blind);
    EXPECT_NEAR(double(blind[0].hits) / double(blind[0].accesses), 64.0 / 256.0, 0.05);

    std::vector<KnownOddsRun> bad{{0, 200, 0}};
    EXPECT_THROW(knownOddsReplay(spec, bad), waste::Error) << "no slots";
    bad = {{100, 21, 8}};
    EXPECT_THROW(knownOddsReplay(spec, bad), waste::Error) << "past the trace's 120 tokens";
}

TEST(CacheSim, LayerFreqIsNearTheOptimumOnRealRouting)
{
    auto t = olmoe();
    const int ws = int(t.workingSet());
    for (double x : {0.5, 1.0, 2.0, 3.0}) {
        auto ours = cacheSim(t, int(x * ws), PolicyKind::LayerFreq);
        auto lru = cacheSim(t, int(x * ws), PolicyKind::Lru, false);
        EXPECT_EQ(ours.accesses, 299 * 128);
        EXPECT_LE(ours.hitRate, ours.optHitRate);
        if (x < 1.0)
            EXPECT_GT(ours.hitRate, lru.hitRate) << x; // (from one working set up LRU, with the layer's hits kept, edges past it)
        // measured: 67 % of MIN at 0.5 and 68 % at 1 ws, 77 % at 2, 84 % at 3
        EXPECT_GE(ours.hitRate, (x < 1.5 ? 0.6 : 0.72) * ours.optHitRate) << x << " working sets";
    }
    EXPECT_EQ(cacheSim(t, 64, PolicyKind::Lru, false).hits, 0) << "LRU collapses below one working set";
}
