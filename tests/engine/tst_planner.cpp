// The RAM planner: the reference's numbers byte for byte, the budget rules, refusal below
// the floor, cgroup limits, sizes, and the cliff/forecast additions.
#include "plan/budget.hpp"
#include "plan/compute_estimate.hpp"
#include "plan/floor.hpp"
#include "plan/plan_inputs.hpp"
#include "plan/read_overlap.hpp"
#include "plan/system_memory.hpp"

#include <waste/calibration.hpp>
#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string readText(const fs::path &p)
{
    std::ifstream f(p);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

json readJson(const std::string &p)
{
    std::ifstream f(p);
    return json::parse(f);
}

void expectMatchesReference(const std::string &container, const std::string &reference)
{
    auto ref = readJson(std::string(WASTE_FIXTURES_DIR) + "/" + reference);
    auto p = waste::planMemory(std::string(WASTE_FIXTURES_DIR) + "/" + container, 4096);
    EXPECT_EQ(p.ctx, ref["ctx"].get<int64_t>());
    EXPECT_EQ(p.trunk_bytes, ref["trunk_bytes"].get<int64_t>());
    EXPECT_EQ(p.state_bytes, ref["state_bytes"].get<int64_t>());
    EXPECT_EQ(p.scratch_bytes, ref["scratch_bytes"].get<int64_t>());
    EXPECT_EQ(p.min_expert_cache, ref["min_expert_cache"].get<int64_t>());
    EXPECT_EQ(p.floor_bytes, ref["floor_bytes"].get<int64_t>());
    EXPECT_EQ(p.recommended_bytes, ref["recommended_bytes"].get<int64_t>());
    EXPECT_EQ(p.vision_bytes, ref.value("vision_bytes", int64_t(0)));
    if (ref.contains("budget_bytes")) {
        // The reference keeps no state checkpoint; this engine keeps one in the expert cache.
        auto c = waste::resolveBudget(p, ref["budget_bytes"].get<int64_t>());
        EXPECT_TRUE(c.checkpoint_kept);
        EXPECT_EQ(c.expert_cache_bytes + p.checkpoint_bytes, ref["expert_cache_bytes"].get<int64_t>());
    }
}

waste::MemoryPlan fakePlan(int64_t floor, int64_t ws, int64_t usable)
{
    waste::MemoryPlan p;
    p.ctx = 4096;
    p.floor_bytes = floor;
    p.recommended_bytes = floor + 3 * ws;
    p.min_expert_cache = 100;
    p.max_record_bytes = 10;
    p.physical_ram_bytes = usable;
    p.usable_ram_bytes = usable;
    p.cap_bytes = usable - usable / 8;
    return p;
}

} // namespace

TEST(Planner, ReproducesTheReferenceKimiLinearPlan)
{
    expectMatchesReference("reference-container/r3.waste", "reference-container/r3.plan.json");
}

TEST(Planner, ReproducesTheReferenceK3PlanWithVision)
{
    expectMatchesReference("k3-container/k3s1.waste", "k3-container/k3s1.plan.json");
}

TEST(Planner, StateGrowsWithContextOnMlaLayersOnly)
{
    const std::string c = std::string(WASTE_FIXTURES_DIR) + "/reference-container/r3.waste";
    auto a = waste::planMemory(c, 4096), b = waste::planMemory(c, 8192);
    // r3: one MLA layer, latent 32 + rope 8, f32
    EXPECT_EQ(b.state_bytes - a.state_bytes, 4096 * 40 * 4);
    EXPECT_THROW(waste::planMemory(c, 0), waste::Error);
}

TEST(Planner, DefaultBudgetTakesWholeWorkingSetsUnderSevenEighths)
{
    const int64_t G = int64_t(1) << 30;
    // floor 29 GiB, ws 17 GiB: on 64 GiB (cap 56) -> floor + 1 ws, on 128 GiB -> + 3 ws
    auto p = fakePlan(29 * G, 17 * G, 64 * G);
    EXPECT_EQ(waste::resolveBudget(p, 0).budget_bytes, 46 * G);
    p = fakePlan(29 * G, 17 * G, 128 * G);
    EXPECT_EQ(waste::resolveBudget(p, 0).budget_bytes, 80 * G);
    p = fakePlan(29 * G, 17 * G, 80 * G); // cap 70: + 2 ws = 63
    EXPECT_EQ(waste::resolveBudget(p, 0).budget_bytes, 63 * G);
    p = fakePlan(29 * G, 17 * G, 32 * G); // nothing fits: the floor, with a warning
    auto c = waste::resolveBudget(p, 0);
    EXPECT_EQ(c.budget_bytes, 29 * G);
    EXPECT_FALSE(c.warnings.empty());
    EXPECT_EQ(c.expert_cache_bytes, 100);
}

