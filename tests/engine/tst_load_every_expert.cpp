// OpenOptions::loadEveryExpert: where the budget's cache holds every routed expert, open
// reads them all, so no token waits on a miss; the logits are the bits the same model gives
// filling its cache one miss at a time; below that budget nothing is read at open; the open's
// progress runs through the load and can stop it.
#include <waste/waste.hpp>

#include <gtest/gtest.h>

#include <cstring>

namespace {

const std::string kR3 = std::string(WASTE_FIXTURES_DIR) + "/reference-container/r3.waste";
const std::string kK3 = std::string(WASTE_FIXTURES_DIR) + "/k3-container/k3s1.waste";

struct Outcome {
    std::vector<std::vector<float>> logits;
    waste::Stats stats;
    waste::ModelInfo info;
};

// A 40-token prompt, then 12 steps of one token.
Outcome run(const std::string &container, waste::OpenOptions o)
{
    o.warmFromUsage = false;
    o.directIo = false; // the test tree may sit on a file system without O_DIRECT
    auto m = waste::Model::open(container, o);
    Outcome r;
    r.info = m->info();
    std::vector<int32_t> prompt;
    for (int i = 0; i < 40; ++i)
        prompt.push_back(int32_t((i * 37 + 11) % 300));
    r.logits.push_back(m->eval(prompt));
    for (int i = 0; i < 12; ++i) {
        const int32_t next = int32_t((i * 53 + 7) % 300);
        r.logits.push_back(m->eval(std::span<const int32_t>(&next, 1)));
    }
    r.stats = m->stats();
    return r;
}

bool sameBits(const std::vector<std::vector<float>> &a, const std::vector<std::vector<float>> &b)
{
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].size() != b[i].size() || std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0)
            return false;
    return true;
}

} // namespace

TEST(LoadEveryExpert, WhereTheBudgetHoldsThemNoTokenMissesAndNoBitMoves)
{
    for (const std::string &c : {kR3, kK3}) {
        const waste::MemoryPlan plan = waste::planMemory(c);
        waste::OpenOptions o;
        o.ramBudget = waste::everyExpertBudget(plan);
        const Outcome loaded = run(c, o);
        o.loadEveryExpert = false;
        const Outcome filled = run(c, o);

        const int64_t records = plan.expert_bytes_total / plan.max_record_bytes;
        EXPECT_EQ(loaded.info.expertsLoadedAtOpen, records) << c;
        EXPECT_GE(loaded.info.expertsLoadSeconds, 0.0) << c;
        EXPECT_EQ(loaded.stats.demandMisses, 0) << c << ": a token waited on a read";
        EXPECT_EQ(loaded.stats.bytesRead, 0) << c << ": the load's reads are not a token's";
        EXPECT_GT(loaded.stats.demandHits, 0) << c;

        EXPECT_EQ(filled.info.expertsLoadedAtOpen, 0) << c;
        EXPECT_GT(filled.stats.demandMisses, 0) << c;
        EXPECT_TRUE(sameBits(loaded.logits, filled.logits)) << c << ": loading every expert moved a logit";
    }
}

TEST(LoadEveryExpert, BelowThatBudgetNothingIsReadAtOpen)
{
    const waste::MemoryPlan plan = waste::planMemory(kK3);
    waste::OpenOptions o;
    o.ramBudget = plan.floor_bytes;
    const Outcome r = run(kK3, o);
    EXPECT_EQ(r.info.expertsLoadedAtOpen, 0);
    EXPECT_GT(r.stats.demandMisses, 0);
}

TEST(LoadEveryExpert, TheOpensProgressRunsThroughTheLoadAndStopsIt)
{
    const waste::MemoryPlan plan = waste::planMemory(kK3);
    waste::OpenOptions o;
    o.ramBudget = waste::everyExpertBudget(plan);
    o.directIo = false;
    o.warmFromUsage = false;
    std::vector<double> seen;
    o.progress = [&](double f) {
        seen.push_back(f);
        return true;
    };
    auto m = waste::Model::open(kK3, o);
    ASSERT_GT(m->info().expertsLoadedAtOpen, 0);
    ASSERT_FALSE(seen.empty());
    for (size_t i = 1; i < seen.size(); ++i)
        EXPECT_GE(seen[i], seen[i - 1]) << "the bar went back at step " << i;
    EXPECT_EQ(seen.back(), 1.0);
    m.reset();

    // Told to stop late in the open (in the experts' load where the banks are enough): it
    // stops with the open's own error.
    const size_t trunkSteps = seen.size();
    size_t calls = 0;
    o.progress = [&](double) { return ++calls < trunkSteps - 2; };
    try {
        waste::Model::open(kK3, o);
        FAIL() << "the open went on after its progress said stop";
    } catch (const waste::Error &e) {
        EXPECT_EQ(e.code(), waste::ErrorCode::Cancelled) << e.what();
    }
}
