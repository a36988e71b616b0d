#include "plan_release.h"

#include "args.h"
#include "calibration_path.h"
#include "calibration_report.h"
#include "plan_forecast.h"
#include "planner/folderdisk.h"
#include "planner/releaseplansource.h"
#include "settings/datafolder.h"

#include <waste/release_plan.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>

namespace cli {

namespace {

double gb(int64_t b) { return double(b) / 1e9; }

struct LayoutReport {
    const waste::ReleaseLayout *layout = nullptr;
    int64_t defaultBudget = 0;
    waste::Forecast forecast;
};

LayoutReport report(const waste::ReleaseLayout &l, const FolderDisk &disk)
{
    LayoutReport r;
    r.layout = &l;
    r.defaultBudget = waste::resolveBudget(l.plan, 0).budget_bytes;
    // diskGBps 0: no disk figure, so no tokens/s (a release has no file to measure)
    const waste::ForecastInputs in = forecastInputsOf(l, disk);
    r.forecast = waste::forecastBudgets(l.plan, budgetLadder(l.plan, r.defaultBudget, 0), in);
    return r;
}

nlohmann::ordered_json layoutJson(const LayoutReport &r)
{
    const waste::ReleaseLayout &l = *r.layout;
    const waste::MemoryPlan &p = l.plan;
    nlohmann::ordered_json j;
    j["expert_format"] = l.expert_format;
    j["record_bytes"] = l.record_bytes;
    j["container_bytes"] = l.container_bytes;
    j["trunk_bytes"] = p.trunk_bytes;
    j["state_bytes"] = p.state_bytes;
    j["scratch_bytes"] = p.scratch_bytes;
    j["min_expert_cache"] = p.min_expert_cache;
    j["floor_bytes"] = p.floor_bytes;
    j["recommended_bytes"] = p.recommended_bytes;
    j["working_set_bytes"] = p.working_set_bytes;
    j["default_budget_bytes"] = r.defaultBudget;
    j["checkpoint_bytes"] = p.checkpoint_bytes;
    j["every_expert_budget_bytes"] = waste::everyExpertBudget(p);
    // The engine opens at the floor even above 7/8 of RAM, but past usable RAM it cannot run.
    j["fits"] = p.floor_bytes <= p.usable_ram_bytes;
    j["floor_under_cliff"] = p.floor_bytes <= p.cliff_bytes;
    // Without the disk's speed a forecast would price no reads at all: none is given.
    if (r.forecast.disk_gbps > 0)
        j["forecast"] = forecastJson(r.forecast, l.compute_seconds, l.compute_overlap_seconds);
    return j;
}

void printLayout(const LayoutReport &r)
{
    const waste::ReleaseLayout &l = *r.layout;
    const waste::MemoryPlan &p = l.plan;
    std::printf("  %s experts (record %.2f MiB): container %.1f GB on disk\n", l.expert_format.c_str(),
                double(l.record_bytes) / 1048576.0, gb(l.container_bytes));
    std::printf("    trunk %.2f GB, attention state %.2f GB, scratch %.2f GB, two layers of experts %.2f GB\n",
                gb(p.trunk_bytes), gb(p.state_bytes), gb(p.scratch_bytes), gb(p.min_expert_cache));
    std::printf("    floor %.2f GB, default %.2f GB, recommended %.2f GB%s\n", gb(p.floor_bytes), gb(r.defaultBudget),
                gb(p.recommended_bytes), p.floor_bytes > p.usable_ram_bytes ? "  (will not fit this RAM)" : "");
    if (r.forecast.disk_gbps > 0)
        printForecast(r.forecast, l.compute_seconds);
}

} // namespace

int runPlanRelease(const Args &args, int ctx)
{
    if (!args.positionals().empty())
        throw UsageError("--config plans a release; give either MODEL or --config, not both");
    const std::string path = *args.value("--config");
    std::ifstream f(path, std::ios::binary);
    if (!f)
        throw UsageError(path + ": cannot open");
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());

