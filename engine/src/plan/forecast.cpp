// Predicted hit rate and tokens/s for a list of budgets.
#include "cache/cache_sim.hpp"
#include "cache/routing_trace.hpp"
#include "io/aligned_buffer.hpp"
#include "io/disk_probe.hpp"
#include "plan/pass_plan.hpp"
#include "plan/plan_inputs.hpp"
#include "plan/read_interference.hpp"
#include "plan/read_overlap.hpp"

#include <waste/usage_paths.hpp>
#include <waste/waste.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <optional>
#include <utility>

namespace waste {

namespace {

// The stated model when no routing has been recorded: the reference's measured cache
// curve (waste-engine.md §4.4/§4.5, Kimi-Linear, 300 decode tokens, page cache
// bypassed): hit rate as a function of the fraction of all expert bytes the cache holds,
// interpolated linearly between the measured points.
double referenceCurve(double fraction)
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

// The curve is read by the share of all expert bytes the cache holds. It was measured with
// caches of many tokens' working sets (top-k of every MoE layer); a cache smaller than one
// working set (a tiny model's floor: 4 slots for 4 layers of top-2) has each layer's
// experts evicted by the other layers' before they come round again, so it keeps at most
// its share of one token's set for the next.
double modelHitRate(double fraction, double workingSets)
{
    return referenceCurve(fraction) * std::clamp(workingSets, 0.0, 1.0);
}

} // namespace

namespace {

// The engine's reader threads for a top-k when none are set (cache/streamed_expert_source).
int engineQueueDepth(int64_t topK) { return int(std::clamp<int64_t>(topK, 2, 16)); }

} // namespace

ExpertReadSpeed measureExpertReads(const MemoryPlan &plan)
{
    const plan::PlanInputs in = plan::readPlanInputs(plan.container);
    ExpertReadSpeed r;
    r.queue_depth = engineQueueDepth(in.topK);
    r.record_bytes = in.recordBytes;
    // Enough reads to cover ~256 MiB (and never fewer than 8 per reader), so a fast disk is
    // timed over more than its first burst; random records, so read-ahead cannot help. Three
    // times, other records each time, and the middle speed kept: one probe lasts a tenth of
    // a second on a fast disk, and on a shared VM's disk single probes a minute apart ranged
    // from 1.6 to 3 GB/s, which moved the forecast of a budget whose token waits for its
    // reads by as much.
    const int64_t records = std::clamp<int64_t>((int64_t(256) << 20) / std::max<int64_t>(in.recordBytes, 1),
                                                8 * r.queue_depth, 4096);
    std::array<io::DiskSpeed, 3> probes;
    for (size_t i = 0; i < probes.size(); ++i)
        probes[i] = io::probeRecords(in.probeBankPaths, in.recordBytes, int(records), r.queue_depth, i);
    std::sort(probes.begin(), probes.end(),
              [](const io::DiskSpeed &a, const io::DiskSpeed &b) { return a.gbPerSecond < b.gbPerSecond; });
    const io::DiskSpeed &bw = probes[1];
    const int lone = int(std::clamp<int64_t>(records / 8, 16, 256));
    const io::DiskSpeed one = io::probeRecords(in.probeBankPaths, in.recordBytes, lone, 1);
    r.gbps = bw.gbPerSecond;
    r.latency_seconds = one.bytes > 0 ? one.seconds / (double(one.bytes) / double(in.recordBytes)) : 0;
    r.direct_io = bw.directIo && one.directIo;
    r.cpu_seconds_per_read = bw.reads > 0 ? bw.cpuSeconds / double(bw.reads) : 0;
    // The same reads beside the decode's largest kernel: what a token's reads stream at and
    // cost the compute (the probes above ran on idle cores).
    const plan::ReadInterference beside = plan::measureReadInterference(in.probeBankPaths, in.recordBytes, r.queue_depth);
    r.compute_seconds_per_read = std::max(r.cpu_seconds_per_read, beside.secondsPerRead);
    r.decode_gbps = beside.rounds > 0 ? std::min(beside.gbps, r.gbps) : r.gbps;
    r.warning = bw.warning;
    return r;
}

void ForecastInputs::setReads(const ExpertReadSpeed &r)
{
    diskGBps = r.gbps;
    decodeDiskGBps = r.decode_gbps;
    readLatencySeconds = r.latency_seconds;
    readCpuSeconds = r.compute_seconds_per_read > 0 ? r.compute_seconds_per_read : r.cpu_seconds_per_read;
    queueDepth = r.queue_depth;
}

Forecast forecastBudgets(const MemoryPlan &plan, const std::vector<int64_t> &budgets, double diskGBps,
                         double computeSecondsPerToken)
{
    ForecastInputs in;
    in.diskGBps = diskGBps;
    in.computeSeconds = in.computeOverlapSeconds = std::max(0.0, computeSecondsPerToken);
    return forecastBudgets(plan, budgets, in);
}

Forecast forecastBudgets(const MemoryPlan &plan, const std::vector<int64_t> &budgets, const ForecastInputs &inputs)
{
    namespace fs = std::filesystem;
    Forecast out;
    const int64_t rec = plan.max_record_bytes;
    const int64_t k = std::max<int64_t>(plan.top_k, 1);
    ForecastInputs in = inputs;
    if (in.diskGBps <= 0 && !plan.container.empty()) {
        ForecastInputs measured;
        measured.setReads(measureExpertReads(plan));
        in.diskGBps = measured.diskGBps;
        in.decodeDiskGBps = measured.decodeDiskGBps;
        if (in.readLatencySeconds <= 0)
            in.readLatencySeconds = measured.readLatencySeconds;
        if (in.readCpuSeconds <= 0)
            in.readCpuSeconds = measured.readCpuSeconds;
        in.queueDepth = measured.queueDepth;
    }
    const double diskGBps = in.diskGBps;
    // A token's reads stream at the speed measured beside a decode where there is one: on
    // the 2-core development VM 2.1-2.6 GB/s where the same reads alone took 3.4-4.0 (the
    // reader's completions wait for a core), which the decode's bench matched (2.4-2.9).
    const double decodeGBps = in.decodeDiskGBps > 0 ? std::min(in.decodeDiskGBps, diskGBps) : diskGBps;
    double latency = in.readLatencySeconds;
    const double readCpu = std::max(0.0, in.readCpuSeconds);
    out.queue_depth = in.queueDepth > 0 ? in.queueDepth : engineQueueDepth(k);
    out.read_cpu_seconds = readCpu;
    // Without a measured lone read, a read is assumed to take its bytes at the stated speed
    // plus an NVMe drive's access time (~0.1 ms).
    const double recordSeconds = decodeGBps > 0 ? double(rec) / (decodeGBps * 1e9) : 0;
    if (latency <= 0 && diskGBps > 0)
        latency = double(rec) / (diskGBps * 1e9) + 100e-6;
    out.disk_gbps = diskGBps;
    out.decode_disk_gbps = decodeGBps;
    out.read_latency_seconds = latency;

    std::optional<cache::RoutingTrace> trace;
    const fs::path routing = routingRecordPath(usageRecordPath(plan.container));
    if (!plan.container.empty() && fs::exists(routing)) {
        try {
            trace = cache::loadRoutingTrace(routing.string());
            if (trace->layers > plan.moe_layers || trace->topK != plan.top_k)
                trace.reset(); // recorded on another container
        } catch (const Error &) {
            trace.reset();
        }
    }
    // A container of generated weights (waste mktiny: the demo, the mid-size benchmark) has a
    // random router: its tokens' experts are near-uniform and independent of the past, so no
    // cache policy keeps more than its share of the records (tests/bench/uniform_bound.py),
    // where the reference curve, measured on a trained router, expects several times that.
    const bool uniform = !trace && plan.generated_weights;
    out.hit_model = trace     ? "replay of " + routing.string() + " through the " + cache::policyName(cache::kDefaultPolicy) + " cache policy"
                    : uniform ? "uniform routing of generated weights (hit rate = the cache's share of the records)"
                              : "reference measured curve (Kimi-Linear Gate 5: hit rate vs cache share of all expert bytes)";

    const double compute = std::max(0.0, in.computeSeconds);
    const double overlap = std::clamp(in.computeOverlapSeconds, 0.0, compute);
    const bool perLayer = in.routedExpertSeconds >= 0 && plan.moe_layers > 0;
    plan::LayerReads layer;
    if (perLayer) {
        const double routed = std::min(in.routedExpertSeconds, overlap);
        const double layers = double(plan.moe_layers);
        layer.topK = int(std::min<int64_t>(k, 1 << 10));
        layer.latency = latency;
        layer.recordSeconds = recordSeconds;
        layer.hookSeconds = (overlap - routed) / layers;
        layer.expertSeconds = routed / (layers * double(k));
        layer.layerSeconds = compute / layers;
    }
    for (int64_t budget : budgets) {
        BudgetForecast f;
        f.budget_bytes = budget;
        // The slots the engine opens with at this budget (the checkpoint's share included), and
        // the floor's prompt room the cache holds while tokens are generated.
        const int64_t cache = expertCacheAt(plan, budget).cache_bytes;
        f.cache_slots = rec > 0 && cache > 0 ? cache / rec : 0;
        if (f.cache_slots > 0)
            f.room_slots = plan::promptRoomSlots(plan.pass_floor_bytes, io::alignUp(rec), f.cache_slots,
                                                 plan.expert_bytes_total / rec);
        const int64_t slots = f.cache_slots + f.room_slots; // a decode step's
        if (rec > 0 && diskGBps > 0 && plan.expert_bytes_total > 0 && f.cache_slots >= plan.expert_bytes_total / rec)
            f.open_load_seconds = double(plan.expert_bytes_total) / 1e9 / diskGBps;
        if (trace && slots > 0)
            f.hit_rate = cache::cacheSim(*trace, int(std::min<int64_t>(slots, 1 << 30)), cache::kDefaultPolicy, false).hitRate;
        else if (uniform && rec > 0 && plan.expert_bytes_total > 0)
            f.hit_rate = std::min(1.0, double(slots) / double(plan.expert_bytes_total / rec));
        else if (plan.expert_bytes_total > 0)
            f.hit_rate = modelHitRate(double(slots * rec) / double(plan.expert_bytes_total),
                                      double(slots) / double(std::max<int64_t>(plan.moe_layers * k, 1)));
        if (diskGBps > 0) {
            // Per MoE layer the misses go out together: a layer with any miss waits one read's
            // latency, and its further misses stream at the queue's bandwidth.
            const double missing = double(k) * (1.0 - f.hit_rate);
            const double anyMiss = 1.0 - std::pow(f.hit_rate, double(k));
            f.io_seconds_per_token =
                double(plan.moe_layers) * (anyMiss * latency + std::max(0.0, missing - anyMiss) * recordSeconds);
        }
        f.compute_seconds_per_token = compute;
        if (perLayer && diskGBps > 0) {
            // Each layer's reads against the compute that runs after they are issued
            // (plan/read_overlap.hpp). The lookahead reads ahead only into the slots two
            // layers' demand leaves free (cache/streamed_expert_source.cpp, prefetch).
            layer.hitRate = f.hit_rate;
            const double spare = double(slots - 2 * k);
            layer.lookaheadShare = spare > 0 ? std::clamp(in.lookaheadRecall, 0.0, 1.0) * std::min(1.0, spare / double(k)) : 0;
            // (never below zero: the stall sums differences that round to -1e-12)
            f.unhidden_io_seconds_per_token = std::max(0.0, double(plan.moe_layers) * plan::expectedLayerStall(layer));
        } else {
            // Without the routed experts' share, all of the overlapping compute is set against
            // all of the token's reads.
            f.unhidden_io_seconds_per_token = std::max(0.0, f.io_seconds_per_token - overlap);
        }
        // Each miss's read also costs the machine CPU time (its system calls, the buffer's page
        // pins, a virtual machine's exits), on the cores the compute runs on: on the 2-core
        // development VM 17-30 us a 600 KB record read into huge pages as the cache reads it.
        f.read_cpu_seconds_per_token = double(plan.moe_layers) * double(k) * (1.0 - f.hit_rate) * readCpu;
        double s = compute + f.unhidden_io_seconds_per_token + f.read_cpu_seconds_per_token;
        // Whatever overlaps, every record the cache lacks is read once a token (by the lookahead
        // or on demand) through one disk: a token takes at least their bytes at its speed. On
        // the mid-size container at the floor (61 of 64 records read, 2.4 GB/s) that is 15 ms a
        // token, against 9 ms of compute.
        s = std::max(s, double(plan.moe_layers) * double(k) * (1.0 - f.hit_rate) * recordSeconds);
        f.past_cliff = plan.cliff_bytes > 0 && budget > plan.cliff_bytes;
        f.tok_per_s = s > 0 ? 1.0 / s : 0;
        if (f.past_cliff)
            f.tok_per_s /= 8; // the collapse the reference measured past the cliff
        out.budgets.push_back(f);
    }
    return out;
}

} // namespace waste
