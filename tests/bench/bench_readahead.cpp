// Read-ahead: how close streamed decode comes to the larger of its two floors.
//   bench_readahead [CONTAINER] [--tokens N] [--rounds R] [--extra-slots K[,K...]] [--threads T]
//
// CONTAINER (default: a benchmark-scale tiny model in the temp folder, made by
// makeTinyContainer --size 64M on first use, about a minute) is decoded N teacher-forced
// tokens (default 32; the same ids in every arm, so every arm routes identically) after
// a short prompt. Arms, interleaved R times (default 5, median reported), each in a fresh
// open (the open drops the banks' page cache; reads are O_DIRECT when direct_io is true):
//   streamed      budget = floor + K records, read-ahead and router lookahead on: experts
//                 stream from disk. K: each of a list (default top-k, 2 top-k and one
//                 working set, top-k x MoE layers): the first is the balanced setting, where
//                 the disk time the reads need is close to the compute time (the hardest
//                 case for overlap), the others show how the gap closes as the cache grows;
//   synchronous   the same budget, one read at a time (read-ahead and lookahead off);
//   compute only  every record cached beforehand (a warm-up pass), zero misses;
//   I/O only      the reads the streamed run needs (its routing replayed through the same
//                 cache: the demand misses) on the same reader threads, no compute, all
//                 queued up front so no thread idles between layers: the least time these
//                 bytes take. Layer by layer as the engine issues them is printed beside it
//                 (it waits for a layer's last read before the next layer's first).
// T: compute threads (default 1; 0 = the engine's one per core). One, because on a shared
// machine a multi-threaded compute-only arm gets less CPU than the streamed arm (which
// sleeps on reads and is woken first): its CPU time is half its wall time under load,
// which would flatter the ratio.
// Last line: streamed time vs max(I/O only, compute only) at each budget, the first
// (balanced) one first; goal <= 1.15. The decode arms' times there exclude the compute thread's run-queue delay (time runnable with no CPU, from
// /proc/thread-self/schedstat): under load the never-sleeping compute-only arm gets much
// less CPU than the streamed arm, so raw wall times flatter streaming; the raw wall ratios
// are printed in each budget's block.
#include "cache/expert_cache.hpp"
#include "cache/routing_trace.hpp"
#include "cache/usage_record.hpp"
#include "waste/usage_paths.hpp"
#include "io/aligned_buffer.hpp"
#include "io/direct_file.hpp"
#include "io/reader_pool.hpp"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <time.h>

namespace fs = std::filesystem;
using namespace waste;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

