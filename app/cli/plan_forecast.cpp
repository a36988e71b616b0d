#include "plan_forecast.h"

#include "args.h"

#include <algorithm>
#include <cstdio>

namespace cli {

std::vector<int64_t> budgetLadder(const waste::MemoryPlan &p, int64_t defaultBudget, int64_t asked)
{
    std::vector<int64_t> ladder = {p.floor_bytes, defaultBudget};
    const int64_t ws = (p.recommended_bytes - p.floor_bytes) / 3;
    for (int n = 1; n <= 3; ++n)
        ladder.push_back(p.floor_bytes + n * ws);
    if (p.expert_bytes_total > 0)
        ladder.push_back(waste::everyExpertBudget(p));
    if (p.cliff_bytes > p.floor_bytes)
        ladder.push_back(p.cliff_bytes);
    if (asked >= p.floor_bytes)
        ladder.push_back(asked);
    std::sort(ladder.begin(), ladder.end());
    ladder.erase(std::unique(ladder.begin(), ladder.end()), ladder.end());
    return ladder;
}

nlohmann::ordered_json forecastJson(const waste::Forecast &fc, double computeSeconds, double overlapSeconds)
{
    using J = nlohmann::ordered_json;
    J f;
    f["hit_model"] = fc.hit_model;
    f["disk_gbps"] = fc.disk_gbps;
    f["decode_disk_gbps"] = fc.decode_disk_gbps;
    f["read_latency_ms"] = fc.read_latency_seconds * 1000;
    f["queue_depth"] = fc.queue_depth;
    f["read_cpu_ms"] = fc.read_cpu_seconds * 1000;
    f["compute_s_per_token"] = computeSeconds;
    f["compute_overlap_s_per_token"] = overlapSeconds;
    J rows = J::array();
    for (const auto &b : fc.budgets)
        rows.push_back({{"budget_bytes", b.budget_bytes},
                        {"cache_slots", b.cache_slots},
                        {"room_slots", b.room_slots},
                        {"hit_rate", b.hit_rate},
                        {"io_s_per_token", b.io_seconds_per_token},
                        {"compute_s_per_token", b.compute_seconds_per_token},
                        {"unhidden_io_s_per_token", b.unhidden_io_seconds_per_token},
                        {"read_cpu_s_per_token", b.read_cpu_seconds_per_token},
                        {"tok_per_s", b.tok_per_s > 0 ? J(b.tok_per_s) : J()},
                        {"past_cliff", b.past_cliff},
                        {"open_load_s", b.open_load_seconds}});
    f["budgets"] = rows;
    return f;
}

void printForecast(const waste::Forecast &fc, double computeSeconds)
{
    std::printf("  forecast (%s)\n", fc.hit_model.c_str());
    std::printf("  disk %.2f GB/s with %d reads in flight (%.2f GB/s beside a decode), one read alone %.3f ms, "
                "%.3f ms of compute a read costs; compute %.3f ms per token\n",
                fc.disk_gbps, fc.queue_depth, fc.decode_disk_gbps, fc.read_latency_seconds * 1000,
                fc.read_cpu_seconds * 1000, computeSeconds * 1000);
    for (const auto &b : fc.budgets) {
        char speed[64];
        if (b.tok_per_s > 0)
            std::snprintf(speed, sizeof speed, "%.2f tok/s", b.tok_per_s);
        else
            std::snprintf(speed, sizeof speed, "(no disk speed or compute)");
        // Slots: the cache's, and the prompt room's it holds while tokens are generated.
        std::printf("    %9.3f GB  %8lld+%-4lld slots  hit %5.1f%%  reads %7.3f ms (CPU %6.3f ms)  compute %7.3f ms  %s%s\n",
                    double(b.budget_bytes) / 1e9, (long long)b.cache_slots, (long long)b.room_slots, 100 * b.hit_rate,
                    b.io_seconds_per_token * 1000, b.read_cpu_seconds_per_token * 1000,
                    b.compute_seconds_per_token * 1000, speed,
                    b.past_cliff ? "  (past the cliff)" : "");
        if (b.open_load_seconds > 0) // OpenOptions::loadEveryExpert
            std::printf("    %9s  every expert read at open: about %.1f s\n", "", b.open_load_seconds);
    }
}

double diskGBpsOption(const Args &args)
{
    const double gbps = args.number("--disk-gbps", 0);
    const double mbps = args.number("--disk-mbps", 0);
    if (gbps < 0 || mbps < 0)
        throw UsageError("disk speed must be positive");
    return gbps > 0 ? gbps : mbps / 1000.0;
}

} // namespace cli
