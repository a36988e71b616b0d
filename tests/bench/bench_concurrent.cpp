// Aggregate decode speed of 1, 2, 4 and 8 concurrent streams (waste/batch.hpp) on the
// mid-size containers (mid_container.hpp), at three budgets:
//   io:      the VQ3R container at the floor plus the streams' states and a few records of
//            expert cache, so most experts come from disk every step (on a free machine the
//            step is still mostly the tables' compute: see the share waiting for reads);
//   native:  the same rule at a container of native MXFP4 experts (1.4x VQ3R's bytes per
//            expert, a fraction of its compute), where a step waits for reads a larger share
//            of its time, and where several streams' reads in flight together can pay; with
//            --native-layout bf16 (5.3x the bytes) one stream's reads alone fill the disk's
//            bandwidth, so more streams cannot read faster (see the MB read per step);
//   compute: the VQ3R container with room for every record, warmed by a first pass, so
//            nothing is read.
// Each stream is a different short prompt, greedy, N tokens (default 32); the aggregate is
// the tokens all streams sampled after each had its first, over the time that took.
// With --prefill N it also reads an N-token prompt alone at the compute-bound budget (the
// chunk path the batch shares), twice after a warming read, and gives prompt tokens per second.
// With --reps R every budget runs its stream counts R times, interleaved (1,2,4,8,1,2,4,8,...),
// so a change in the machine's load hits every count alike; each figure is then the median
// of its R runs, and the 4-over-1 ratio the median of the R ratios of the same repetition.
// --budgets io, native or compute (or a list) runs only those.
// --container DIR --budget SIZE [--ctx N]: the I/O-bound case on that container at that
// budget and context instead (tests/bench/bench_serve_concurrent.py compares waste serve
// with it: the streams there are sized as the server sizes requests, their prompt and
// --tokens, so a budget may hold more of them than full-context states).
// Disk ceiling: before the stream counts of an I/O-bound budget, the engine's own reader
// (the ReaderPool backend the decode uses) reads random whole records of that container into
// buffers laid out like the expert cache's slots (huge pages; expert_read_rate.hpp) for
// ~1.5 s at 1, top-k (one stream's misses in a layer), 8 and 4 x top-k (a 4-stream step's)
// reads in flight; B_max is the best of those. Then per stream count: bytes read per token,
// the ceiling B_max / bytes per token, and the share of it the decode reached. A decode that
// reads a fixed number of bytes per token cannot beat its ceiling however many streams run.
// B_max is measured again after the runs (on this VM it moves with the CPU load and the
// host's caching), and beside it the CPU ceiling: the machine's cores over the CPU time a
// token cost. A line of records per token says where the bytes went: records the steps
// demanded, found cached, guessed in time or read on demand; guesses read and never used;
// re-reads of records evicted in the same step or the one before.
//   bench_concurrent [--tokens N] [--mid-size SIZE] [--native-size SIZE] [--native-layout bf16|mxfp4]
//                    [--cache DIR] [--threads N] [--streams 1,2,4,8] [--prefill N] [--reps R] [--budgets io,native,compute]
//                    [--container DIR --budget SIZE [--ctx N]]
// Last line: the figures, and 4 streams' aggregate over one stream's at each I/O-bound budget,
// with the ceiling of that ratio (the ceiling at 4 streams over one stream's measured tok/s).
#include "expert_read_rate.hpp"
#include "format/manifest.hpp"
#include "mid_container.hpp"
#include "waste/batch.hpp"
#include "waste/prefix.hpp"
#include "waste/waste.hpp"

#include <sys/resource.h>

#include <chrono>
#include <algorithm>
#include <cstdio>
#include <map>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

// CPU seconds of the whole process (compute pool, readers and kernel time for the reads):
// on a shared machine wall time swings with the load, the CPU a token costs much less.
double cpuSeconds()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    auto secs = [](const timeval &t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
    return secs(u.ru_utime) + secs(u.ru_stime);
}

double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

const char *const kPrompts[] = {"The quick brown fox", "Once upon a time",    "In the beginning",
                                "A list of colours:",  "Dear diary, today",   "The recipe calls for",
                                "Breaking news:",      "def fibonacci(n):"};

