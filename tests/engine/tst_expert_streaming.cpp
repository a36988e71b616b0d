// The cache, direct reads, read-ahead and router lookahead behind the forward pass:
// logits bit-identical with each on or off and at every budget, refusal below the floor,
// honest direct_io, the --learn record and its warm start, memory within the budget.
#include "cache/usage_record.hpp"
#include "plan/budget.hpp"
#include "plan/system_memory.hpp"

#include <waste/waste.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#ifdef __linux__
#include <sys/vfs.h>
#endif

namespace fs = std::filesystem;

namespace {

const std::string kR3 = std::string(WASTE_FIXTURES_DIR) + "/reference-container/r3.waste";
const std::string kK3 = std::string(WASTE_FIXTURES_DIR) + "/k3-container/k3s1.waste";

// A prompt prefilled in one chunk, then decode steps one token at a time (the lookahead
// path); returns every step's logits.
std::vector<std::vector<float>> runSteps(const std::string &container, waste::OpenOptions o, waste::Stats *stats = nullptr)
{
    o.warmFromUsage = false;
    auto m = waste::Model::open(container, o);
    std::vector<int32_t> prompt;
    for (int i = 0; i < 40; ++i)
        prompt.push_back(int32_t((i * 37 + 11) % 300));
    std::vector<std::vector<float>> out;
    out.push_back(m->eval(prompt));
    for (int i = 0; i < 12; ++i) {
        const int32_t next = int32_t((i * 53 + 7) % 300);
        out.push_back(m->eval(std::span<const int32_t>(&next, 1)));
    }
    if (stats)
        *stats = m->stats();
    return out;
}

void expectBitIdentical(const std::vector<std::vector<float>> &a, const std::vector<std::vector<float>> &b,
                        const std::string &what)
{
    ASSERT_EQ(a.size(), b.size()) << what;
    for (size_t s = 0; s < a.size(); ++s) {
        ASSERT_EQ(a[s].size(), b[s].size()) << what;
        EXPECT_EQ(std::memcmp(a[s].data(), b[s].data(), a[s].size() * sizeof(float)), 0) << what << ", step " << s;
    }
}

waste::OpenOptions plain()
{
    waste::OpenOptions o;
    o.expertCache = false;
    o.readAhead = false;
    o.lookahead = false;
    return o;
}

} // namespace

TEST(ExpertStreaming, LogitsAreBitIdenticalWithEveryFeatureOnOrOff)
{
    for (const std::string &c : {kR3, kK3}) {
        const auto base = runSteps(c, plain());
        for (int mask = 1; mask < 8; ++mask) {
            waste::OpenOptions o = plain();
            o.expertCache = mask & 1;
            o.readAhead = mask & 2;
            o.lookahead = mask & 4;
            expectBitIdentical(base, runSteps(c, o),
                               c + " cache " + std::to_string(o.expertCache) + " read-ahead " +
                                   std::to_string(o.readAhead) + " lookahead " + std::to_string(o.lookahead));
        }
    }
}

TEST(ExpertStreaming, LogitsAreBitIdenticalAtEveryBudget)
{
    for (const std::string &c : {kR3, kK3}) {
        const auto plan = waste::planMemory(c);
        const auto base = runSteps(c, plain());
        const int64_t rec = plan.max_record_bytes;
        for (int64_t budget : {plan.floor_bytes, plan.floor_bytes + rec, plan.floor_bytes + 3 * rec,
                               plan.recommended_bytes, int64_t(1) << 30, int64_t(0)}) {
            waste::OpenOptions o;
            o.ramBudget = budget;
            waste::Stats st;
            expectBitIdentical(base, runSteps(c, o, &st), c + " budget " + std::to_string(budget));
            EXPECT_GT(st.demandHits + st.demandMisses, 0);
        }
    }
}