double cpuNow()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Seconds this thread has spent runnable but waiting for a CPU (the kernel's run-queue
// delay, /proc/thread-self/schedstat); -1 where the kernel does not say.
double runQueueSeconds()
{
    FILE *f = std::fopen("/proc/thread-self/schedstat", "r");
    if (!f)
        return -1;
    unsigned long long onCpu = 0, waiting = 0;
    const int got = std::fscanf(f, "%llu %llu", &onCpu, &waiting);
    std::fclose(f);
    return got == 2 ? double(waiting) * 1e-9 : -1;
}

struct Run {
    double seconds = 0;
    double queued = 0;     // of those, the compute thread's run-queue delay (it had no CPU)
    double cpuSeconds = 0; // CPU time of the whole process (compute pool and readers)
    Stats stats;
};

struct Setup {
    std::string container;
    std::vector<int32_t> prompt;
    std::vector<int32_t> decode; // teacher-forced ids
};

// Prefill (untimed), then the decode ids one at a time (timed); stats cover the decode.
Run decodeRun(const Setup &s, OpenOptions o, bool warmFirst = false, const std::string &usage = {})
{
    o.warmFromUsage = false;
    if (!usage.empty())
        o.usagePath = usage;
    auto m = Model::open(s.container, withEnvironment(o));
    if (warmFirst) { // every record the decode needs is read once here
        m->eval(s.prompt);
        for (int32_t id : s.decode)
            m->eval(std::span<const int32_t>(&id, 1));
        m->resetState();
    }
    m->eval(s.prompt);
    const Stats before = m->stats();
    const double t0 = now(), c0 = cpuNow(), q0 = runQueueSeconds();
    for (int32_t id : s.decode)
        m->eval(std::span<const int32_t>(&id, 1));
    Run r;
    r.seconds = now() - t0;
    r.queued = q0 < 0 ? 0 : runQueueSeconds() - q0;
    r.cpuSeconds = cpuNow() - c0;
    const Stats after = m->stats();
    r.stats = after;
    r.stats.demandHits = after.demandHits - before.demandHits;
    r.stats.demandMisses = after.demandMisses - before.demandMisses;
    r.stats.bytesRead = after.bytesRead - before.bytesRead;
    r.stats.secondsIoWait = after.secondsIoWait - before.secondsIoWait;
    r.stats.speculativeFills = after.speculativeFills - before.speculativeFills;
    r.stats.lookaheadPredicted = after.lookaheadPredicted - before.lookaheadPredicted;
    r.stats.lookaheadCorrect = after.lookaheadCorrect - before.lookaheadCorrect;
    if (!usage.empty())
        m->saveUsage();
    return r;
}

struct Bank {
    int layer = 0;
    std::unique_ptr<io::DirectFile> file;
    int64_t recordBytes = 0;
};

// The demand misses of `routing` through a cache of `slots` (no speculation), per pass
// and layer: what the streamed run has to read.
std::vector<std::vector<std::vector<int>>> neededReads(const cache::RoutingTrace &routing, int slots)
{
    cache::CacheConfig cfg;
    cfg.slots = slots;
    cfg.layers = routing.layers;
    cfg.experts = routing.experts;
    cfg.allocate = false;
    cache::ExpertCache c(cfg);
    std::vector<std::vector<std::vector<int>>> reads;
    for (const auto &tok : routing.tokens) {
        c.beginToken();
        reads.emplace_back(tok.size());
        for (size_t l = 0; l < tok.size(); ++l) {
            c.beginLayer(int(l), tok[l]);
            std::vector<int> held;
            for (int e : tok[l]) {
                auto ref = c.acquire(int(l), e);
                if (ref.mustRead) {
                    c.filled(ref.slot, true, 0);
                    reads.back()[l].push_back(e);
                }
                held.push_back(ref.slot);
            }
            for (int slot : held)
                c.release(slot);
        }
    }
    return reads;
}

// I/O only: the reads on the reader threads. layered: layer by layer, all of a layer's at
// once, as the engine issues them; otherwise every read queued up front (the threads never
// idle between layers: the least time these bytes take with these threads).
double replayReads(const std::vector<Bank> &banks, const std::vector<std::vector<std::vector<int>>> &reads,
                   int threads, int64_t &bytes, bool layered)
{
    int64_t maxRecord = 0;
    for (const Bank &b : banks)
        maxRecord = std::max(maxRecord, b.recordBytes);
    std::vector<io::AlignedBuffer> buffers;
    for (int i = 0; i < 64; ++i)
        buffers.emplace_back(maxRecord);
    io::ReaderPool pool(threads);
    bytes = 0;
    int i = 0; // buffer index: at most 48 reads in flight into 64 buffers
    const double t0 = now();
    for (const auto &pass : reads)
        for (size_t l = 0; l < pass.size() && l < banks.size(); ++l) {
            for (int e : pass[l]) {
                pool.submit(io::readJob(banks[l].file.get(), int64_t(e) * banks[l].recordBytes, banks[l].recordBytes,
                                        buffers[size_t(i++ % 64)].data(), 0));
            }
            while (layered || pool.outstanding() > 48) {
                auto d = pool.next();
                if (!d)
                    break;
                if (!d->ok) {
                    std::fprintf(stderr, "bench_readahead: %s\n", d->error.c_str());
                    std::exit(1);
                }
                bytes += d->bytes;
            }
        }
    while (auto d = pool.next())
        bytes += d->ok ? d->bytes : 0;
    return now() - t0;
}

std::string defaultContainer()
{
    const fs::path dir = fs::temp_directory_path() / "waste-bench-readahead-64M.waste";
    if (!fs::exists(dir / "manifest.json")) {
        std::fprintf(stderr, "bench_readahead: making %s (once, about a minute)...\n", dir.c_str());
        TinyModelOptions o;
        o.targetBytes = int64_t(64) << 20;
        fs::remove_all(dir);
        makeTinyContainer(dir.string(), o);
    }
    return dir.string();
}

} // namespace

