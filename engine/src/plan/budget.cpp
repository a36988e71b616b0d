#include "plan/budget.hpp"
#include "plan/pass_plan.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <cstdio>

namespace waste {

namespace {

std::string gb(int64_t bytes)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GB", double(bytes) / 1e9);
    return buf;
}

} // namespace

namespace plan {

// The paging cliff.
//
// What the reference measured (waste-engine.md §4.3, K3 on a 64 GB machine, 27.3 GB
// trunk): 46 GiB budgets run at 0.63 tok/s, 52 GiB at 0.07-0.09 — an eightfold collapse
// while the reported hit rate rises — and earlier sweeps put the knee anywhere from
// 52 to 58 GiB depending on what else was running. The engine stays inside its budget;
// the machine does not: budget + everything else resident + what the OS keeps for
// itself exceeded physical RAM, so the OS compressed or paged the cache and every
// "hit" became a page fault. The 7/8 rule (56 GiB there) sits above the knee, so it
// cannot be the warning line.
//
// Model: cliff = min(physical - other - reserve, usable) - slack, where
//   other   = RAM other processes hold now (MemTotal - MemAvailable - our own RSS),
//   reserve = max(1 GiB, physical / 16): kernel, file cache the desktop needs to stay
//             responsive, compressor headroom,
//   slack   = what the engine may hold beyond its budget (kRssSlackBytes).
// On that 64 GB machine with ~10 GiB held by the OS and apps this gives
// 64 - 10 - 4 - 0.5 = 49.5 GiB, between the measured good (46) and bad (52) rows.
// Under a cgroup limit the limit itself is the wall (memory.high throttles, memory.max
// reclaims or kills), so the cliff is never above usable RAM minus the slack.
int64_t pagingCliff(int64_t physical, int64_t usable, int64_t other)
{
    const int64_t reserve = std::max<int64_t>(int64_t(1) << 30, physical / 16);
    int64_t cliff = std::min(physical - other - reserve, usable) - kRssSlackBytes;
    return std::max<int64_t>(cliff, 0);
}

} // namespace plan

int64_t pagingCliff(int64_t physicalBytes, int64_t usableBytes, int64_t otherProcessBytes)
{
    return plan::pagingCliff(physicalBytes, usableBytes, otherProcessBytes);
}

// The checkpoint lives in the expert cache at every budget, the engine's default included:
// the default stays the reference's figure (floor + whole working sets), so `waste plan`,
// the Planner and the engine's status line say the same budget, and the cache it gives is
// the reference's less one checkpoint (0.43 GiB of K3's 17.56 GiB at 64 GB). At the floor the
// cache is two layers' records, which a checkpoint would cut below what a token needs: none.
ExpertCacheShare expertCacheAt(const MemoryPlan &plan, int64_t budget)
{
    ExpertCacheShare s;
    s.cache_bytes = budget - plan.floor_bytes + plan.min_expert_cache;
    if (plan.checkpoint_bytes > 0 && s.cache_bytes - plan.checkpoint_bytes >= plan.min_expert_cache) {
        s.cache_bytes -= plan.checkpoint_bytes;
        s.checkpoint_kept = true;
    }
    const plan::PassChoice pass = plan::choosePass({plan.pass_token_bytes, plan.pass_fixed_bytes, plan.pass_piece_token_bytes},
                                                   plan.pass_floor_bytes, s.cache_bytes - 2 * plan.min_expert_cache);
    s.pass_tokens = pass.tokens;
    s.pass_bytes = pass.bytes; // borrowed from the cache while a pass runs, given back after
    // The engine keeps twice the smallest cache's slots from any prompt (ModelImpl::slotsKept).
    s.expand_room_bytes = std::max<int64_t>(0, s.cache_bytes - 2 * plan.min_expert_cache - pass.bytes);
    return s;
}