TEST(Planner, BudgetBelowTheFloorIsRefusedWithTheFloorInTheMessage)
{
    auto p = fakePlan(1000000, 5000, int64_t(8) << 30);
    try {
        waste::resolveBudget(p, 999999);
        FAIL() << "accepted a budget below the floor";
    } catch (const waste::Error &e) {
        EXPECT_EQ(e.code(), waste::ErrorCode::RamBudget);
        EXPECT_NE(std::string(e.what()).find("1000000"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("floor"), std::string::npos);
    }
    auto c = waste::resolveBudget(p, 1000000); // exactly the floor is fine, used as given
    EXPECT_EQ(c.budget_bytes, 1000000);
    EXPECT_EQ(c.cache_slots, 10);
}

// The state checkpoint comes out of the expert cache at every budget, the default included,
// where the cache stays at least min_expert_cache after it; the forecast and the every-expert
// budget price the same cache (one rule: waste::expertCacheAt).
TEST(Planner, TheCheckpointComesOutOfTheExpertCacheAtEveryBudget)
{
    auto p = fakePlan(1000000, 5000, int64_t(8) << 30); // min cache 100, slots of 10
    p.checkpoint_bytes = 30;
    p.expert_bytes_total = 1000;
    p.moe_layers = 2;
    p.top_k = 2;
    auto floor = waste::resolveBudget(p, p.floor_bytes); // no room: the cache stays whole
    EXPECT_FALSE(floor.checkpoint_kept);
    EXPECT_EQ(floor.expert_cache_bytes, 100);
    auto under = waste::resolveBudget(p, p.floor_bytes + 29); // 129 - 30 < 100
    EXPECT_FALSE(under.checkpoint_kept);
    EXPECT_EQ(under.expert_cache_bytes, 129);
    auto room = waste::resolveBudget(p, p.floor_bytes + 30);
    EXPECT_TRUE(room.checkpoint_kept);
    EXPECT_EQ(room.expert_cache_bytes, 100);
    EXPECT_EQ(room.cache_slots, 10);
    // The default is the reference's floor + 3 working sets; the checkpoint is inside it.
    auto def = waste::resolveBudget(p, 0);
    EXPECT_EQ(def.budget_bytes, 1000000 + 15000);
    EXPECT_TRUE(def.checkpoint_kept);
    EXPECT_EQ(def.expert_cache_bytes, 15100 - 30);
    EXPECT_EQ(def.cache_slots, 1507);
    // Every expert record (100 slots) and one slot of rounding, beside the checkpoint.
    const int64_t every = waste::everyExpertBudget(p);
    EXPECT_EQ(every, 1000000 - 100 + 1000 + 10 + 30);
    EXPECT_EQ(waste::resolveBudget(p, every).cache_slots, 101);
    const std::vector<int64_t> budgets = {p.floor_bytes, p.floor_bytes + 29, p.floor_bytes + 30, def.budget_bytes, every};
    const waste::Forecast f = waste::forecastBudgets(p, budgets, 2.0, 0);
    ASSERT_EQ(f.budgets.size(), budgets.size());
    for (size_t i = 0; i < budgets.size(); ++i)
        EXPECT_EQ(f.budgets[i].cache_slots, waste::resolveBudget(p, budgets[i]).cache_slots) << budgets[i];
}

TEST(Planner, BudgetPastTheCliffOrCapWarnsWithNumbers)
{
    const int64_t G = int64_t(1) << 30;
    auto p = fakePlan(2 * G, G, 64 * G);
    p.other_process_bytes = 10 * G;
    p.cliff_bytes = waste::plan::pagingCliff(64 * G, 64 * G, 10 * G);
    // 64 - 10 - 4 - 0.5
    EXPECT_EQ(p.cliff_bytes, 64 * G - 10 * G - 4 * G - (G / 2));
    EXPECT_TRUE(waste::resolveBudget(p, 46 * G).warnings.empty());
    auto c = waste::resolveBudget(p, 52 * G);
    ASSERT_EQ(c.warnings.size(), 1u);
    EXPECT_NE(c.warnings[0].find("cliff"), std::string::npos);
    EXPECT_NE(c.warnings[0].find("GB"), std::string::npos);
    EXPECT_EQ(waste::resolveBudget(p, 60 * G).warnings.size(), 2u); // past the cap too
    // a cgroup limit is a wall
    EXPECT_EQ(waste::plan::pagingCliff(64 * G, 8 * G, 0), 8 * G - (G / 2));
}

TEST(Planner, MachineFiguresAreSane)
{
    auto p = waste::planMemory(std::string(WASTE_FIXTURES_DIR) + "/reference-container/r3.waste");
    EXPECT_GT(p.physical_ram_bytes, 0);
    EXPECT_LE(p.usable_ram_bytes, p.physical_ram_bytes);
    EXPECT_GE(p.other_process_bytes, 0);
    EXPECT_LT(p.other_process_bytes, p.physical_ram_bytes);
    EXPECT_GT(p.cliff_bytes, 0);
    EXPECT_LT(p.cliff_bytes, p.physical_ram_bytes);
    EXPECT_EQ(p.cap_bytes, p.usable_ram_bytes - p.usable_ram_bytes / 8);
}

TEST(Planner, CgroupLimitsAreTheSmallestFiniteAncestor)
{
    fs::path root = fs::path(WASTE_TEST_OUTPUT_DIR) / "fake-cgroup";
    fs::remove_all(root);
    fs::create_directories(root / "user.slice" / "app");
    auto put = [](const fs::path &p, const std::string &v) { std::ofstream(p) << v << "\n"; };
    put(root / "user.slice" / "memory.max", "6442450944");
    put(root / "user.slice" / "app" / "memory.max", "max");
    put(root / "user.slice" / "app" / "memory.high", "8589934592");
    const std::string mountinfo = "30 25 0:26 / " + root.string() + " rw,nosuid - cgroup2 cgroup2 rw\n";
    EXPECT_EQ(waste::plan::cgroupMemoryLimit("0::/user.slice/app\n", mountinfo), 6442450944);
    put(root / "user.slice" / "memory.max", "max");
    EXPECT_EQ(waste::plan::cgroupMemoryLimit("0::/user.slice/app\n", mountinfo), 8589934592);
    put(root / "user.slice" / "app" / "memory.high", "max");
    EXPECT_EQ(waste::plan::cgroupMemoryLimit("0::/user.slice/app\n", mountinfo), -1);

    // cgroup v1: memory controller hierarchy, unlimited written as ~2^63
    fs::path v1 = fs::path(WASTE_TEST_OUTPUT_DIR) / "fake-cgroup-v1";
    fs::remove_all(v1);
    fs::create_directories(v1 / "docker" / "abc");
    put(v1 / "memory.limit_in_bytes", "9223372036854771712");
    put(v1 / "docker" / "abc" / "memory.limit_in_bytes", "2147483648");
    const std::string mi1 = "40 25 0:33 / " + v1.string() + " rw - cgroup cgroup rw,memory\n";
    EXPECT_EQ(waste::plan::cgroupMemoryLimit("4:memory:/docker/abc\n", mi1), 2147483648);
    EXPECT_EQ(waste::plan::cgroupMemoryLimit("4:cpu:/docker/abc\n", mi1), -1);
}

TEST(Planner, ParseSize)
{
    EXPECT_EQ(waste::parseSize("8G"), int64_t(8) << 30);
    EXPECT_EQ(waste::parseSize("512M"), int64_t(512) << 20);
    EXPECT_EQ(waste::parseSize("1024K"), int64_t(1) << 20);
    EXPECT_EQ(waste::parseSize("123"), 123);
    EXPECT_EQ(waste::parseSize("1.5G"), int64_t(3) << 29);
    EXPECT_EQ(waste::parseSize("2GiB"), int64_t(2) << 30);
    EXPECT_EQ(waste::parseSize("1g"), int64_t(1) << 30);
    for (const char *junk : {"", "G", "12Q", "1..2G", "-5G", "1.5"})
        EXPECT_THROW(waste::parseSize(junk), waste::Error) << junk;
}

// A container of generated weights (waste mktiny) says so in its config; its router is
// random, so the forecast prices uniform routing: each budget hits its share of the records,
// not the trained reference curve. And however reads overlap compute, every record the cache
// lacks is read once a token through one disk: a token never takes less than their bytes.
TEST(Planner, GeneratedWeightsRouteUniformlyAndReadsAreBoundByTheDisk)
{
    const fs::path dir = fs::path(WASTE_TEST_OUTPUT_DIR) / "planner-generated" / "model.waste";
    fs::remove_all(dir.parent_path());
    waste::TinyModelOptions o;
    o.seed = 5;
    waste::makeTinyContainer(dir.string(), o);
    std::ifstream mf(dir / "manifest.json");
    const nlohmann::json manifest = nlohmann::json::parse(mf);
    EXPECT_EQ(manifest["config"].value("waste_generated_weights", false), true);
    EXPECT_TRUE(waste::plan::readPlanInputs(dir.string()).generatedWeights);

    waste::MemoryPlan p = waste::planMemory(dir.string());
    EXPECT_TRUE(p.generated_weights);
    // Without the prompt room the floor's cache holds two layers' records, not every record
    // as this tiny model's room would.
    p.pass_floor_bytes = 0;
    const int64_t records = p.expert_bytes_total / p.max_record_bytes;
    waste::ForecastInputs in;
    in.diskGBps = 2.0;
    in.readLatencySeconds = 1e-4;
    in.computeSeconds = in.computeOverlapSeconds = 1e-6; // reads far longer than compute
    const waste::Forecast f = waste::forecastBudgets(p, {p.floor_bytes, waste::everyExpertBudget(p)}, in);
    EXPECT_NE(f.hit_model.find("uniform"), std::string::npos) << f.hit_model;
    for (const waste::BudgetForecast &b : f.budgets) {
        EXPECT_DOUBLE_EQ(b.hit_rate, std::min(1.0, double(b.cache_slots + b.room_slots) / double(records))) << b.budget_bytes;
        const double bytes = double(p.moe_layers) * double(p.top_k) * (1.0 - b.hit_rate) * double(p.max_record_bytes);
        EXPECT_LE(b.tok_per_s, 1.0 / (bytes / 2e9) * (1 + 1e-9)) << b.budget_bytes;
    }
    EXPECT_LT(f.budgets[0].hit_rate, 1.0);
    EXPECT_EQ(f.budgets[1].hit_rate, 1.0);
}

TEST(Planner, ForecastUsesTheModelOrARecordedReplay)
{
    const std::string src = std::string(WASTE_FIXTURES_DIR) + "/reference-container/r3.waste";
    auto p = waste::planMemory(src);
    std::vector<int64_t> budgets = {p.floor_bytes, p.recommended_bytes, p.recommended_bytes * 2};
    auto f = waste::forecastBudgets(p, budgets, 2.0, 0);
    ASSERT_EQ(f.budgets.size(), 3u);
    EXPECT_NE(f.hit_model.find("reference"), std::string::npos);
    EXPECT_LE(f.budgets[0].hit_rate, f.budgets[1].hit_rate);
    EXPECT_EQ(f.budgets[2].hit_rate, 1.0) << "every record fits";
    // While tokens are generated the cache also holds the floor's prompt room: as many slots
    // as it holds, no more than the cache lacks to hold every record (here that is all of them).
    const int64_t records = p.expert_bytes_total / p.max_record_bytes;
    const int64_t slot = (p.max_record_bytes + 4095) / 4096 * 4096;
    for (const waste::BudgetForecast &b : f.budgets)
        EXPECT_EQ(b.room_slots, std::clamp<int64_t>(records - b.cache_slots, 0, p.pass_floor_bytes / slot)) << b.budget_bytes;
    EXPECT_GT(f.budgets[0].room_slots, 0);
    // The hit rate counts it: r3's floor holds every record then.
    EXPECT_EQ(f.budgets[0].cache_slots + f.budgets[0].room_slots, records);
    EXPECT_EQ(f.budgets[0].hit_rate, 1.0);

    // With recorded routing the forecast replays it through the real policy.
    fs::path copy = fs::path(WASTE_TEST_OUTPUT_DIR) / "planner-r3";
    fs::remove_all(copy);
    fs::copy(src, copy, fs::copy_options::recursive);
    {
        std::ofstream r(copy / "usage.routing.jsonl");
        for (int t = 0; t < 20; ++t)
            r << "{\"tok\":" << t << ",\"layers\":[[0,1],[2,3],[4,5]]}\n";
    }
    auto q = waste::planMemory(copy.string());
    auto g = waste::forecastBudgets(q, {q.floor_bytes, q.recommended_bytes}, 2.0, 0.01);
    EXPECT_NE(g.hit_model.find("replay"), std::string::npos);
    // floor: 4 slots for 6 distinct records cycling; recommended: all 6 fit -> 114 of 120 hit
    EXPECT_NEAR(g.budgets[1].hit_rate, 114.0 / 120.0, 1e-9);
    EXPECT_NEAR(g.budgets[1].tok_per_s, 100.0, 1e-6) << "compute-bound at 10 ms/token";
    // a measured disk speed when none is given
    auto m = waste::forecastBudgets(q, {q.floor_bytes}, 0, 0);
    EXPECT_GT(m.disk_gbps, 0);
}

// Without recorded routing: the reference curve by the cache's share of the expert bytes,
// scaled down when the cache holds less than one token's working set.
TEST(Planner, ReferenceCurveNeedsAWorkingSet)
{
    waste::MemoryPlan p;
    p.max_record_bytes = 1000;
    p.top_k = 2;
    p.moe_layers = 4; // one token's working set: 8 records
    p.expert_bytes_total = 32 * 1000;
    p.floor_bytes = 1000000;
    p.min_expert_cache = 4000;
    // 4 slots: half a working set, an eighth of the experts; the curve gives 0.619 at
    // 0.121 and 0.848 at 0.242 of the experts.
    const double curveAtEighth = 0.619 + (0.848 - 0.619) * (0.125 - 0.121) / (0.242 - 0.121);
    // 24 slots: three working sets, three quarters of the experts (0.939 at 0.484, 0.942 at 0.968)
    const double curveAtThreeQuarters = 0.939 + (0.942 - 0.939) * (0.75 - 0.484) / (0.968 - 0.484);
    auto f = waste::forecastBudgets(p, {p.floor_bytes, p.floor_bytes + 20000}, 2.0, 0);
    ASSERT_EQ(f.budgets.size(), 2u);
    EXPECT_EQ(f.budgets[0].cache_slots, 4);
    EXPECT_NEAR(f.budgets[0].hit_rate, 0.5 * curveAtEighth, 1e-9);
    EXPECT_EQ(f.budgets[1].cache_slots, 24);
    EXPECT_NEAR(f.budgets[1].hit_rate, curveAtThreeQuarters, 1e-9);

    // Kimi-Linear's own shape (the curve's): one working set is 3.125 % of the experts, and
    // a cache of exactly that reads the curve unscaled (0.132 at 0.030, 0.403 at 0.060).
    p.moe_layers = 26;
    p.top_k = 8;
    p.expert_bytes_total = int64_t(26) * 256 * 1000;
    p.min_expert_cache = 208 * 1000;
    auto k = waste::forecastBudgets(p, {p.floor_bytes}, 2.0, 0);
    EXPECT_NEAR(k.budgets[0].hit_rate, 0.132 + (0.403 - 0.132) * (0.03125 - 0.030) / (0.060 - 0.030), 1e-9);
}

// A layer's misses against the compute that runs after they are issued. Top-2, a read
// alone 0.10 ms, further reads 0.08 ms apart, 0.02 ms of shared expert and tables, 0.05 ms
// per routed expert (so 0.12 ms of compute the reads can hide behind, at most).
namespace {
// The forecast tests' model: 4 MoE layers of top-2, 32 records of 80 KB, a 1 MB floor.
waste::MemoryPlan fourLayersOfTopTwo()
{
    waste::MemoryPlan p;
    p.max_record_bytes = 80000;
    p.top_k = 2;
    p.moe_layers = 4;
    p.expert_bytes_total = 32 * 80000;
    p.floor_bytes = 1000000;
    p.min_expert_cache = 4 * 80000;
    return p;
}
} // namespace

TEST(Planner, ReadsHideOnlyBehindTheLayersOwnExpertWork)
{
    waste::plan::LayerReads r;
    r.topK = 2;
    r.latency = 0.10e-3;
    r.recordSeconds = 0.08e-3;
    r.hookSeconds = 0.02e-3;
    r.expertSeconds = 0.05e-3;
    r.layerSeconds = 0.30e-3;
    EXPECT_DOUBLE_EQ(waste::plan::landing(r, 1), 0.10e-3);
    EXPECT_DOUBLE_EQ(waste::plan::landing(r, 2), 0.18e-3);
    EXPECT_NEAR(waste::plan::layerStall(r, 0, 0), 0, 1e-15);
    // One miss: the hook and the hit (0.07 ms) run, then it lands at 0.10 and is computed
    // to 0.15, against 0.12 without waiting: 0.03 ms.
    EXPECT_NEAR(waste::plan::layerStall(r, 1, 0), 0.03e-3, 1e-12);
    // Two: the hook to 0.02, wait to 0.10, the first to 0.15, wait for the second to 0.18,
    // it to 0.23: 0.11 ms.
    EXPECT_NEAR(waste::plan::layerStall(r, 2, 0), 0.11e-3, 1e-12);
    // Read a layer early (the lookahead), they landed within the previous layer's 0.30 ms.
    EXPECT_NEAR(waste::plan::layerStall(r, 0, 2), 0, 1e-15);
    EXPECT_NEAR(waste::plan::layerStall(r, 1, 1), 0.03e-3, 1e-12);
    // Hit rate 0.5: one miss half the time, two a quarter of it.
    r.hitRate = 0.5;
    EXPECT_NEAR(waste::plan::expectedLayerStall(r), 0.5 * 0.03e-3 + 0.25 * 0.11e-3, 1e-12);
    // The lookahead covering every miss hides them all in the previous layer.
    r.lookaheadShare = 1;
    EXPECT_NEAR(waste::plan::expectedLayerStall(r), 0, 1e-15);
    // ...unless that layer is shorter than the reads: 0.15 ms leaves 0.03 of two reads.
    r.layerSeconds = 0.15e-3;
    EXPECT_NEAR(waste::plan::expectedLayerStall(r), 0.25 * 0.03e-3, 1e-12);

    // The forecast sums it over the MoE layers, from the compute estimate's parts: 4 layers
    // of the shape above (hook 4 x 0.02, routed 4 x 2 x 0.05, 1.2 ms in all), records of
    // 80 KB at 1 GB/s. At the floor (two layers' records) the lookahead has no slot.
    const waste::MemoryPlan p = fourLayersOfTopTwo();
    waste::ForecastInputs in;
    in.diskGBps = 1;
    in.readLatencySeconds = 0.10e-3;
    in.computeSeconds = 1.2e-3;
    in.routedExpertSeconds = 0.4e-3;
    in.computeOverlapSeconds = 0.48e-3;
    const waste::Forecast f = waste::forecastBudgets(p, {p.floor_bytes}, in);
    ASSERT_EQ(f.budgets.size(), 1u);
    const double h = f.budgets[0].hit_rate;
    ASSERT_GT(h, 0);
    ASSERT_LT(h, 1);
    const double stall = 4 * (2 * h * (1 - h) * 0.03e-3 + (1 - h) * (1 - h) * 0.11e-3);
    EXPECT_NEAR(f.budgets[0].unhidden_io_seconds_per_token, stall, 1e-12);
    EXPECT_NEAR(f.budgets[0].tok_per_s, 1 / (1.2e-3 + stall), 1e-6);
    // Without the routed experts' part, the older arithmetic: all overlapping compute set
    // against all of the token's reads, which hid most of them.
    in.routedExpertSeconds = -1;
    const waste::Forecast old = waste::forecastBudgets(p, {p.floor_bytes}, in);
    EXPECT_NEAR(old.budgets[0].unhidden_io_seconds_per_token,
                std::max(0.0, old.budgets[0].io_seconds_per_token - 0.48e-3), 1e-15);
    EXPECT_LT(old.budgets[0].unhidden_io_seconds_per_token, stall / 2);
}

// Each predicted miss also costs its read's CPU time (ExpertReadSpeed::cpu_seconds_per_read),
// added to the token's time: with 4 layers of top-2 at hit rate h, 8 (1 - h) reads a token.
// Not counted where nobody measured it; a budget holding every expert reads nothing.
TEST(Planner, EachMissCostsItsReadsCpuTime)
{
    const waste::MemoryPlan p = fourLayersOfTopTwo();
    waste::ForecastInputs in;
    in.diskGBps = 1;
    in.readLatencySeconds = 0.10e-3;
    in.computeSeconds = in.computeOverlapSeconds = 1.2e-3;
    const int64_t every = p.floor_bytes + 64 * 80000;
    const waste::Forecast without = waste::forecastBudgets(p, {p.floor_bytes, every}, in);
    EXPECT_EQ(without.read_cpu_seconds, 0);
    EXPECT_EQ(without.budgets[0].read_cpu_seconds_per_token, 0);
    in.readCpuSeconds = 0.05e-3;
    const waste::Forecast with = waste::forecastBudgets(p, {p.floor_bytes, every}, in);
    EXPECT_DOUBLE_EQ(with.read_cpu_seconds, 0.05e-3);
    const waste::BudgetForecast &floor = with.budgets[0];
    ASSERT_LT(floor.hit_rate, 1);
    EXPECT_NEAR(floor.read_cpu_seconds_per_token, 8 * (1 - floor.hit_rate) * 0.05e-3, 1e-15);
    EXPECT_NEAR(1 / floor.tok_per_s,
                1 / without.budgets[0].tok_per_s + floor.read_cpu_seconds_per_token, 1e-12);
    ASSERT_DOUBLE_EQ(with.budgets[1].hit_rate, 1);
    EXPECT_EQ(with.budgets[1].read_cpu_seconds_per_token, 0);
    EXPECT_DOUBLE_EQ(with.budgets[1].tok_per_s, without.budgets[1].tok_per_s);
}

// A token's reads stream at the speed measured beside a decode (ForecastInputs::
// decodeDiskGBps), slower than the disk alone: the floor's reads take longer, the open's
// load of every expert (no decode running) keeps the disk's own speed, and setReads takes a
// measurement's figures, the compute a read costs before its bare CPU time.
TEST(Planner, TokensReadAtTheSpeedBesideADecode)
{
    const waste::MemoryPlan p = fourLayersOfTopTwo();
    waste::ForecastInputs in;
    waste::ExpertReadSpeed r;
    r.gbps = 1;
    r.decode_gbps = 0.5;
    r.latency_seconds = 0.10e-3;
    r.queue_depth = 4;
    r.cpu_seconds_per_read = 0.01e-3;
    r.compute_seconds_per_read = 0.03e-3;
    in.setReads(r);
    EXPECT_DOUBLE_EQ(in.diskGBps, 1);
    EXPECT_DOUBLE_EQ(in.decodeDiskGBps, 0.5);
    EXPECT_DOUBLE_EQ(in.readCpuSeconds, 0.03e-3);
    EXPECT_EQ(in.queueDepth, 4);
    r.compute_seconds_per_read = 0; // not measured beside a decode: the bare CPU time
    waste::ForecastInputs bare;
    bare.setReads(r);
    EXPECT_DOUBLE_EQ(bare.readCpuSeconds, 0.01e-3);

    in.computeSeconds = in.computeOverlapSeconds = 0.2e-3;
    const int64_t every = p.floor_bytes + 64 * 80000;
    const waste::Forecast slow = waste::forecastBudgets(p, {p.floor_bytes, every}, in);
    in.decodeDiskGBps = 0; // the disk's own speed for the token's reads too
    const waste::Forecast alone = waste::forecastBudgets(p, {p.floor_bytes, every}, in);
    EXPECT_DOUBLE_EQ(slow.decode_disk_gbps, 0.5);
    EXPECT_DOUBLE_EQ(alone.decode_disk_gbps, 1);
    const waste::BudgetForecast &a = alone.budgets[0], &s = slow.budgets[0];
    ASSERT_LT(s.hit_rate, 1);
    EXPECT_GT(s.io_seconds_per_token, a.io_seconds_per_token);
    EXPECT_LT(s.tok_per_s, a.tok_per_s);
    // At this compute the reads bound the token: every miss's bytes at the decode's speed.
    const double misses = 8 * (1 - s.hit_rate);
    EXPECT_LE(s.tok_per_s, 1 / (misses * double(p.max_record_bytes) / 0.5e9) * (1 + 1e-12));
    // A faster decode speed than the disk's own is not believed.
    in.decodeDiskGBps = 2;
    EXPECT_DOUBLE_EQ(waste::forecastBudgets(p, {p.floor_bytes}, in).decode_disk_gbps, 1);
    ASSERT_GT(slow.budgets[1].open_load_seconds, 0);
    EXPECT_DOUBLE_EQ(slow.budgets[1].open_load_seconds, alone.budgets[1].open_load_seconds);
}

// A budget whose cache holds every expert has them all read at open (OpenOptions::
// loadEveryExpert): the forecast says how long, the banks at the disk's speed; below it, and
// without a disk speed, nothing.
TEST(Planner, SaysHowLongTheOpenReadsEveryExpert)
{
    const waste::MemoryPlan p = fourLayersOfTopTwo();
    waste::ForecastInputs in;
    in.diskGBps = 2;
    in.readLatencySeconds = 0.10e-3;
    in.computeSeconds = in.computeOverlapSeconds = 1.2e-3;
    const int64_t every = waste::everyExpertBudget(p);
    const waste::Forecast f = waste::forecastBudgets(p, {p.floor_bytes, every}, in);
    EXPECT_EQ(f.budgets[0].open_load_seconds, 0);
    EXPECT_DOUBLE_EQ(f.budgets[1].open_load_seconds, double(p.expert_bytes_total) / 1e9 / 2);
    in.diskGBps = 0;
    EXPECT_EQ(waste::forecastBudgets(p, {every}, in).budgets[0].open_load_seconds, 0);
}

// A token that touches more than the CPU's caches hold meets each trunk matrix again only
// after the rest of its work has evicted it: its trunk is priced with the calibration's cold
// rows then, and with the warm ones while everything fits. A calibration without cold rows
// (older files) prices them warm rather than not at all.
TEST(Planner, TrunkIsPricedColdOnceATokenOverflowsTheCaches)
{
    auto kernelsOf = [](const waste::plan::PlanInputs &in) {
        std::vector<std::string> k;
        for (const waste::plan::TokenCall &c : in.perToken)
            k.push_back(c.kernel);
        return k;
    };
    const int64_t oneMiB = int64_t(1) << 20;
    // 2 MiB of Q4G trunk, 4 KDA layers of 2 heads of 64 x 64 state, 4 layers of top-2 small records.
    waste::plan::PlanInputs small;
    small.kdaLayers = 4;
    small.kdaHeads = 2;
    small.kdaDim = 64;
    small.moeLayers = 4;
    small.topK = 2;
    small.hidden = 256;
    small.expertBytesTotal = 8 * oneMiB;
    waste::plan::addTrunkWork(small, "model.layers.0.self_attn.q_proj.weight", "Q4G", 2 * oneMiB, {4096, 1024});
    waste::plan::addLayerWork(small, "VQ-expert", 64 << 10);
    EXPECT_EQ(kernelsOf(small), (std::vector<std::string>{"Q4G", "F32", "LUT", "VQ-expert"}));

    // The same with records of 4 MiB: 32 MiB of experts a token, past the caches with the trunk.
    waste::plan::PlanInputs large = small;
    large.perToken.clear();
    large.expertBytesTotal = 1024 * oneMiB;
    waste::plan::addTrunkWork(large, "model.layers.0.self_attn.q_proj.weight", "Q4G", 2 * oneMiB, {4096, 1024});
    waste::plan::addLayerWork(large, "VQ-expert", 4 * oneMiB);
    EXPECT_EQ(kernelsOf(large), (std::vector<std::string>{"Q4G-cold", "F32-cold", "LUT", "VQ-expert-cold"}));

    // Priced: cold rows where the calibration has them, the warm ones where it does not.
    waste::ComputeCalibration c;
    for (const char *k : {"Q4G", "F32", "LUT", "VQ-expert", "VQ-expert-cold"})
        c.timings.push_back({k, 1 << 10, 1e-6});
    const double warmOnly = waste::plan::estimateCompute(large, c).seconds;
    c.timings.push_back({"Q4G-cold", 1 << 10, 3e-6});
    c.timings.push_back({"F32-cold", 1 << 10, 5e-6});
    const double withCold = waste::plan::estimateCompute(large, c).seconds;
    const double q4 = 2.0 * oneMiB / 1024 * 1e-6, f32 = 12.0 * (2 * 64 * 64 * 4) / 1024 * 1e-6;
    EXPECT_NEAR(withCold - warmOnly, 2 * q4 + 4 * f32, 1e-9 * withCold);
    EXPECT_DOUBLE_EQ(waste::plan::estimateCompute(small, c).seconds,
                     [&] {
                         waste::ComputeCalibration warm = c;
                         std::erase_if(warm.timings, [](const waste::KernelTiming &t) {
                             return t.kernel == "Q4G-cold" || t.kernel == "F32-cold";
                         });
                         return waste::plan::estimateCompute(small, warm).seconds;
                     }())
        << "a token within the caches never uses the cold rows";
}

// The decode scale: a generated tiny model decoded and priced by the kernel timings, kept
// between kMinDecodeScale and kMaxDecodeScale, and carried into every estimate and the
// calibration file.
TEST(Planner, DecodeScaleIsMeasuredClampedAndApplied)
{
    waste::ComputeCalibration fast; // kernels "timed" far faster than any decode
    waste::ComputeCalibration slow; // kernels "timed" far slower
    for (const char *k : {"F32", "Q8G", "Q4G", "Q3G", "LUT", "VQ-expert"})
        for (int64_t size : {int64_t(1) << 10, int64_t(1) << 24}) {
            fast.timings.push_back({k, size, 1e-12});
            slow.timings.push_back({k, size, 1.0});
        }
    // A real decode of the tiny model takes well over the fast pricing and well under the slow.
    EXPECT_EQ(waste::measureDecodeScale(fast), waste::kMaxDecodeScale);
    EXPECT_EQ(waste::measureDecodeScale(slow), waste::kMinDecodeScale)
        << "kernels timed slower than a token: the scale corrects them, by half at most";

    const std::string r3 = std::string(WASTE_FIXTURES_DIR) + "/reference-container/r3.waste";
    waste::ComputeCalibration twice = slow;
    twice.decodeScale = 2;
    const waste::ComputeEstimate one = waste::estimateComputePerToken(r3, slow);
    const waste::ComputeEstimate two = waste::estimateComputePerToken(r3, twice);
    ASSERT_GT(one.seconds, 0);
    EXPECT_DOUBLE_EQ(two.seconds, 2 * one.seconds);
    EXPECT_DOUBLE_EQ(two.overlapSeconds, 2 * one.overlapSeconds);

    twice.machine = "test machine";
    EXPECT_EQ(waste::calibrationFromJson(waste::calibrationToJson(twice)).decodeScale, 2.0);
    std::string bad = waste::calibrationToJson(twice);
    bad.replace(bad.find("\"decode_scale\": 2.0"), std::string("\"decode_scale\": 2.0").size(), "\"decode_scale\": 40.0");
    EXPECT_THROW(waste::calibrationFromJson(bad), waste::Error);
    std::string low = waste::calibrationToJson(twice);
    low.replace(low.find("\"decode_scale\": 2.0"), std::string("\"decode_scale\": 2.0").size(), "\"decode_scale\": 0.75");
    EXPECT_EQ(waste::calibrationFromJson(low).decodeScale, 0.75) << "below 1 is a measurement, kept";
    low.replace(low.find("\"decode_scale\": 0.75"), std::string("\"decode_scale\": 0.75").size(), "\"decode_scale\": 0.25");
    EXPECT_THROW(waste::calibrationFromJson(low), waste::Error);
}

// A model smaller than the scale model's is priced on the line through the demo's and the
// scale model's measured tokens (fixed costs weigh more there); at and above the scale
// model's kernel sum, the scale alone. The calibration file keeps the points.
TEST(Planner, SmallModelsArePricedOnTheLineThroughTwoMeasuredModels)
{
    waste::ComputeCalibration c;
    c.machine = "test machine";
    c.timings.push_back({"F32", 1024, 1e-6});
    c.decodeScale = 1.25;
    EXPECT_EQ(c.scaleFor(0.1e-3), 1.25) << "no small model measured: the scale alone";
    c.smallKernelSeconds = 0.2e-3;
    c.smallTokenSeconds = 0.55e-3;
    c.scaleKernelSeconds = 2.4e-3;
    EXPECT_DOUBLE_EQ(c.scaleFor(5e-3), 1.25);
    EXPECT_DOUBLE_EQ(c.scaleFor(2.4e-3), 1.25);
    EXPECT_DOUBLE_EQ(c.scaleFor(0.2e-3), 2.75);
    EXPECT_DOUBLE_EQ(c.scaleFor(0.05e-3), 2.75) << "below the demo: the demo's own factor";
    // Half way in kernel seconds: half way between 0.55 ms and the scale model's 3.0 ms.
    EXPECT_NEAR(c.scaleFor(1.3e-3) * 1.3e-3, 0.55e-3 + 0.5 * (2.4e-3 * 1.25 - 0.55e-3), 1e-12);
    EXPECT_NEAR(c.scaleFor(2.4e-3 - 1e-12), 1.25, 1e-6) << "continuous at the scale model";

    const waste::ComputeCalibration back = waste::calibrationFromJson(waste::calibrationToJson(c));
    EXPECT_EQ(back.smallKernelSeconds, c.smallKernelSeconds);
    EXPECT_EQ(back.smallTokenSeconds, c.smallTokenSeconds);
    EXPECT_EQ(back.scaleKernelSeconds, c.scaleKernelSeconds);
    waste::ComputeCalibration upsideDown = c;
    upsideDown.scaleKernelSeconds = 0.1e-3;
    EXPECT_THROW(waste::calibrationFromJson(waste::calibrationToJson(upsideDown)), waste::Error);

    // An estimate is its kernel sum times that factor, every part alike.
    const std::string r3 = std::string(WASTE_FIXTURES_DIR) + "/reference-container/r3.waste";
    waste::ComputeCalibration flat = c;
    flat.smallKernelSeconds = flat.smallTokenSeconds = flat.scaleKernelSeconds = 0;
    flat.decodeScale = 1;
    const waste::ComputeEstimate sum = waste::estimateComputePerToken(r3, flat);
    const waste::ComputeEstimate priced = waste::estimateComputePerToken(r3, c);
    ASSERT_GT(sum.seconds, 0);
    EXPECT_DOUBLE_EQ(priced.seconds, sum.seconds * c.scaleFor(sum.seconds));
    EXPECT_DOUBLE_EQ(priced.overlapSeconds, sum.overlapSeconds * c.scaleFor(sum.seconds));
}

// When the tiny model cannot be made (here the temporary folder is a file), the scale falls
// back to 1 and says why; the calibration file keeps the reason, and a later load measures
// the decode again instead of keeping the fallback.
TEST(Planner, DecodeScaleFallbackSaysWhy)
{
    waste::ComputeCalibration slow;
    for (const char *k : {"F32", "Q8G", "Q4G", "Q3G", "LUT", "VQ-expert"})
        for (int64_t size : {int64_t(1) << 10, int64_t(1) << 24})
            slow.timings.push_back({k, size, 1e-3});
    const fs::path dir = fs::path(WASTE_TEST_OUTPUT_DIR) / "planner-decode-fallback";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path notADir = dir / "tmp-is-a-file";
    std::ofstream(notADir) << "x";
    const char *old = std::getenv("TMPDIR");
    const std::string saved = old ? old : "";
    setenv("TMPDIR", notADir.c_str(), 1);
    std::string why;
    const double scale = waste::measureDecodeScale(slow, 0, &why);
    if (old)
        setenv("TMPDIR", saved.c_str(), 1);
    else
        unsetenv("TMPDIR");
    EXPECT_EQ(scale, 1.0);
    EXPECT_NE(why.find("temporary folder"), std::string::npos) << why;

    slow.machine = waste::calibrationMachineKey(0);
    slow.decodeScaleError = why;
    const std::string text = waste::calibrationToJson(slow);
    EXPECT_NE(text.find("decode_scale_error"), std::string::npos);
    EXPECT_EQ(waste::calibrationFromJson(text).decodeScaleError, why);
    const fs::path file = dir / "calibration.json";
    std::ofstream(file) << text;
    const waste::ComputeCalibration again = waste::cachedCalibration(file.string());
    EXPECT_TRUE(again.decodeScaleError.empty()) << again.decodeScaleError;
    EXPECT_GT(again.smallKernelSeconds, 0) << "the small models' point is measured with it";
    EXPECT_EQ(again.timings.size(), slow.timings.size()) << "only the decode is measured again";
    EXPECT_TRUE(waste::calibrationFromJson(readText(file)).decodeScaleError.empty()) << "and written back";
}