int main(int argc, char **argv)
{
    std::string container, extraList;
    int tokens = 32, rounds = 5, threads = 1;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--tokens") == 0 && i + 1 < argc)
            tokens = std::atoi(argv[++i]);
        else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = std::atoi(argv[++i]);
        else if (std::strcmp(argv[i], "--extra-slots") == 0 && i + 1 < argc)
            extraList = argv[++i];
        else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = std::atoi(argv[++i]);
        else
            container = argv[i];
    }
    try {
        if (container.empty())
            container = defaultContainer();
        const MemoryPlan plan = planMemory(container);
        std::vector<int> extras;
        for (size_t p = 0; p < extraList.size();) {
            const size_t comma = std::min(extraList.find(',', p), extraList.size());
            extras.push_back(std::atoi(extraList.substr(p, comma - p).c_str()));
            p = comma + 1;
        }
        if (extras.empty())
            extras = {int(plan.top_k), int(2 * plan.top_k), int(plan.top_k * plan.moe_layers)};
        Setup s;
        s.container = container;
        int vocab = 0;
        {
            auto m = Model::open(container);
            vocab = m->info().vocab;
            s.prompt = m->tokenize("The quick brown fox");
        }
        for (int i = 0; i < tokens; ++i)
            s.decode.push_back(int32_t((i * 7919 + 13) % std::max(vocab - 16, 1)));

        OpenOptions all;
        all.threads = threads;
        all.ramBudget = plan.floor_bytes + plan.expert_bytes_total + (int64_t(16) << 20);

        // Routing of this decode (identical in every arm: logits do not depend on streaming).
        const fs::path usage = fs::temp_directory_path() / "waste-bench-readahead-usage.waste";
        decodeRun(s, all, false, usage.string());
        cache::RoutingTrace routing = cache::loadRoutingTrace(waste::routingRecordPath(usage.string()));
        if (routing.tokens.size() > size_t(tokens)) // the prompt's own pass, if recorded
            routing.tokens.erase(routing.tokens.begin(), routing.tokens.end() - tokens);

        std::vector<Bank> banks;
        {
            std::map<int, fs::path> files;
            const std::regex re("experts-L([0-9]+)\\.bin");
            for (const auto &entry : fs::directory_iterator(container)) {
                std::smatch m;
                const std::string name = entry.path().filename().string();
                if (std::regex_match(name, m, re))
                    files[std::stoi(m[1])] = entry.path();
            }
            for (const auto &[layer, path] : files) {
                Bank b;
                b.layer = layer;
                b.file = std::make_unique<io::DirectFile>(path.string());
                b.recordBytes = plan.max_record_bytes;
                banks.push_back(std::move(b));
            }
        }
        // The engine's reader count: WASTE_IO_THREADS when set, else one per expert of a token.
        const int envReaders = withEnvironment(OpenOptions{}).ioThreads;
        const int readers = envReaders >= 0 ? envReaders : std::clamp(int(plan.top_k), 2, 16);

        // One budget's arms and their medians.
        struct Budget {
            int extra = 0, slots = 0;
            OpenOptions streamed, sync;
            std::vector<std::vector<std::vector<int>>> reads;
            int64_t nReads = 0, ioBytes = 0;
            std::vector<double> tStream, tSync, tIo, tIoLayered, cStream, wStream, oStream;
            Run last;
        };
        std::vector<Budget> budgets;
        for (int extra : extras) {
            Budget b;
            b.extra = extra;
            b.streamed.threads = threads;
            b.streamed.ramBudget = plan.floor_bytes + int64_t(extra) * plan.max_record_bytes;
            b.sync = b.streamed;
            b.sync.readAhead = false;
            b.sync.lookahead = false;
            b.slots = int((b.streamed.ramBudget - plan.floor_bytes + plan.min_expert_cache) / plan.max_record_bytes);
            b.reads = neededReads(routing, b.slots);
            for (const auto &p : b.reads)
                for (const auto &l : p)
                    b.nReads += int64_t(l.size());
            budgets.push_back(std::move(b));
        }
        auto freshBanks = [&] { // drop what the last arms left cached, as a fresh open does
            for (Bank &bank : banks)
                bank.file = std::make_unique<io::DirectFile>(bank.file->path());
        };

        std::vector<double> tCompute, cCompute, oCompute;
        Run lastCompute;
        for (int r = 0; r < rounds; ++r) {
            lastCompute = decodeRun(s, all, true);
            tCompute.push_back(lastCompute.seconds);
            oCompute.push_back(lastCompute.seconds - lastCompute.queued);
            cCompute.push_back(lastCompute.cpuSeconds);
            for (Budget &b : budgets) {
                b.last = decodeRun(s, b.streamed);
                b.tStream.push_back(b.last.seconds);
                b.oStream.push_back(b.last.seconds - b.last.queued);
                b.cStream.push_back(b.last.cpuSeconds);
                b.wStream.push_back(b.last.stats.secondsIoWait);
                b.tSync.push_back(decodeRun(s, b.sync).seconds);
                freshBanks();
                b.tIo.push_back(replayReads(banks, b.reads, readers, b.ioBytes, false));
                freshBanks();
                b.tIoLayered.push_back(replayReads(banks, b.reads, readers, b.ioBytes, true));
            }
        }
        const double ms = 1000.0 / tokens;
        const double compute = median(tCompute), ownCompute = median(oCompute);
        std::printf("container %s: %lld MoE layers, top-%lld, record %lld B, %d tokens, %d reader threads, direct_io %s\n",
                    container.c_str(), (long long)plan.moe_layers, (long long)plan.top_k,
                    (long long)plan.max_record_bytes, tokens, readers,
                    budgets.front().last.stats.directIo && banks.front().file->directIo() ? "true" : "false");
        std::printf("%-14s %9.2f %9.3f   misses %lld, CPU %.2f ms/token (median of %d, every budget)\n", "compute only",
                    compute * ms, compute, (long long)lastCompute.stats.demandMisses, median(cCompute) * ms, rounds);
        std::string summary;
        for (const Budget &b : budgets) {
            const Stats &st = b.last.stats;
            const double stream = median(b.tStream), syn = median(b.tSync), io = median(b.tIo);
            std::printf("\nbudget floor + %d records = %d cache slots: demand misses %lld (replayed without guesses %lld), "
                        "hit rate %.1f%%, lookahead %lld/%lld right, %lld speculative reads (%lld used): %lld reads in all\n",
                        b.extra, b.slots, (long long)st.demandMisses, (long long)b.nReads,
                        100.0 * double(st.demandHits) / double(std::max<int64_t>(1, st.demandHits + st.demandMisses)),
                        (long long)st.lookaheadCorrect, (long long)st.lookaheadPredicted, (long long)st.speculativeFills,
                        (long long)st.lookaheadUseful, (long long)(st.demandMisses + st.speculativeFills));
            std::printf("%-14s %9s %9s   (median of %d, per token)\n", "arm", "ms/token", "s total", rounds);
            std::printf("%-14s %9.2f %9.3f   waiting on reads %.2f ms/token, CPU %.2f ms/token\n", "streamed",
                        stream * ms, stream, median(b.wStream) * ms, median(b.cStream) * ms);
            std::printf("%-14s %9.2f %9.3f\n", "synchronous", syn * ms, syn);
            std::printf("%-14s %9.2f %9.3f   %.2f GB/s, every read queued up front (layer by layer, as issued: %.2f ms/token)\n",
                        "I/O only", io * ms, io, double(b.ioBytes) / io / 1e9, median(b.tIoLayered) * ms);
            // On a shared machine the wall times are not comparable: the compute-only arm
            // never sleeps, so the scheduler gives it less CPU than the streamed arm (which
            // sleeps on reads and is woken first); under load its wall time doubles and the
            // wall ratio flatters streaming. The figure therefore takes each decode arm's
            // wall time less the time its compute thread sat runnable without a CPU, i.e. the
            // time it would take on a core of its own. Reader threads' delays stay in
            // (against the streamed arm).
            const double ownStream = median(b.oStream);
            std::printf("wall ratio %.2fx: streamed %.2f vs max(I/O only %.2f, compute only %.2f); compute thread "
                        "without a CPU: streamed %.2f, compute only %.2f ms/token\n",
                        stream / std::max(io, compute), stream * ms, io * ms, compute * ms, (stream - ownStream) * ms,
                        (compute - ownCompute) * ms);
            char line[256];
            std::snprintf(line, sizeof line, "%s+%d: %.2f vs max(%.2f, %.2f) = %.2fx", summary.empty() ? "" : "; ",
                          b.extra, ownStream * ms, io * ms, ownCompute * ms, ownStream / std::max(io, ownCompute));
            summary += line;
        }
        std::printf("\nstreamed vs max(I/O only, compute only) ms/token on a CPU of its own, by budget (floor + records): "
                    "%s (goal <= 1.15)\n",
                    summary.c_str());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench_readahead: %s\n", e.what());
        return 1;
    }
    return 0;
}