struct Run {
    double aggregate = 0; // tok/s over all streams
    int tokens = 0;
    double hitRate = 0;
    double mbPerStep = 0;
    double mbPerToken = 0;
    double cpuMsPerToken = 0;
    double msPerStep = 0;   // wall time of one step (every stream's token)
    double ioMsPerStep = 0; // of that, time the step waited for expert reads
    double missesPerStep = 0, guessesPerStep = 0, guessesUsedPerStep = 0; // demand misses, lookahead reads, of those used
    // Per token sampled: the records the steps demanded (each once per step), of those found
    // in the cache without a guess, demand reads, guesses read and used, re-reads of records
    // evicted in the same step or the one before.
    double usesPerToken = 0, cacheHitsPerToken = 0, missesPerToken = 0, guessesPerToken = 0, guessesUsedPerToken = 0,
           rereadsPerToken = 0;
};

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

Run decodeTogether(waste::Model &model, int streams, int tokens)
{
    waste::Batch batch(model);
    int started = 0, counted = 0;
    double allStarted = 0, cpuStarted = 0;
    for (int i = 0; i < streams; ++i) {
        waste::Batch::Request r;
        r.prompt = model.tokenize(kPrompts[i % 8], true);
        r.params.maxTokens = tokens;
        r.useSession = i == 0;
        r.onToken = [&](const waste::TokenEvent &ev) {
            if (ev.index == 0) {
                if (++started == streams) {
                    allStarted = now();
                    cpuStarted = cpuSeconds();
                }
            } else if (started == streams) {
                ++counted;
            }
            return true;
        };
        batch.add(std::move(r));
    }
    waste::Stats first{};
    int steps = 0;
    while (batch.active() > 0) {
        const bool wasStarted = started == streams;
        for (const waste::Batch::Ended &e : batch.step())
            if (e.failed) // a broken container must not pass for a slow one
                throw waste::Error(e.code, "stream " + std::to_string(e.id) + " failed: " + e.message);
        if (!wasStarted && started == streams)
            first = model.stats();
        else if (wasStarted)
            ++steps;
    }
    const double secs = now() - allStarted, cpu = cpuSeconds() - cpuStarted;
    const waste::Stats last = model.stats();
    model.resetState();
    Run r;
    r.tokens = counted;
    r.aggregate = secs > 0 ? counted / secs : 0;
    r.cpuMsPerToken = counted > 0 ? 1000 * cpu / counted : 0;
    const int64_t hits = last.demandHits - first.demandHits, misses = last.demandMisses - first.demandMisses;
    r.hitRate = hits + misses > 0 ? double(hits) / double(hits + misses) : 1.0;
    r.mbPerStep = steps > 0 ? double(last.bytesRead - first.bytesRead) / 1e6 / steps : 0;
    r.mbPerToken = counted > 0 ? double(last.bytesRead - first.bytesRead) / 1e6 / counted : 0;
    r.msPerStep = steps > 0 ? 1000 * secs / steps : 0;
    r.ioMsPerStep = steps > 0 ? 1000 * (last.secondsIoWait - first.secondsIoWait) / steps : 0;
    r.missesPerStep = steps > 0 ? double(misses) / steps : 0;
    r.guessesPerStep = steps > 0 ? double(last.speculativeFills - first.speculativeFills) / steps : 0;
    r.guessesUsedPerStep = steps > 0 ? double(last.lookaheadUseful - first.lookaheadUseful) / steps : 0;
    if (counted > 0) {
        const double k = 1.0 / counted, used = double(last.lookaheadUseful - first.lookaheadUseful);
        r.usesPerToken = k * double(hits + misses);
        r.cacheHitsPerToken = k * (double(hits) - used);
        r.missesPerToken = k * double(misses);
        r.guessesPerToken = k * double(last.speculativeFills - first.speculativeFills);
        r.guessesUsedPerToken = k * used;
        r.rereadsPerToken = k * double(last.rereads - first.rereads);
    }
    return r;
}

// The disk's ceiling for this container's reads: random whole records of every bank, read
// by the engine's reader into the cache's slot layout, at each depth for about `seconds`.
struct Ceiling {
    std::vector<std::pair<int, double>> gbPerSecond; // depth, GB/s
    double best = 0;
    int bestDepth = 0;
};