TEST(ExpertStreaming, QueuedPredictionsTheRouterRejectsAreDroppedWithoutChangingALogit)
{
    // One reader thread and a wide lookahead: predictions queue behind each other, so when
    // the router decides, some have not started: the chosen ones move to the front, the
    // others are dropped and their slots freed. None of it may change a logit, and demand
    // accounting must not notice.
    ::setenv("WASTE_IO_THREADS", "1", 1);
    ::setenv("WASTE_LOOKAHEAD", "8", 1);
    for (const std::string &c : {kR3, kK3}) {
        const auto plan = waste::planMemory(c);
        const auto base = runSteps(c, plain());
        for (int extra : {3, 6}) {
            waste::OpenOptions o;
            o.ramBudget = plan.floor_bytes + extra * plan.max_record_bytes;
            waste::Stats st, nola;
            expectBitIdentical(base, runSteps(c, waste::withEnvironment(o), &st),
                               c + " budget floor + " + std::to_string(extra) + " records");
            o.lookahead = false;
            runSteps(c, waste::withEnvironment(o), &nola);
            EXPECT_EQ(st.demandHits + st.demandMisses, nola.demandHits + nola.demandMisses) << c;
            EXPECT_GT(st.lookaheadPredicted, 0) << c;
            EXPECT_LE(st.lookaheadUseful, st.speculativeFills) << c;
            // (a prediction the router rejected may still be reading when the run ends)
            EXPECT_LE(st.bytesRead, (st.demandMisses + st.speculativeFills) * plan.max_record_bytes) << c;
            EXPECT_GE(st.bytesRead, st.demandMisses * plan.max_record_bytes) << c;
        }
    }
    ::unsetenv("WASTE_IO_THREADS");
    ::unsetenv("WASTE_LOOKAHEAD");
}

// Expert reads go through io_uring where the kernel allows it; WASTE_IO_RING=0 puts them
// on reader threads. The bytes are the same either way, so the logits are too.
TEST(ExpertStreaming, ReadsOnThreadsOrThroughIoUringGiveTheSameLogits)
{
    for (const std::string &c : {kR3, kK3}) {
        const auto plan = waste::planMemory(c);
        waste::OpenOptions o;
        o.ramBudget = plan.floor_bytes + 3 * plan.max_record_bytes;
        waste::Stats ring, threads;
        const auto base = runSteps(c, o, &ring);
        ::setenv("WASTE_IO_RING", "0", 1);
        const waste::OpenOptions off = waste::withEnvironment(o);
        ::unsetenv("WASTE_IO_RING");
        EXPECT_FALSE(off.ioRing);
        expectBitIdentical(base, runSteps(c, off, &threads), c + " on reader threads");
        EXPECT_FALSE(threads.ioRing) << c;
        EXPECT_GT(threads.demandMisses, 0) << c << ": nothing was read";
        EXPECT_EQ(ring.bytesRead > 0, threads.bytesRead > 0) << c;
    }
}

TEST(ExpertStreaming, CacheHitsAndLookaheadAreCountedHonestly)
{
    waste::Stats off, on, nocache;
    waste::OpenOptions o;
    o.lookahead = false;
    runSteps(kR3, o, &off);
    o.lookahead = true;
    runSteps(kR3, o, &on);
    runSteps(kR3, plain(), &nocache);
    // The whole r3 expert set fits the default budget: after the first pass, all hits.
    EXPECT_GT(off.demandHits, 0);
    EXPECT_EQ(nocache.demandHits, 0) << "cache off: every use is a read";
    EXPECT_EQ(nocache.bytesRead, nocache.demandMisses * 12288);
    // Speculative reads never count as misses: demand accesses are the same either way.
    EXPECT_EQ(on.demandHits + on.demandMisses, off.demandHits + off.demandMisses);
    EXPECT_EQ(off.speculativeFills, 0);
    EXPECT_EQ(off.lookaheadPredicted, 0);
    EXPECT_GT(on.lookaheadPredicted, 0) << "decode steps predict the next layer";
    EXPECT_LE(on.lookaheadCorrect, on.lookaheadPredicted);
    EXPECT_LE(on.lookaheadUseful, on.speculativeFills);
}

