// Kimi K3 at full size: the RAM planner's floor at 4K/32K/128K/1M context and the default
// budget on a 64 GB machine, against the reference engine's published figures (GiB).
#include <waste/release_plan.hpp>

#include <gtest/gtest.h>

#include <waste/waste.hpp>

namespace {

const std::string kManifest = std::string(WASTE_FIXTURES_DIR) + "/k3-full-manifest";
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

} // namespace

TEST(K3FullPlan, FloorMatchesReferenceAtEveryContext)
{
    const struct {
        int ctx;
        double floorGiB;
    } cases[] = {{4096, 29.06}, {32768, 30.54}, {131072, 35.64}, {1048576, 83.22}};
    for (const auto &c : cases) {
        const waste::MemoryPlan p = waste::planMemory(kManifest, c.ctx);
        const double floor = p.floor_bytes / kGiB;
        EXPECT_NEAR(floor, c.floorGiB, c.floorGiB * 0.01) << "ctx " << c.ctx;
        std::printf("ctx %7d: floor %.2f GiB (reference %.2f, %+.2f %%)\n", c.ctx, floor, c.floorGiB,
                    100.0 * (floor - c.floorGiB) / c.floorGiB);
    }
}

TEST(K3FullPlan, WorkingSetAndRecommendedMatchReference)
{
    const waste::MemoryPlan p = waste::planMemory(kManifest, 4096);
    // ws = 11.83 MiB x 16 x 93 = 17.19 GiB; recommended = floor + 3 ws = 80.63 GiB.
    EXPECT_NEAR(p.min_expert_cache / kGiB, 0.37, 0.005);
    EXPECT_NEAR((p.recommended_bytes - p.floor_bytes) / 3 / kGiB, 17.19, 0.01);
    EXPECT_NEAR(p.recommended_bytes / kGiB, 80.63, 80.63 * 0.01);
}

TEST(K3FullPlan, DefaultBudgetOnA64GBMachineIsOneWorkingSetAboveTheFloor)
{
    waste::MemoryPlan p = waste::planMemory(kManifest, 4096);
    p.physical_ram_bytes = p.usable_ram_bytes = int64_t(64) << 30;
    p.cap_bytes = p.usable_ram_bytes - p.usable_ram_bytes / 8;
    // That machine's cliff, not this one's (the default stays under it).
    p.other_process_bytes = waste::assumedOtherProcessBytes(p.physical_ram_bytes);
    p.cliff_bytes = waste::pagingCliff(p.physical_ram_bytes, p.usable_ram_bytes, p.other_process_bytes);
    const waste::BudgetChoice c = waste::resolveBudget(p, 0);
    // Reference: 46.25 GB budget, 17.56 GB expert cache (floor + 1 ws; +2 ws exceeds 56 GiB).
    // The reference keeps no state checkpoint; this engine's (0.43 GiB) is inside the same
    // budget, taken from that cache.
    EXPECT_NEAR(c.budget_bytes / kGiB, 46.25, 46.25 * 0.01);
    EXPECT_TRUE(c.checkpoint_kept);
    EXPECT_NEAR((c.expert_cache_bytes + p.checkpoint_bytes) / kGiB, 17.56, 17.56 * 0.01);
    std::printf("64 GB machine: default budget %.2f GiB, expert cache %.2f GiB + checkpoint %.2f GiB\n",
                c.budget_bytes / kGiB, c.expert_cache_bytes / kGiB, p.checkpoint_bytes / kGiB);
}
