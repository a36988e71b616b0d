// Predicted hit rate and tokens/s for a list of budgets.
#include "cache/cache_sim.hpp"
#include "cache/routing_trace.hpp"
#include "io/disk_probe.hpp"
#include "plan/plan_inputs.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <utility>

namespace waste {

namespace {

// The stated model when no routing has been recorded: the reference's measured cache
// curve (waste-engine.md §4.4/§4.5, Kimi-Linear, 300 decode tokens, page cache
// bypassed): hit rate as a function of the fraction of all expert bytes the cache holds,
// interpolated linearly between the measured points.
double modelHitRate(double fraction)
{
    static constexpr std::pair<double, double> kCurve[] = {
        {0.0, 0.0}, {0.030, 0.132}, {0.060, 0.403}, {0.121, 0.619}, {0.242, 0.848},
        {0.484, 0.939}, {0.968, 0.942}, {1.0, 1.0}};
    fraction = std::clamp(fraction, 0.0, 1.0);
    for (size_t i = 1; i < std::size(kCurve); ++i)
        if (fraction <= kCurve[i].first) {
            auto [x0, y0] = kCurve[i - 1];
            auto [x1, y1] = kCurve[i];
            return y0 + (y1 - y0) * (fraction - x0) / (x1 - x0);
        }
    return 1.0;
}

} // namespace

Forecast forecastBudgets(const MemoryPlan &plan, const std::vector<int64_t> &budgets, double diskGBps,
                         double computeSecondsPerToken)
{
    namespace fs = std::filesystem;
    Forecast out;
    const int64_t rec = plan.max_record_bytes;
    const int64_t readsPerToken = plan.top_k * plan.moe_layers;

    if (diskGBps <= 0) {
        // Measure the engine's own pattern: whole records, random, top-k in flight.
        const plan::PlanInputs in = plan::readPlanInputs(plan.container);
        const int64_t records = std::clamp<int64_t>((int64_t(256) << 20) / std::max<int64_t>(rec, 1), 16, 256);
        diskGBps = io::probeRecords(in.firstBankPath, in.recordBytes, int(records), int(std::max<int64_t>(plan.top_k, 1)))
                       .gbPerSecond;
    }
    out.disk_gbps = diskGBps;

    std::optional<cache::RoutingTrace> trace;
    const fs::path routing = fs::path(plan.container) / "usage.routing.jsonl";
    if (fs::exists(routing)) {
        try {
            trace = cache::loadRoutingTrace(routing.string());
            if (trace->layers > plan.moe_layers || trace->topK != plan.top_k)
                trace.reset(); // recorded on another container
        } catch (const Error &) {
            trace.reset();
        }
    }
    out.hit_model = trace ? "replay of " + routing.string() + " through the " + cache::policyName(cache::kDefaultPolicy) + " cache policy"
                          : "reference measured curve (Kimi-Linear Gate 5: hit rate vs cache share of all expert bytes)";

    for (int64_t budget : budgets) {
        BudgetForecast f;
        f.budget_bytes = budget;
        const int64_t cache = budget - plan.floor_bytes + plan.min_expert_cache;
        f.cache_slots = rec > 0 && cache > 0 ? cache / rec : 0;
        if (trace && f.cache_slots > 0)
            f.hit_rate = cache::cacheSim(*trace, int(std::min<int64_t>(f.cache_slots, 1 << 30)),
                                         cache::kDefaultPolicy, false).hitRate;
        else if (plan.expert_bytes_total > 0)
            f.hit_rate = modelHitRate(double(f.cache_slots * rec) / double(plan.expert_bytes_total));
        f.io_seconds_per_token = diskGBps > 0 ? double(readsPerToken) * (1.0 - f.hit_rate) * double(rec) / (diskGBps * 1e9) : 0;
        f.compute_seconds_per_token = computeSecondsPerToken > 0 ? computeSecondsPerToken : 0;
        // With read-ahead, I/O and compute overlap: a token takes about the longer of
        // the two. Past the cliff the reference measured an 8x collapse.
        const double s = std::max(f.io_seconds_per_token, f.compute_seconds_per_token);
        f.past_cliff = plan.cliff_bytes > 0 && budget > plan.cliff_bytes;
        f.tok_per_s = s > 0 ? 1.0 / s : 0;
        if (f.past_cliff)
            f.tok_per_s /= 8;
        out.budgets.push_back(f);
    }
    return out;
}

} // namespace waste