int64_t everyExpertBudget(const MemoryPlan &plan)
{
    // One slot more than the records absorbs the rounding of cache bytes to slots.
    return plan.floor_bytes - plan.min_expert_cache + plan.expert_bytes_total + plan.max_record_bytes +
           plan.checkpoint_bytes;
}

BudgetChoice resolveBudget(const MemoryPlan &plan, int64_t requested)
{
    BudgetChoice c;
    const int64_t cap = plan.cap_bytes > 0 ? plan.cap_bytes : plan.usable_ram_bytes - plan.usable_ram_bytes / 8;
    if (requested < 0)
        throw Error(ErrorCode::Argument, "budget must not be negative");
    if (requested == 0) {
        // Whole working sets only: a cache between working sets buys little hit rate and
        // the remainder is better left to the OS (reference §4.2). Never past the paging
        // cliff either: a default the OS would page runs several times slower than one
        // working set less (records larger than VQ3R's, MXFP4's on 64 GB, reach it first).
        c.chosen_by_engine = true;
        const int64_t ws = (plan.recommended_bytes - plan.floor_bytes) / 3;
        const int64_t limit = plan.cliff_bytes > 0 ? std::min(cap, plan.cliff_bytes) : cap;
        c.budget_bytes = plan.floor_bytes;
        for (int n = 3; n >= 1; --n)
            if (plan.floor_bytes + n * ws <= limit) {
                c.budget_bytes = plan.floor_bytes + n * ws;
                break;
            }
        // Where a working set would fit the 7/8 line but not under the cliff, the default is
        // the cliff itself: as much cache as the OS leaves alone, not the floor's two layers.
        if (c.budget_bytes == plan.floor_bytes && limit < cap && plan.floor_bytes + ws <= cap && limit > plan.floor_bytes)
            c.budget_bytes = limit;
        if (c.budget_bytes == plan.floor_bytes && plan.floor_bytes > cap)
            c.warnings.push_back("the RAM floor " + gb(plan.floor_bytes) + " is above 7/8 of the " +
                                 gb(plan.usable_ram_bytes) + " this process may use; the OS will page and "
                                 "throughput collapses (use a machine with more RAM or a smaller --ctx)");
    } else {
        if (requested < plan.floor_bytes)
            throw Error(ErrorCode::RamBudget, "budget " + std::to_string(requested) + " bytes (" + gb(requested) +
                                                  ") is below the RAM floor of " + std::to_string(plan.floor_bytes) +
                                                  " bytes (" + gb(plan.floor_bytes) + ") for ctx " +
                                                  std::to_string(plan.ctx) + "; run `waste plan MODEL` to see the floor");
        c.budget_bytes = requested; // a contract: used exactly as given
        if (requested > cap)
            c.warnings.push_back("budget " + gb(requested) + " leaves under 12% of the " + gb(plan.usable_ram_bytes) +
                                 " this process may use; the OS will page out the expert cache and throughput collapses");
    }
    if (plan.cliff_bytes > 0 && c.budget_bytes > plan.cliff_bytes)
        c.warnings.push_back("budget " + gb(c.budget_bytes) + " is past the paging cliff at " + gb(plan.cliff_bytes) +
                             " (physical " + gb(plan.physical_ram_bytes) + " - " + gb(plan.other_process_bytes) +
                             " held by other processes - OS reserve - " + gb(plan::kRssSlackBytes) +
                             " engine slack): expect the cache to be paged and tokens/s to drop several-fold");
    const ExpertCacheShare share = expertCacheAt(plan, c.budget_bytes);
    c.expert_cache_bytes = share.cache_bytes;
    c.checkpoint_kept = share.checkpoint_kept;
    c.pass_tokens = share.pass_tokens;
    c.expand_room_bytes = share.expand_room_bytes;
    c.cache_slots = plan.max_record_bytes > 0 ? c.expert_cache_bytes / plan.max_record_bytes : 0;
    return c;
}

} // namespace waste
