// waste plan MODEL [--budget SIZE] [--ctx N] [--json]
// The RAM plan from the manifest alone: the reference's fields, plus what other processes
// hold, the paging cliff and a forecast (hit rate, tokens/s) for a ladder of budgets.
// Tokens/s = compute per token (this machine's calibrated kernels over what a token
// touches) + the expert reads the compute beside them cannot hide (the model's own expert
// file, measured with direct I/O at the engine's queue depth).
// This machine's real runs of the model (`waste bench`, `waste run`, the app's answers) scale the forecast,
// as the app's Planner does (observed_runs.h); --no-observed shows it without them.
// `waste plan --config config.json` plans a release before it is downloaded (plan_release.cpp).
#include "calibration_path.h"
#include "calibration_report.h"
#include "observed_runs.h"
#include "plan_forecast.h"
#include "plan_release.h"
#include "verb.h"

#include <waste/calibration.hpp>
#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <cstdio>

namespace {

double gb(int64_t b) { return double(b) / 1e9; }

// The positions a 896x896 picture takes in a Kimi vision prompt (14-pixel patches merged 2x2).
constexpr int kImagePositions = (896 / 28) * (896 / 28);

int runPlan(const cli::Args &args)
{
    const long long ctx = args.integer("--ctx", 4096);
    if (ctx < 1 || ctx > (1 << 24))
        throw cli::UsageError("--ctx must be between 1 and 16777216");
    if (args.value("--config"))
        return cli::runPlanRelease(args, int(ctx));
    if (args.positionals().size() != 1)
        throw cli::UsageError("plan needs MODEL (a container) or --config config.json");
    if (args.value("--ram"))
        throw cli::UsageError("--ram is for --config (a container's plan is for this machine)");
    const waste::MemoryPlan p = waste::planMemory(args.positional(0), int(ctx));
    const auto budgetText = args.value("--budget");
    const int64_t requested = budgetText ? waste::parseSize(*budgetText) : 0;
    const bool below = budgetText && requested < p.floor_bytes;
    waste::BudgetChoice choice;
    if (!below)
        choice = waste::resolveBudget(p, requested);
    const waste::BudgetChoice def = waste::resolveBudget(p, 0);

    const std::vector<int64_t> ladder = cli::budgetLadder(p, def.budget_bytes, budgetText && !below ? requested : 0);
    waste::ForecastInputs fin;
    fin.diskGBps = cli::diskGBpsOption(args);
    const double computeMs = args.number("--compute-ms", -1);
    std::string calibrationFile;
    std::optional<waste::ComputeCalibration> cal;
    std::vector<std::pair<std::string, double>> byKernel; // a token's compute, kernel by kernel
    if (fin.diskGBps <= 0) {
        // The disk before the compute: a calibration writes and deletes two temporary
        // containers, and their writeback took the disk from a probe right after it (on a VM,
        // 1.6 and 2.1 GB/s where the same probe alone measured 3.9).
        fin.setReads(waste::measureExpertReads(p));
    }
    if (computeMs >= 0) {
        fin.computeSeconds = fin.computeOverlapSeconds = computeMs / 1000.0; // as given: all of it overlapping
    } else {
        calibrationFile = cli::calibrationPath();
        cal = waste::cachedCalibration(calibrationFile, args.flag("--calibrate"), int(args.integer("--threads", 0)));
        const waste::ComputeEstimate e = waste::estimateComputePerToken(args.positional(0), *cal);
        byKernel = e.byKernel;
        fin.computeSeconds = e.seconds;
        fin.computeOverlapSeconds = e.overlapSeconds;
        fin.routedExpertSeconds = e.routedExpertSeconds;
    }
    waste::Forecast fc = waste::forecastBudgets(p, ladder, fin);
    // Reading a prompt at the budget asked about (else the default): --prompt-tokens of text,
    // and one image where the container reads images (kImagePositions of a 896x896 picture).
    const long long promptTokens = args.integer("--prompt-tokens", 4096);
    if (promptTokens < 1 || promptTokens > (1 << 24))
        throw cli::UsageError("--prompt-tokens must be between 1 and 16777216");
    const waste::BudgetChoice &asked = budgetText && !below ? choice : def;
    std::optional<waste::PrefillEstimate> prefill, imagePrefill;
    if (cal) {
        prefill = waste::estimatePrefill(args.positional(0), *cal, int(promptTokens), asked.pass_tokens, fc.disk_gbps,
                                         asked.expand_room_bytes);
        if (p.vision_bytes > 0)
            imagePrefill = waste::estimatePrefill(args.positional(0), *cal, kImagePositions, asked.pass_tokens,
                                                  fc.disk_gbps, asked.expand_room_bytes);
    }
    // The real runs against the uncorrected forecast at each run's budget, then the forecast scaled.
    cli::RunCorrection observed;
    if (!args.flag("--no-observed")) {
        fin.diskGBps = fc.disk_gbps; // as measured once above, so each run's budget is priced alike
        fin.decodeDiskGBps = fc.decode_disk_gbps;
        fin.readLatencySeconds = fc.read_latency_seconds;
        fin.readCpuSeconds = fc.read_cpu_seconds;
        fin.queueDepth = fc.queue_depth;
        // Each budget priced once: runs mostly share one (a hit-rate replay per run would cost).
        const auto once = [](std::function<double(int64_t)> price) {
            return [price, seen = std::map<int64_t, double>()](int64_t b) mutable {
                const auto it = seen.find(b);
                return it != seen.end() ? it->second : (seen[b] = price(b));
            };
        };
        observed = cli::runCorrection(
            args.positional(0),
            once([&](int64_t b) {
                if (b < p.floor_bytes)
                    return 0.0;
                return waste::forecastBudgets(p, {b}, fin).budgets.at(0).tok_per_s;
            }),
            once([&](int64_t b) {
                if (!cal || b < p.floor_bytes)
                    return 0.0;
                const waste::BudgetChoice at = waste::resolveBudget(p, b);
                const waste::PrefillEstimate e = waste::estimatePrefill(args.positional(0), *cal, int(promptTokens),
                                                                        at.pass_tokens, fc.disk_gbps, at.expand_room_bytes);
                return e.known ? e.tokPerS : 0.0;
            }));
        cli::applyCorrection(fc, observed);
        if (observed.prefillRuns > 0)
            for (auto *e : {&prefill, &imagePrefill})
                if (*e && (*e)->known) {
                    (*e)->seconds /= observed.prefill;
                    (*e)->tokPerS *= observed.prefill;
                }
    }

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
            j["checkpoint_kept"] = !below && choice.checkpoint_kept;
            j["pass_tokens"] = below ? int64_t(-1) : int64_t(choice.pass_tokens);
        }
        // The longest prompt pass each budget gives (a pass is how many prompt tokens are read
        // at once; its RAM comes out of the expert cache).
        j["pass_token_bytes"] = p.pass_token_bytes;
        j["pass_fixed_bytes"] = p.pass_fixed_bytes;
        j["pass_piece_token_bytes"] = p.pass_piece_token_bytes;
        j["default_pass_tokens"] = def.pass_tokens;
        j["working_set_bytes"] = p.working_set_bytes;
        j["checkpoint_bytes"] = p.checkpoint_bytes;
        j["cap_bytes"] = p.cap_bytes;
        j["default_budget_bytes"] = def.budget_bytes;
        j["other_process_bytes"] = p.other_process_bytes;
        j["cliff_bytes"] = p.cliff_bytes;
        j["warnings"] = budgetText ? choice.warnings : def.warnings;
        j["every_expert_budget_bytes"] = waste::everyExpertBudget(p);
        nlohmann::ordered_json f = cli::forecastJson(fc, fin.computeSeconds, fin.computeOverlapSeconds);
        f["calibration_file"] = calibrationFile.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(calibrationFile);
        if (cal)
            cli::addDecodeScaleFields(f, *cal);
        if (!byKernel.empty()) { // the decode scale applied: what each kernel adds to a token
            nlohmann::ordered_json k;
            for (const auto &[kernel, seconds] : byKernel)
                k[kernel] = seconds;
            f["compute_s_by_kernel"] = k;
        }
        if (prefill && prefill->known) {
            nlohmann::ordered_json pf;
            pf["budget_bytes"] = budgetText && !below ? requested : def.budget_bytes;
            pf["prompt_tokens"] = prefill->tokens;
            pf["pass_tokens"] = prefill->passTokens;
            pf["passes"] = prefill->passes;
            pf["compute_seconds"] = prefill->computeSeconds;
            pf["panel_decode_seconds"] = prefill->panelDecodeSeconds;         // of compute_seconds
            pf["linear_attention_seconds"] = prefill->linearAttentionSeconds; // of compute_seconds
            pf["attention_seconds"] = prefill->attentionSeconds;              // of compute_seconds
            pf["vector_seconds"] = prefill->vectorSeconds;                    // of compute_seconds
            pf["read_seconds"] = prefill->readSeconds;
            pf["seconds_to_first_token"] = prefill->seconds;
            pf["tok_per_s"] = prefill->tokPerS;
            if (imagePrefill) {
                pf["image_positions"] = imagePrefill->tokens;
                pf["image_seconds"] = imagePrefill->seconds;
            }
            f["prefill"] = pf;
        }
        if (!args.flag("--no-observed"))
            f["observed"] = cli::correctionJson(observed);
        j["forecast"] = f;
        std::printf("%s\n", j.dump().c_str());
    } else {
        std::printf("plan for %s at ctx %lld\n", args.positional(0).c_str(), ctx);
        std::printf("  trunk %.3f GB, attention state %.3f GB, scratch %.3f GB, two layers of experts %.3f GB\n",
                    gb(p.trunk_bytes), gb(p.state_bytes), gb(p.scratch_bytes), gb(p.min_expert_cache));
        std::printf("  floor %.3f GB, recommended %.3f GB (floor + 3 working sets of %.3f GB)\n", gb(p.floor_bytes),
                    gb(p.recommended_bytes), gb((p.recommended_bytes - p.floor_bytes) / 3));
        if (p.vision_bytes > 0)
            std::printf("  with --image: %.3f GB more, taken from the expert cache\n", gb(p.vision_bytes));
        std::printf("  RAM: physical %.2f GB, usable %.2f GB, 7/8 line %.2f GB, other processes hold %.2f GB now\n",
                    gb(p.physical_ram_bytes), gb(p.usable_ram_bytes), gb(p.cap_bytes), gb(p.other_process_bytes));
        std::printf("  default budget %.3f GB; paging likely above %.2f GB\n", gb(def.budget_bytes), gb(p.cliff_bytes));
        if (budgetText && !below)
            std::printf("  budget %.3f GB -> expert cache %.3f GB (%lld slots)%s; prompts read %d tokens a pass\n",
                        gb(requested), gb(choice.expert_cache_bytes), (long long)choice.cache_slots,
                        choice.checkpoint_kept ? " and a state checkpoint" : ", no room for a state checkpoint",
                        choice.pass_tokens);
        else
            std::printf("  at the default budget prompts read %d tokens a pass\n", def.pass_tokens);
        cli::printForecast(fc, fin.computeSeconds);
        cli::printCorrection(observed);
        if (prefill && prefill->known) {
            std::printf("  a %d-token prompt reads in about %.1f s (%.0f tok/s; %d pass%s, compute %.1f s of which "
                        "%.1f s decoding experts, expert reads %.1f s)\n",
                        prefill->tokens, prefill->seconds, prefill->tokPerS, prefill->passes,
                        prefill->passes == 1 ? "" : "es", prefill->computeSeconds, prefill->panelDecodeSeconds,
                        prefill->readSeconds);
            if (imagePrefill)
                std::printf("  one image (%d positions) reads in about %.1f s\n", imagePrefill->tokens,
                            imagePrefill->seconds);
        }
        if (!calibrationFile.empty())
            std::printf("  compute calibration: %s (--calibrate measures again)\n", calibrationFile.c_str());
    }
    if (cal)
        cli::warnDecodeScaleFallback(*cal);
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