Ceiling diskCeiling(const std::string &dir, const std::vector<int> &depths, bool ring, double seconds)
{
    std::ifstream in(dir + "/manifest.json");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const waste::format::Manifest m = waste::format::parseManifest(text, dir + "/manifest.json");
    std::vector<std::unique_ptr<waste::io::DirectFile>> files;
    std::vector<waste::format::BankEntry> banks;
    int64_t recordBytes = 0; // the largest, as the cache's slots
    for (const auto &[layer, bank] : m.banks) {
        recordBytes = std::max(recordBytes, bank.recordBytes);
        files.push_back(std::make_unique<waste::io::DirectFile>(dir + "/" + bank.file));
        if (!files.back()->directIo())
            throw waste::Error(waste::ErrorCode::Io, "disk ceiling: " + files.back()->warning());
        banks.push_back(bank);
    }
    if (files.empty())
        throw waste::Error(waste::ErrorCode::Format, dir + ": no expert banks");
    // More reads than ~2 s can take at 10 GB/s; the time limit ends the run.
    const size_t count = size_t(20e9 * seconds / double(recordBytes)) + 64;
    std::vector<RecordRead> reads;
    uint64_t x = 88172645463325252ull;
    auto next = [&] { return x ^= x << 13, x ^= x >> 7, x ^= x << 17; };
    for (size_t i = 0; i < count; ++i) {
        const size_t f = size_t(next() % files.size());
        reads.push_back({files[f].get(), int64_t(next() % uint64_t(banks[f].experts)) * banks[f].recordBytes,
                         banks[f].recordBytes});
    }
    const auto backend = ring ? waste::io::ReaderPool::Backend::Ring : waste::io::ReaderPool::Backend::Threads;
    Ceiling c;
    for (int d : depths) {
        const double gb = engineReadRate(reads, recordBytes, d, ReadBuffers::CacheSlots, seconds, backend).gbPerSecond();
        c.gbPerSecond.emplace_back(d, gb);
        if (gb > c.best) {
            c.best = gb;
            c.bestDepth = d;
        }
    }
    return c;
}

// One N-token prompt read alone (then one token sampled); seconds and CPU seconds of the read.
std::pair<double, double> prefillOnce(waste::Model &model, const std::vector<int32_t> &prompt)
{
    waste::Batch batch(model);
    waste::Batch::Request r;
    r.prompt = prompt;
    r.params.maxTokens = 1;
    r.useSession = true;
    const double t0 = now(), c0 = cpuSeconds();
    double t1 = 0, c1 = 0;
    r.onPrefill = [&](int read, int total) {
        if (read == total) {
            t1 = now();
            c1 = cpuSeconds();
        }
        return true;
    };
    batch.add(std::move(r));
    while (batch.active() > 0)
        batch.step();
    model.resetState();
    return {t1 - t0, c1 - c0};
}

void benchPrefill(const std::string &dir, int tokens, int threads)
{
    const int ctx = tokens + 16;
    const waste::MemoryPlan plan = waste::planMemory(dir, ctx);
    waste::OpenOptions o;
    o.threads = threads;
    o.ctxTokens = ctx;
    o.ramBudget = plan.floor_bytes + plan.checkpoint_bytes + plan.expert_bytes_total + 4 * plan.max_record_bytes;
    o.warmFromUsage = false;
    auto model = waste::openForBatch(dir, waste::withEnvironment(o), 1);
    std::vector<int32_t> prompt;
    for (int i = 0; int(prompt.size()) < tokens; ++i) {
        const std::vector<int32_t> more = model->tokenize(kPrompts[i % 8], i == 0);
        prompt.insert(prompt.end(), more.begin(), more.end());
    }
    prompt.resize(size_t(tokens));
    prefillOnce(*model, prompt); // fills the expert cache
    for (int rep = 0; rep < 2; ++rep) {
        const auto [secs, cpu] = prefillOnce(*model, prompt);
        std::printf("prefill        %d tokens: %.1f tok/s (%.2f CPU ms per token)\n", tokens, tokens / secs,
                    1000 * cpu / tokens);
    }
}

} // namespace