    waste::ReleasePlanOptions o;
    o.ctx = ctx;
    o.trunkBits = int(args.integer("--trunk-bits", 4));
    if (const auto ram = args.value("--ram"))
        o.ramBytes = waste::parseSize(*ram);
    waste::ComputeCalibration cal;
    const double computeMs = args.number("--compute-ms", -1);
    if (computeMs < 0) {
        cal = waste::cachedCalibration(calibrationPath(), args.flag("--calibrate"), int(args.integer("--threads", 0)));
        o.calibration = &cal;
    }
    waste::ReleasePlan rp = waste::planRelease(text, o);
    if (computeMs >= 0)
        for (waste::ReleaseLayout *l : {&rp.vq, &rp.native})
            l->compute_seconds = l->compute_overlap_seconds = computeMs / 1000.0;
    // Without a speed given, the disk the desktop app keeps its models on, read with the
    // Planner's probe (a release has no file of its own to measure yet).
    FolderDisk disk; // --disk-gbps given: no reads timed, so none of their cost is charged
    disk.gbPerSecond = diskGBpsOption(args);
    if (disk.gbPerSecond <= 0)
        disk = measureModelsFolderDisk(studioModelsFolder(), studioDataFolder());
    // The container `waste convert` makes by default first, then the other choice.
    const waste::ReleaseLayout &made = rp.convertDefault();
    std::vector<LayoutReport> reports = {report(made, disk)};
    if (rp.has_native)
        reports.push_back(report(&made == &rp.vq ? rp.native : rp.vq, disk));

    const waste::MemoryPlan &m = made.plan;
    if (args.flag("--json")) {
        nlohmann::ordered_json j;
        j["config"] = path;
        j["arch"] = rp.arch;
        j["ctx"] = ctx;
        j["total_params"] = rp.total_params;
        j["active_params"] = rp.active_params;
        j["physical_ram_bytes"] = m.physical_ram_bytes;
        j["usable_ram_bytes"] = m.usable_ram_bytes;
        j["cap_bytes"] = m.cap_bytes;
        j["other_process_bytes"] = m.other_process_bytes;
        j["other_process_assumed"] = o.ramBytes > 0;
        j["cliff_bytes"] = m.cliff_bytes;
        j["disk_gbps"] = disk.gbPerSecond;
        if (!disk.container.isEmpty())
            j["disk_measured_on"] = disk.container.toStdString();
        else if (!disk.why.isEmpty())
            j["disk_not_measured"] = disk.why.toStdString();
        // The layout `waste convert` makes by default at the top level, as `plan MODEL` reports
        // a container; each layout also under its own name ("vq3r", "native").
        const nlohmann::ordered_json first = layoutJson(reports[0]);
        for (auto it = first.begin(); it != first.end(); ++it)
            j[it.key()] = it.value();
        for (size_t i = 0; i < reports.size(); ++i) {
            const char *key = reports[i].layout == &rp.vq ? "vq3r" : "native";
            j[key] = layoutJson(reports[i]);
            if (o.calibration && j[key].contains("forecast"))
                addDecodeScaleFields(j[key]["forecast"], cal);
        }
        if (o.calibration && j.contains("forecast"))
            addDecodeScaleFields(j["forecast"], cal);
        std::printf("%s\n", j.dump().c_str());
        if (o.calibration)
            warnDecodeScaleFallback(cal);
        return 0;
    }
    std::printf("plan for the release in %s (%s, %.1fB parameters, %.1fB active) at ctx %d\n", path.c_str(),
                rp.arch.c_str(), double(rp.total_params) / 1e9, double(rp.active_params) / 1e9, ctx);
    std::printf("  RAM: %s %.2f GB, 7/8 line %.2f GB, other programs %s %.2f GB, paging likely above %.2f GB\n",
                o.ramBytes > 0 ? "a machine with" : "this machine's", gb(m.physical_ram_bytes), gb(m.cap_bytes),
                o.ramBytes > 0 ? "assumed to hold" : "hold", gb(m.other_process_bytes), gb(m.cliff_bytes));
    if (!disk.container.isEmpty())
        std::printf("  disk: %.2f GB/s (%.2f beside a decode), measured on %s\n", disk.gbPerSecond,
                    disk.decodeGbPerSecond > 0 ? disk.decodeGbPerSecond : disk.gbPerSecond, qPrintable(disk.container));
    else if (disk.gbPerSecond <= 0)
        std::printf("  disk: not measured (%s), so no speed is predicted; give --disk-mbps N\n", qPrintable(disk.why));
    for (size_t i = 0; i < reports.size(); ++i) {
        if (i == 0)
            std::printf("  as `waste convert` makes it by default:\n");
        else
            std::printf("  with --experts %s instead:\n", reports[i].layout == &rp.vq ? "vq3r" : "native");
        printLayout(reports[i]);
    }
    if (o.calibration)
        warnDecodeScaleFallback(cal);
    return 0;
}

} // namespace cli