WASTE_CLI_VERB({"plan", "MODEL | --config config.json [--ram SIZE] [--budget SIZE] [--ctx N] [--json]",
                "RAM floor, default budget, paging cliff and what each budget buys (reads no weights)",
                {{{"--budget", cli::OptionKind::Value, "SIZE  budget to check (8G, 512M, bytes)"},
                  {"--ctx", cli::OptionKind::Value, "N  context positions (default 4096)"},
                  {"--config", cli::OptionKind::Value, "FILE  plan a release from its config.json, before downloading"},
                  {"--ram", cli::OptionKind::Value, "SIZE  with --config: plan for a machine with this much RAM"},
                  {"--trunk-bits", cli::OptionKind::Value, "4|8  with --config: the trunk as `convert --trunk-bits`"},
                  {"--disk-gbps", cli::OptionKind::Value, "X  disk speed in GB/s (default: measured on MODEL)"},
                  {"--disk-mbps", cli::OptionKind::Value, "N  disk speed in MB/s (10^6 bytes per second)"},
                  {"--compute-ms", cli::OptionKind::Value, "X  compute time per token instead of the calibration"},
                  {"--calibrate", cli::OptionKind::Flag, "measure this machine's kernels again"},
                  {"--prompt-tokens", cli::OptionKind::Value, "N  the prompt forecast.prefill reads (default 4096)"},
                  {"--threads", cli::OptionKind::Value, "N  compute threads the calibration uses (default: all)"},
                  {"--no-observed", cli::OptionKind::Flag, "the forecast without this machine's real runs of the model"},
                  {"--json", cli::OptionKind::Flag, "one JSON object on stdout"}},
                 0, 1},
                &runPlan});