int main(int argc, char **argv)
{
    std::string cacheDir = WASTE_BENCH_CACHE_DIR;
    std::string midSize = "10G", nativeSize = "1400M", nativeLayout = "mxfp4"; // 2.0 and 1.5 GB of records
    int tokens = 32, threads = 2, prefill = 0, reps = 1, ctx = 256;
    std::string container;
    int64_t fixedBudget = 0;
    bool runIo = true, runNative = true, runCompute = true;
    std::vector<int> counts = {1, 2, 4, 8};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--tokens" && i + 1 < argc) {
            tokens = std::atoi(argv[++i]);
        } else if (a == "--mid-size" && i + 1 < argc) {
            midSize = argv[++i];
        } else if (a == "--native-size" && i + 1 < argc) {
            nativeSize = argv[++i];
        } else if (a == "--native-layout" && i + 1 < argc) {
            nativeLayout = argv[++i];
        } else if (a == "--cache" && i + 1 < argc) {
            cacheDir = argv[++i];
        } else if (a == "--threads" && i + 1 < argc) {
            threads = std::atoi(argv[++i]);
        } else if (a == "--prefill" && i + 1 < argc) {
            prefill = std::atoi(argv[++i]);
        } else if (a == "--reps" && i + 1 < argc) {
            reps = std::atoi(argv[++i]);
        } else if (a == "--budgets" && i + 1 < argc) {
            const std::string b = argv[++i];
            runIo = b.find("io") != std::string::npos;
            runNative = b.find("native") != std::string::npos;
            runCompute = b.find("compute") != std::string::npos;
        } else if (a == "--container" && i + 1 < argc) {
            container = argv[++i];
        } else if (a == "--budget" && i + 1 < argc) {
            fixedBudget = waste::parseSize(argv[++i]);
        } else if (a == "--ctx" && i + 1 < argc) {
            ctx = std::atoi(argv[++i]);
        } else if (a == "--streams" && i + 1 < argc) {
            counts.clear();
            std::stringstream in(argv[++i]);
            for (std::string n; std::getline(in, n, ',');)
                counts.push_back(std::atoi(n.c_str()));
        } else {
            std::fprintf(stderr, "usage: bench_concurrent [--tokens N] [--mid-size SIZE] [--native-size SIZE] "
                                 "[--native-layout bf16|mxfp4] [--cache DIR] "
                                 "[--threads N] [--streams 1,2,4,8] [--prefill N] [--reps R] [--budgets io,native,compute] "
                                 "[--container DIR --budget SIZE [--ctx N]]\n");
            return 2;
        }
    }
    if (!container.empty() != (fixedBudget > 0)) {
        std::fprintf(stderr, "bench_concurrent: --container and --budget go together\n");
        return 2;
    }
    if (!container.empty())
        runIo = true, runNative = runCompute = false;
    if (tokens < 2 || threads < 1 || ctx < 64 || counts.empty() || reps < 1 || (!runIo && !runNative && !runCompute)) {
        std::fprintf(stderr, "bench_concurrent: --tokens needs at least 2, --threads and --reps at least 1, --streams a "
                             "list, --budgets one or more of io, native, compute\n");
        return 2;
    }
    try {
        int most = 1;
        for (int n : counts)
            most = std::max(most, std::min(n, waste::kMaxSequences));
        struct Case {
            const char *name;
            bool io;       // a budget with a few records of cache: the 4-over-1 ratio is reported
            bool native;   // the native MXFP4 container
        };
        std::vector<Case> cases;
        if (runIo)
            cases.push_back({"I/O-bound", true, false});
        if (runNative)
            cases.push_back({"I/O-bound native", true, true});
        if (runCompute)
            cases.push_back({"compute-bound", false, false});
        std::string last, ratiosText;
        for (const Case &c : cases) {
            const std::string dir = !container.empty() ? container
                                    : c.native         ? midContainer(cacheDir, nativeSize, nativeLayout)
                                                       : midContainer(cacheDir, midSize);
            const waste::MemoryPlan plan = waste::planMemory(dir, ctx);
            // Extra states take at most half the cache above its smallest size: twice their bytes;
            // the session's checkpoint (waste/prefix.hpp) comes out of the cache first.
            const int64_t states = 2 * int64_t(most - 1) * plan.state_bytes + plan.checkpoint_bytes;
            const int64_t budget = fixedBudget > 0 ? fixedBudget
                                                   : plan.floor_bytes + states + (c.io ? 0 : plan.expert_bytes_total) +
                                                         4 * plan.max_record_bytes;
            std::printf("container      %s (%lld MB of experts, %lld KB a record, state %.1f MB per stream at ctx %d, %d "
                        "threads)\n",
                        dir.c_str(), (long long)(plan.expert_bytes_total >> 20), (long long)(plan.max_record_bytes >> 10),
                        plan.state_bytes / 1e6, ctx, threads);
            waste::OpenOptions o;
            o.threads = threads;
            o.ctxTokens = ctx;
            o.ramBudget = budget;
            o.warmFromUsage = false;
            auto model = waste::openForBatch(dir, waste::withEnvironment(o), most);
            std::printf("%-14s budget %lld MB, expert cache %lld MB, %d full-context streams, reads through %s\n", c.name,
                        (long long)(budget >> 20), (long long)(model->info().expertCacheBytes >> 20),
                        waste::batchSequences(*model), model->stats().ioRing ? "io_uring" : "reader threads");
            {
                // Every count must run at once: a stream's state is sized to its prompt and tokens.
                waste::Batch probe(*model);
                std::vector<waste::Batch::Request> held;
                for (int i = 0; i < most; ++i) {
                    waste::Batch::Request r;
                    r.prompt = model->tokenize(kPrompts[i % 8], true);
                    if (!probe.admits(r.prompt.size(), tokens, i == 0))
                        throw waste::Error(waste::ErrorCode::RamBudget,
                                           std::to_string(i + 1) + " streams do not fit the " + c.name + " budget");
                    r.params.maxTokens = tokens;
                    r.useSession = i == 0;
                    probe.add(std::move(r));
                }
            }
            model->resetState();
            if (!c.io)
                decodeTogether(*model, most, tokens); // fills the cache
            Ceiling ceiling;
            if (c.io) {
                // Depths: one read, one stream's misses in a layer (top-k), 8, and a 4-stream
                // step's (4 x top-k, as many as the engine's readers allow: model_impl.cpp).
                const int topK = std::max(1, model->info().topK);
                std::vector<int> depths = {1, topK, 8, std::min(16, 4 * topK)};
                std::sort(depths.begin(), depths.end());
                depths.erase(std::unique(depths.begin(), depths.end()), depths.end());
                ceiling = diskCeiling(dir, depths, model->stats().ioRing, 1.5);
                std::string t;
                for (const auto &[d, gb] : ceiling.gbPerSecond) {
                    char buf[64];
                    std::snprintf(buf, sizeof buf, "%s%d: %.2f", t.empty() ? "" : ", ", d, gb);
                    t += buf;
                }
                std::printf("  disk ceiling  engine reader, random whole records into cache-layout slots, GB/s at reads in "
                            "flight %s; B_max %.2f GB/s\n",
                            t.c_str(), ceiling.best);
            }
            std::map<int, std::vector<Run>> runs;
            std::vector<double> ratios;
            for (int rep = 0; rep < reps; ++rep) {
                for (int n : counts) {
                    const Run r = decodeTogether(*model, n, tokens);
                    std::printf("  %d stream%s   %.2f tok/s aggregate (%d tokens, hit rate %.0f %%, %.1f MB read per step, "
                                "%.1f ms per step of which %.1f (%.0f %%) waiting for reads, %.2f CPU ms per token; per step %.1f demand "
                                "misses, %.1f lookahead reads, %.1f of them used)\n",
                                n, n == 1 ? " " : "s", r.aggregate, r.tokens, 100 * r.hitRate, r.mbPerStep, r.msPerStep,
                                r.ioMsPerStep, r.msPerStep > 0 ? 100 * r.ioMsPerStep / r.msPerStep : 0.0, r.cpuMsPerToken,
                                r.missesPerStep, r.guessesPerStep, r.guessesUsedPerStep);
                    runs[n].push_back(r);
                }
                if (runs.count(1) && runs.count(4) && runs[1].back().aggregate > 0)
                    ratios.push_back(runs[4].back().aggregate / runs[1].back().aggregate);
            }
            last += std::string(last.empty() ? "" : " | ") + c.name + ":";
            if (reps > 1)
                std::printf("  medians of %d repetitions:\n", reps);
            for (int n : counts) {
                std::vector<double> agg, cpu, step, wait;
                for (const Run &r : runs[n]) {
                    agg.push_back(r.aggregate);
                    cpu.push_back(r.cpuMsPerToken);
                    step.push_back(r.msPerStep);
                    wait.push_back(r.ioMsPerStep);
                }
                if (reps > 1)
                    std::printf("  %d stream%s   %.2f tok/s aggregate (range %.2f-%.2f), %.1f ms per step of which %.1f "
                                "(%.0f %%) waiting for reads, %.2f CPU ms per token\n",
                                n, n == 1 ? " " : "s", median(agg), *std::min_element(agg.begin(), agg.end()),
                                *std::max_element(agg.begin(), agg.end()), median(step), median(wait),
                                median(step) > 0 ? 100 * median(wait) / median(step) : 0.0, median(cpu));
                char buf[96];
                std::snprintf(buf, sizeof buf, " %d:%.1f (%.1f ms CPU)", n, median(agg), median(cpu));
                last += buf;
            }
            double ceilingAt4 = 0;
            if (c.io && ceiling.best > 0) {
                // Measured again after the runs: on this VM the rate moves with the CPU load
                // (and the host's caching), so a drift says how far to trust the ceiling.
                const double after = diskCeiling(dir, {ceiling.bestDepth}, model->stats().ioRing, 1.5).best;
                const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
                std::printf("  ceiling at B_max %.2f GB/s (%.2f at %d in flight after the runs; medians; CPU ceiling = %u "
                            "cores / CPU time per token):\n",
                            ceiling.best, after, ceiling.bestDepth, cores);
                for (int n : counts) {
                    std::vector<double> agg, mb, uses, cached, misses, guesses, used, rereads, cpu;
                    for (const Run &r : runs[n]) {
                        agg.push_back(r.aggregate);
                        cpu.push_back(r.cpuMsPerToken);
                        mb.push_back(r.mbPerToken);
                        uses.push_back(r.usesPerToken);
                        cached.push_back(r.cacheHitsPerToken);
                        misses.push_back(r.missesPerToken);
                        guesses.push_back(r.guessesPerToken);
                        used.push_back(r.guessesUsedPerToken);
                        rereads.push_back(r.rereadsPerToken);
                    }
                    const double top = median(mb) > 0 ? ceiling.best * 1e3 / median(mb) : 0;
                    if (n == 4)
                        ceilingAt4 = top;
                    std::printf("  %d stream%s   %.2f MB read per token, ceiling %.1f tok/s, measured %.1f = %.0f %% of it (CPU "
                                "ceiling %.1f tok/s)\n",
                                n, n == 1 ? " " : "s", median(mb), top, median(agg), top > 0 ? 100 * median(agg) / top : 0.0,
                                median(cpu) > 0 ? 1e3 * cores / median(cpu) : 0.0);
                    std::printf("                records per token: %.1f demanded (%.1f cached, %.1f guessed in time, %.1f demand "
                                "reads), %.1f guesses read (%.1f never used), %.1f re-reads of records evicted that step or "
                                "the last\n",
                                median(uses), median(cached), median(used), median(misses), median(guesses),
                                median(guesses) - median(used), median(rereads));
                }
            }
            if (c.io && !ratios.empty()) {
                std::string t;
                for (double x : ratios)
                    t += (t.empty() ? "" : ", ") + std::to_string(x).substr(0, 4);
                if (reps > 1)
                    std::printf("  4 streams over one, per repetition: %s (median %.2f, range %.2f-%.2f)\n", t.c_str(),
                                median(ratios), *std::min_element(ratios.begin(), ratios.end()),
                                *std::max_element(ratios.begin(), ratios.end()));
                std::vector<double> one;
                for (const Run &r : runs[1])
                    one.push_back(r.aggregate);
                char buf[160];
                if (ceilingAt4 > 0 && median(one) > 0)
                    std::snprintf(buf, sizeof buf, "%s 4 streams = %.2f x one (ceiling %.2f x)", c.name, median(ratios),
                                  ceilingAt4 / median(one));
                else
                    std::snprintf(buf, sizeof buf, "%s 4 streams = %.2f x one", c.name, median(ratios));
                ratiosText += std::string(ratiosText.empty() ? "" : ", ") + buf;
            }
        }
        if (prefill > 0)
            benchPrefill(midContainer(cacheDir, midSize), prefill, threads);
        std::printf("concurrent tok/s %s | %s%s\n", last.c_str(), ratiosText.c_str(),
                    reps > 1 ? " (medians of the repetitions' ratios)" : "");
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench_concurrent: %s\n", e.what());
        return 1;
    }
    return 0;
}