TEST(ExpertStreaming, LookaheadCanBeSwitchedOffByEnvironment)
{
    ::setenv("WASTE_LOOKAHEAD", "0", 1);
    waste::Stats st;
    runSteps(kR3, waste::withEnvironment(waste::OpenOptions{}), &st);
    ::unsetenv("WASTE_LOOKAHEAD");
    EXPECT_EQ(st.lookaheadPredicted, 0);
    EXPECT_EQ(st.speculativeFills, 0);
}

TEST(ExpertStreaming, TheLibraryReadsNoEnvironmentOnlyItsOptions)
{
    // The environment reaches a model only through withEnvironment (what the CLI and the app
    // call); Model::open alone follows its options.
    ::setenv("WASTE_LOOKAHEAD", "0", 1);
    waste::Stats st;
    runSteps(kR3, waste::OpenOptions{}, &st);
    ::unsetenv("WASTE_LOOKAHEAD");
    EXPECT_GT(st.lookaheadPredicted, 0);
    waste::OpenOptions none;
    none.lookaheadExperts = 0;
    waste::Stats off;
    runSteps(kR3, none, &off);
    EXPECT_EQ(off.lookaheadPredicted, 0);
    EXPECT_EQ(off.speculativeFills, 0);
}

TEST(ExpertStreaming, BudgetBelowTheFloorIsRefusedBeforeAllocation)
{
    const auto plan = waste::planMemory(kK3);
    waste::OpenOptions o;
    o.ramBudget = plan.floor_bytes - 1;
    const int64_t before = waste::plan::ownResidentBytes();
    try {
        waste::Model::open(kK3, o);
        FAIL() << "opened below the floor";
    } catch (const waste::Error &e) {
        EXPECT_EQ(e.code(), waste::ErrorCode::RamBudget);
        EXPECT_NE(std::string(e.what()).find(std::to_string(plan.floor_bytes)), std::string::npos) << e.what();
    }
    // Nothing of the model was loaded: resident memory did not grow by the trunk + cache.
    // (Not under AddressSanitizer: its own allocations around a thrown error grow resident
    // memory by about 3 MB, more than the tiny model's 0.7 MB that this bound is made of.)
#ifndef __SANITIZE_ADDRESS__
    EXPECT_LT(waste::plan::ownResidentBytes() - before, plan.trunk_bytes + plan.min_expert_cache);
#endif
}

TEST(ExpertStreaming, DirectIoIsReportedHonestly)
{
    waste::Stats st;
    runSteps(kR3, waste::OpenOptions{}, &st);
    // The fixtures sit on the build filesystem; whatever it is, a false needs a reason.
    auto m = waste::Model::open(kR3, waste::OpenOptions{});
    EXPECT_EQ(m->stats().directIo, st.directIo);
    if (!st.directIo)
        EXPECT_FALSE(m->info().warnings.empty());
#ifdef __linux__
    // On ext4/xfs/btrfs O_DIRECT bypasses the cache: a false there is a false alarm.
    struct statfs sfs {};
    if (::statfs(kR3.c_str(), &sfs) == 0) {
        const auto type = static_cast<unsigned long>(sfs.f_type);
        if (type == 0xEF53ul || type == 0x58465342ul || type == 0x9123683Eul)
            EXPECT_TRUE(st.directIo) << (m->info().warnings.empty() ? "" : m->info().warnings[0]);
    }
#endif
    waste::OpenOptions keep;
    keep.directIo = false;
    EXPECT_FALSE(waste::Model::open(kR3, keep)->stats().directIo) << "asked to keep the page cache";
#ifdef __linux__
    // On tmpfs every read comes from RAM: direct_io must be false, with a warning.
    if (fs::exists("/dev/shm") && fs::space("/dev/shm").available > (uint64_t(64) << 20)) {
        const fs::path shm = "/dev/shm/waste-tst-streaming-r3";
        fs::remove_all(shm);
        fs::copy(kR3, shm, fs::copy_options::recursive);
        auto t = waste::Model::open(shm.string(), waste::OpenOptions{});
        EXPECT_FALSE(t->stats().directIo);
        ASSERT_FALSE(t->info().warnings.empty());
        EXPECT_NE(t->info().warnings[0].find("page cache"), std::string::npos) << t->info().warnings[0];
        fs::remove_all(shm);
    }
#endif
}

