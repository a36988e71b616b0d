// waste plan MODEL [--budget SIZE] [--ctx N] [--json]
// The RAM plan from the manifest alone: the reference's fields, plus what other processes
// hold, the paging cliff and a forecast (hit rate, tokens/s) for a ladder of budgets.
#include "verb.h"

#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

namespace {

double gb(int64_t b) { return double(b) / 1e9; }

int runPlan(const cli::Args &args)
{
    const long long ctx = args.integer("--ctx", 4096);
    if (ctx < 1 || ctx > (1 << 24))
        throw cli::UsageError("--ctx must be between 1 and 16777216");
    const waste::MemoryPlan p = waste::planMemory(args.positional(0), int(ctx));
    const auto budgetText = args.value("--budget");
    const int64_t requested = budgetText ? waste::parseSize(*budgetText) : 0;
    const bool below = budgetText && requested < p.floor_bytes;
    waste::BudgetChoice choice;
    if (!below)
        choice = waste::resolveBudget(p, requested);
    const waste::BudgetChoice def = waste::resolveBudget(p, 0);

    // The ladder the GUI draws: floor, floor + 1/2/3 working sets, the default, the cliff.
    std::vector<int64_t> ladder = {p.floor_bytes};
    const int64_t ws = (p.recommended_bytes - p.floor_bytes) / 3;
    for (int n = 1; n <= 3; ++n)
        ladder.push_back(p.floor_bytes + n * ws);
    if (p.cliff_bytes > p.floor_bytes)
        ladder.push_back(p.cliff_bytes);
    if (budgetText && !below)
        ladder.push_back(requested);
    std::sort(ladder.begin(), ladder.end());
    ladder.erase(std::unique(ladder.begin(), ladder.end()), ladder.end());
    const waste::Forecast fc = waste::forecastBudgets(p, ladder, args.number("--disk-gbps", 0),
                                                      args.number("--compute-ms", 0) / 1000.0);

    if (args.flag("--json")) {
        nlohmann::ordered_json j;
        j["ctx"] = p.ctx;
        j["trunk_bytes"] = p.trunk_bytes;
        j["state_bytes"] = p.state_bytes;
        j["scratch_bytes"] = p.scratch_bytes;
        j["min_expert_cache"] = p.min_expert_cache;
        j["floor_bytes"] = p.floor_bytes;
        j["recommended_bytes"] = p.recommended_bytes;
        j["physical_ram_bytes"] = p.physical_ram_bytes;
        j["usable_ram_bytes"] = p.usable_ram_bytes;
        if (p.vision_bytes > 0)
            j["vision_bytes"] = p.vision_bytes;
        if (budgetText) {
            j["budget_bytes"] = requested;
            j["expert_cache_bytes"] = below ? int64_t(-1) : choice.expert_cache_bytes;
            j["cache_slots"] = below ? int64_t(-1) : choice.cache_slots;
        }
        j["working_set_bytes"] = p.working_set_bytes;
        j["cap_bytes"] = p.cap_bytes;
        j["default_budget_bytes"] = def.budget_bytes;
        j["other_process_bytes"] = p.other_process_bytes;
        j["cliff_bytes"] = p.cliff_bytes;
        j["warnings"] = budgetText ? choice.warnings : def.warnings;
        nlohmann::ordered_json f;
        f["hit_model"] = fc.hit_model;
        f["disk_gbps"] = fc.disk_gbps;
        f["compute_s_per_token"] = args.number("--compute-ms", 0) / 1000.0;
        auto &rows = f["budgets"] = nlohmann::ordered_json::array();
        for (const auto &b : fc.budgets)
            rows.push_back({{"budget_bytes", b.budget_bytes}, {"cache_slots", b.cache_slots},
                            {"hit_rate", b.hit_rate}, {"io_s_per_token", b.io_seconds_per_token},
                            {"tok_per_s", b.tok_per_s > 0 ? nlohmann::ordered_json(b.tok_per_s) : nlohmann::ordered_json()},
                            {"past_cliff", b.past_cliff}});
        j["forecast"] = f;
        std::printf("%s\n", j.dump().c_str());
    } else {
        std::printf("plan for %s at ctx %lld\n", args.positional(0).c_str(), ctx);
        std::printf("  trunk %.3f GB, attention state %.3f GB, scratch %.3f GB, two layers of experts %.3f GB\n",
                    gb(p.trunk_bytes), gb(p.state_bytes), gb(p.scratch_bytes), gb(p.min_expert_cache));
        std::printf("  floor %.3f GB, recommended %.3f GB (floor + 3 working sets of %.3f GB)\n", gb(p.floor_bytes),
                    gb(p.recommended_bytes), gb(ws));
        if (p.vision_bytes > 0)
            std::printf("  with --image: %.3f GB more, taken from the expert cache\n", gb(p.vision_bytes));
        std::printf("  RAM: physical %.2f GB, usable %.2f GB, 7/8 line %.2f GB, other processes hold %.2f GB now\n",
                    gb(p.physical_ram_bytes), gb(p.usable_ram_bytes), gb(p.cap_bytes), gb(p.other_process_bytes));
        std::printf("  default budget %.3f GB; paging likely above %.2f GB\n", gb(def.budget_bytes), gb(p.cliff_bytes));
        if (budgetText && !below)
            std::printf("  budget %.3f GB -> expert cache %.3f GB (%lld slots)\n", gb(requested),
                        gb(choice.expert_cache_bytes), (long long)choice.cache_slots);
        std::printf("  forecast (%s, disk %.2f GB/s):\n", fc.hit_model.c_str(), fc.disk_gbps);
        for (const auto &b : fc.budgets)
            std::printf("    %9.3f GB  %8lld slots  hit %5.1f%%  %s tok/s%s\n", gb(b.budget_bytes),
                        (long long)b.cache_slots, 100 * b.hit_rate,
                        b.tok_per_s > 0 ? std::to_string(b.tok_per_s).c_str() : "(no I/O; compute not given)",
                        b.past_cliff ? "  (past the cliff)" : "");
    }
    for (const auto &w : (budgetText && !below) ? choice.warnings : def.warnings)
        std::fprintf(stderr, "warning: %s\n", w.c_str());
    if (below) {
        std::fprintf(stderr, "waste plan: budget %lld bytes is below the RAM floor of %lld bytes (%.3f GB)\n",
                     (long long)requested, (long long)p.floor_bytes, gb(p.floor_bytes));
        return 1;
    }
    return 0;
}

} // namespace

WASTE_CLI_VERB({"plan", "MODEL [--budget SIZE] [--ctx N] [--json]",
                "RAM floor, default budget, paging cliff and what each budget buys (reads no weights)",
                {{{"--budget", cli::OptionKind::Value, "SIZE  budget to check (8G, 512M, bytes)"},
                  {"--ctx", cli::OptionKind::Value, "N  context positions (default 4096)"},
                  {"--disk-gbps", cli::OptionKind::Value, "X  disk speed for the forecast (default: measured)"},
                  {"--compute-ms", cli::OptionKind::Value, "X  compute time per token for the forecast"},
                  {"--json", cli::OptionKind::Flag, "one JSON object on stdout"}},
                 1, 1},
                &runPlan});