TEST(ExpertStreaming, LearnRecordWarmsTheNextOpen)
{
    const fs::path dir = fs::path(WASTE_TEST_OUTPUT_DIR) / "learn";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string usage = (dir / "usage.waste").string();
    waste::OpenOptions o;
    o.usagePath = usage;
    o.warmFromUsage = false;
    std::vector<int32_t> prompt = {5, 17, 42, 99, 123, 200, 7};
    std::vector<float> cold;
    waste::Stats coldStats;
    {
        auto m = waste::Model::open(kR3, o);
        cold = m->eval(prompt);
        for (int32_t t : {3, 9, 27})
            m->eval(std::span<const int32_t>(&t, 1));
        coldStats = m->stats();
        m->saveUsage();
    }
    auto entries = waste::cache::readUsage(usage);
    EXPECT_FALSE(entries.empty());
    // The header's clock counts the run's forward passes (the prompt's, then three tokens);
    // each used entry's last_seen is the pass of its last use, the latest of them the last pass.
    {
        std::ifstream in(usage, std::ios::binary);
        unsigned char header[16] = {};
        in.read(reinterpret_cast<char *>(header), 16);
        uint64_t clock = 0;
        for (int i = 7; i >= 0; --i)
            clock = clock << 8 | header[8 + i];
        EXPECT_EQ(clock, 4u);
        uint32_t latest = 0;
        for (const auto &u : entries) {
            // A guess the lookahead read and no token then chose is resident unused: 0, 0.
            EXPECT_EQ(u.lastSeen == 0, u.hits == 0) << u.lastSeen << " " << u.hits;
            EXPECT_LE(u.lastSeen, clock);
            latest = std::max(latest, u.lastSeen);
        }
        EXPECT_EQ(latest, clock) << "the last token's records are still cached";
    }
    EXPECT_TRUE(fs::exists(dir / "usage.routing.jsonl"));
    o.warmFromUsage = true;
    auto m = waste::Model::open(kR3, o);
    auto warm = m->eval(prompt);
    EXPECT_EQ(std::memcmp(cold.data(), warm.data(), cold.size() * sizeof(float)), 0);
    for (int32_t t : {3, 9, 27})
        m->eval(std::span<const int32_t>(&t, 1));
    EXPECT_LT(m->stats().demandMisses, coldStats.demandMisses) << "a warm cache misses less";
    EXPECT_EQ(m->stats().demandHits + m->stats().demandMisses, coldStats.demandHits + coldStats.demandMisses);
    // The planner now replays the recorded routing.
    fs::copy(kR3, dir / "r3", fs::copy_options::recursive);
    fs::copy(dir / "usage.routing.jsonl", dir / "r3" / "usage.routing.jsonl");
    auto plan = waste::planMemory((dir / "r3").string());
    auto f = waste::forecastBudgets(plan, {plan.floor_bytes}, 1.0);
    EXPECT_NE(f.hit_model.find("replay"), std::string::npos);
}

TEST(ExpertStreaming, ResidentMemoryStaysWithinBudgetPlusSlack)
{
    // Slack: waste::plan::kRssSlackBytes (512 MiB) for code, stacks and allocator overhead.
    const auto plan = waste::planMemory(kK3);
    const int64_t before = waste::plan::ownResidentBytes();
    waste::OpenOptions o;
    o.ramBudget = plan.recommended_bytes;
    runSteps(kK3, o);
    const int64_t grown = waste::plan::ownResidentBytes() - before;
    EXPECT_LE(grown, plan.recommended_bytes + waste::plan::kRssSlackBytes);
}
