// Prompt reading (prefill) against decode, and against the two limits a pass can reach.
//   bench_prefill [--container DIR]... [--budget SIZE]... [--tokens N,N,...] [--decode-tokens N]
//                 [--threads N] [--mid-size SIZE] [--cache DIR]
// Containers: each --container, else the mid-size one (mid_container.hpp, default 2G of source).
// Budgets: each --budget (default 160M and 4G); a budget below a container's floor is skipped.
// Prompts: --tokens (default 1024,4096,16384), random ids from the vocabulary (seeded), read
// by one Model::eval on a freshly opened model (a cold cache every time).
// For every container, in the same run:
//   decode tok/s at each budget (greedy, --decode-tokens, default 128, after a short prompt,
//   timed after the first quarter);
//   prefill tok/s for each prompt at each budget, the expert bytes it read against the
//   container's banks (1.0 = each record read once per pass), and the pass size the budget allows;
//   where a budget holds every expert, also the same prompt after an open that read them all
//   (as a person's open does, OpenOptions::loadEveryExpert), and the two together;
//   the disk limit: the banks' bytes at the disk's measured direct-read speed (the records in
//   bank order, 16 reads in flight, the reads a pass makes), i.e. the time to read each expert once;
//   the compute limit: the prompt's matrix FLOPs (2 per active weight per token, the embedding
//   and lm_head left out; attention scores added for full-attention layers) at the panel
//   kernel's measured throughput on all threads;
//   the kernel's GFLOP/s next to this machine's peak (an FMA loop with no memory traffic);
//   what `waste plan` predicts for the same prompt (waste::estimatePrefill, this machine's
//   calibration measured again in this run, the disk speed measured here), its compute and the
//   parts of that spent decoding expert panels, in linear attention, in dense attention and in the
//   vector work per token, and measured / predicted.
// --compare-mla: where a prompt's pass attended in MLA's expanded form (model/mla_form.hpp),
//   the same prompt again with the absorbed form forced and once more as the engine chooses, the
//   times side by side, and the logits' largest gap between the forms.
// Last line: prefill/decode at the largest prompt, per container and budget.
#include "compute/thread_pool.hpp"
#include "expert_read_rate.hpp"
#include "format/manifest.hpp"
#include "mid_container.hpp"
#include "model/forward.hpp"
#include "quant/panel_gemm.hpp"
#include "quant/simd.hpp"
#include "session/model_impl.hpp"
#include "waste/calibration.hpp"
#include "waste/waste.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace {

double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU time of the whole process (every thread), seconds: with the wall time it shows how
// much of a pass the cores sat idle.
double cpuNow()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

int hardwareThreads()
{
    return std::max(1u, std::thread::hardware_concurrency());
}

// Peak FMA throughput of one core, GFLOP/s: independent FMA chains on registers only.
#if defined(__x86_64__)
__attribute__((target("avx512f"))) double peakAvx512(long iters)
{
    __m512 acc[12];
    for (int i = 0; i < 12; ++i)
        acc[i] = _mm512_set1_ps(float(i) * 1e-3f);
    const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
    for (long n = 0; n < iters; ++n)
#pragma GCC unroll 12
        for (int i = 0; i < 12; ++i)
            acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    __m512 s = acc[0];
    for (int i = 1; i < 12; ++i)
        s = _mm512_add_ps(s, acc[i]);
    float out[16]; // not _mm512_reduce_add_ps: GCC 12 warns inside it (-Wuninitialized)
    _mm512_storeu_ps(out, s);
    return double(out[0]);
}
__attribute__((target("avx2,fma"))) double peakAvx2(long iters)
{
    __m256 acc[12];
    for (int i = 0; i < 12; ++i)
        acc[i] = _mm256_set1_ps(float(i) * 1e-3f);
    const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    for (long n = 0; n < iters; ++n)
#pragma GCC unroll 12
        for (int i = 0; i < 12; ++i)
            acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    __m256 s = acc[0];
    for (int i = 1; i < 12; ++i)
        s = _mm256_add_ps(s, acc[i]);
    float out[8];
    _mm256_storeu_ps(out, s);
    return double(out[0]);
}
#endif

// Per core, best of 3 (0 where no FMA path is known), at the level the kernels run
// (WASTE_BACKEND=avx2 on an AVX-512 CPU measures the AVX2 peak its kernels can reach).
double peakGflopsPerCore()
{
#if defined(__x86_64__)
    const waste::quant::SimdLevel level = waste::quant::activeSimd();
    const bool wide = level == waste::quant::SimdLevel::Avx512;
    if (!wide && level != waste::quant::SimdLevel::Avx2)
        return 0;
    const long iters = 20'000'000;
    double best = 0;
    volatile double sink = 0;
    for (int rep = 0; rep < 3; ++rep) {
        const double t0 = now();
        sink = sink + (wide ? peakAvx512(iters) : peakAvx2(iters));
        const double flops = double(iters) * 12 * (wide ? 16 : 8) * 2;
        best = std::max(best, flops / (now() - t0) / 1e9);
    }
    return best;
#else
    return 0;
#endif
}

// The panel kernel on `threads` threads: each multiplies `tokens` inputs of K values by its own
// panels, as a pass does for an expert's up projection. GFLOP/s, best of 3.
double panelGemmGflops(int threads, int K, int tokens)
{
    const auto gemm = waste::quant::panelGemm();
    const int panels = 16;
    std::vector<std::vector<float>> P(threads), X(threads), Y(threads);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (int t = 0; t < threads; ++t) {
        P[t].resize(size_t(panels) * K * waste::quant::kPanelRows);
        X[t].resize(size_t(tokens) * K);
        Y[t].resize(size_t(tokens) * waste::quant::kPanelRows * panels);
        for (float &v : P[t])
            v = u(rng);
        for (float &v : X[t])
            v = u(rng);
    }
    const int reps = 8;
    double best = 0;
    for (int round = 0; round < 3; ++round) {
        const double t0 = now();
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                for (int r = 0; r < reps; ++r)
                    for (int p = 0; p < panels; ++p)
                        gemm(P[t].data() + size_t(p) * K * waste::quant::kPanelRows, K, X[t].data(), K, tokens,
                             Y[t].data() + size_t(p) * waste::quant::kPanelRows, int64_t(waste::quant::kPanelRows) * panels,
                             waste::quant::kPanelRows);
            });
        for (auto &th : pool)
            th.join();
        const double flops = 2.0 * K * waste::quant::kPanelRows * tokens * panels * reps * threads;
        best = std::max(best, flops / (now() - t0) / 1e9);
    }
    return best;
}

waste::format::Manifest readManifest(const std::string &dir)
{
    std::ifstream in(dir + "/manifest.json");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return waste::format::parseManifest(text, dir + "/manifest.json");
}

struct Banks {
    int64_t bytes = 0;   // every expert record
    double gbps = 0;     // direct reads in bank order, 16 in flight
};

// Reads every record of every bank in order, as a pass that needs most of each bank does.
Banks readBanks(const std::string &dir)
{
    const waste::format::Manifest m = readManifest(dir);
    std::vector<std::unique_ptr<waste::io::DirectFile>> files;
    std::vector<RecordRead> reads;
    int64_t recordBytes = 0;
    Banks b;
    for (const auto &[layer, bank] : m.banks) {
        files.push_back(std::make_unique<waste::io::DirectFile>(dir + "/" + bank.file));
        recordBytes = std::max(recordBytes, bank.recordBytes);
        for (int e = 0; e < bank.experts; ++e)
            reads.push_back({files.back().get(), int64_t(e) * bank.recordBytes, bank.recordBytes});
        b.bytes += int64_t(bank.experts) * bank.recordBytes;
    }
    if (reads.empty())
        return b;
    b.gbps = engineReadRate(reads, recordBytes, 16, ReadBuffers::CacheSlots).gbPerSecond();
    return b;
}

// Matrix FLOPs of reading `tokens` prompt tokens: 2 per active weight per token, less the
// embedding and lm_head rows (a lookup, and one row of logits per pass); plus, for each
// full-attention layer, the scores and the weighted sum over the causal prefix.
double promptFlops(const waste::ModelInfo &info, const waste::format::Manifest &m, int tokens)
{
    const double perToken = 2.0 * double(info.paramsActive - 2 * int64_t(info.vocab) * info.hidden);
    const auto &c = m.config;
    int fullLayers = c.layers;
    for (bool kda : c.isKda)
        fullLayers -= kda;
    // q.k and p.v per head over the causal prefix (MLA: nope + rope and v dims; GQA: head dims).
    const double perPair = c.g.on ? 2.0 * c.heads * 2.0 * c.g.headDim : 2.0 * c.heads * double(c.qkNope + c.qkRope + c.vHead);
    const double attention = double(fullLayers) * perPair * double(tokens) * double(tokens + 1) / 2.0;
    return perToken * tokens + attention;
}

std::vector<int32_t> randomPrompt(int vocab, int n, unsigned seed)
{
    std::mt19937 rng(seed);
    // Clear of the first ids and the specials at the end of the vocabulary.
    std::uniform_int_distribution<int32_t> pick(256, std::max(257, vocab - 1024));
    std::vector<int32_t> ids(static_cast<size_t>(n));
    for (auto &id : ids)
        id = pick(rng);
    return ids;
}

struct PrefillRun {
    double seconds = 0;
    double tokPerS = 0;
    int64_t bytesRead = 0;
    double ioWait = 0;     // seconds the pass waited for expert reads
    double cpuSeconds = 0; // the process's CPU time over the pass (all threads)
    int64_t loadedAtOpen = 0; // records read at open (OpenOptions::loadEveryExpert)
    double loadSeconds = 0;
    bool mlaExpanded = false; // the last pass attended in MLA's expanded form (model/mla_form.hpp)
    std::vector<float> logits;
};

// loadAll false: the pass's own reads are what is measured, at every budget; true: as a
// person's open does, every expert read at open where the budget holds them all. form: MLA's
// form (the engine's choice, or one forced for a side-by-side measure).
PrefillRun prefill(const std::string &container, int64_t budget, int threads, const std::vector<int32_t> &ids,
                   bool loadAll = false, waste::model::Forward::MlaForm form = waste::model::Forward::MlaForm::Auto)
{
    waste::OpenOptions o;
    o.ramBudget = budget;
    o.threads = threads;
    o.ctxTokens = int(ids.size()) + 64;
    o.warmFromUsage = false;
    o.loadEveryExpert = loadAll;
    auto model = waste::Model::open(container, o);
    auto &forward = static_cast<waste::session::ModelImpl &>(*model).forward();
    forward.setMlaForm(form);
    const waste::Stats before = model->stats();
    const double t0 = now(), c0 = cpuNow();
    PrefillRun r;
    r.logits = model->eval(ids);
    r.mlaExpanded = forward.lastPassExpanded();
    r.seconds = now() - t0;
    r.cpuSeconds = cpuNow() - c0;
    r.tokPerS = double(ids.size()) / r.seconds;
    r.bytesRead = model->stats().bytesRead - before.bytesRead;
    r.ioWait = model->stats().secondsIoWait - before.secondsIoWait;
    r.loadedAtOpen = model->info().expertsLoadedAtOpen;
    r.loadSeconds = model->info().expertsLoadSeconds;
    return r;
}

// Greedy tokens after a short prompt, timed after the first quarter (the cache then holds
// what a steady decode keeps; a cold start is not the decode speed a person sees).
double decodeTokPerS(const std::string &container, int64_t budget, int threads, int tokens)
{
    waste::OpenOptions o;
    o.ramBudget = budget;
    o.threads = threads;
    o.warmFromUsage = false;
    auto model = waste::Model::open(container, o);
    model->eval(model->tokenize("The quick brown fox", true));
    waste::GenParams gp;
    gp.maxTokens = tokens;
    const int warm = std::max(1, tokens / 4);
    int n = 0;
    double first = 0;
    model->generate({}, gp, [&](const waste::TokenEvent &) {
        if (++n == warm)
            first = now();
        return true;
    });
    return n > warm ? (n - warm) / (now() - first) : 0;
}

std::vector<int> parseList(const std::string &s)
{
    std::vector<int> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ','))
        out.push_back(int(waste::parseSize(item)));
    return out;
}

std::string gb(double bytes)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GB", bytes / 1e9);
    return buf;
}

} // namespace

int main(int argc, char **argv)
{
    std::vector<std::string> containers;
    std::vector<std::string> budgetTexts;
    std::vector<int> lengths{1024, 4096, 16384};
    int decodeTokens = 128;
    int threads = 0;
    bool compareMla = false;
    std::string midSize = "2G", cacheDir = WASTE_BENCH_CACHE_DIR;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--container")
            containers.push_back(value());
        else if (a == "--budget")
            budgetTexts.push_back(value());
        else if (a == "--tokens")
            lengths = parseList(value());
        else if (a == "--decode-tokens")
            decodeTokens = std::stoi(value());
        else if (a == "--threads")
            threads = std::stoi(value());
        else if (a == "--mid-size")
            midSize = value();
        else if (a == "--cache")
            cacheDir = value();
        else if (a == "--compare-mla")
            compareMla = true;
        else {
            std::fprintf(stderr,
                         "usage: bench_prefill [--container DIR]... [--budget SIZE]... [--tokens N,N,...] "
                         "[--decode-tokens N] [--threads N] [--mid-size SIZE] [--cache DIR] [--compare-mla]\n");
            return 2;
        }
    }
    try {
        if (budgetTexts.empty())
            budgetTexts = {"160M", "4G"};
        if (containers.empty())
            containers.push_back(midContainer(cacheDir, midSize));
        const int nThreads = threads > 0 ? threads : hardwareThreads();

        const double peak = peakGflopsPerCore();
        const double kernel1 = panelGemmGflops(1, 1024, 256);
        const double kernelAll = panelGemmGflops(nThreads, 1024, 256);
        std::printf("peak FMA %.0f GFLOP/s per core (%.0f on %d threads); panel kernel (%s) %.0f GFLOP/s on one "
                    "thread (%.0f%% of peak), %.0f on %d\n",
                    peak, peak * nThreads, nThreads, waste::quant::simdName(waste::quant::activeSimd()), kernel1,
                    peak > 0 ? 100 * kernel1 / peak : 0, kernelAll, nThreads);

        // Measured in this run, as the measurements it is set against: a calibration kept from an
        // earlier run had been taken in a slow minute and priced the mid-size prompt 1.84x slow
        // where a fresh one gave 0.99x (2026-12-07).
        const waste::ComputeCalibration cal =
            waste::cachedCalibration(cacheDir + "/compute-calibration.json", true, threads);
        std::string summary;
        for (const std::string &c : containers) {
            const waste::format::Manifest m = readManifest(c);
            const Banks banks = readBanks(c);
            const waste::MemoryPlan plan = waste::planMemory(c, lengths.empty() ? 4096 : lengths.back() + 64);
            const waste::ModelInfo info = [&] {
                waste::OpenOptions probe; // the vocabulary and the active weights, once per container
                probe.threads = threads;
                probe.warmFromUsage = false;
                return waste::Model::open(c, probe)->info();
            }();
            std::printf("\n%s: banks %s, read in bank order at %.2f GB/s (each expert once: %.1f s)\n", c.c_str(),
                        gb(double(banks.bytes)).c_str(), banks.gbps,
                        banks.gbps > 0 ? double(banks.bytes) / 1e9 / banks.gbps : 0.0);
            for (const std::string &bt : budgetTexts) {
                const int64_t budget = waste::parseSize(bt);
                waste::BudgetChoice choice;
                try {
                    choice = waste::resolveBudget(plan, budget);
                } catch (const waste::Error &e) {
                    std::printf("  budget %s: skipped (%s)\n", bt.c_str(), e.what());
                    continue;
                }
                const double dec = decodeTokPerS(c, budget, threads, decodeTokens);
                std::printf("  budget %s (pass up to %d tokens): decode %.1f tok/s\n", bt.c_str(), choice.pass_tokens,
                            dec);
                double lastRatio = 0;
                for (int n : lengths) {
                    const auto ids = randomPrompt(info.vocab, n, unsigned(n));
                    const PrefillRun r = prefill(c, budget, threads, ids);
                    const double passes = std::ceil(double(n) / std::max(1, choice.pass_tokens));
                    const double diskLimit = banks.gbps > 0 ? passes * double(banks.bytes) / 1e9 / banks.gbps : 0;
                    const double computeLimit = promptFlops(info, m, n) / 1e9 / kernelAll;
                    const double limit = std::max(diskLimit, computeLimit);
                    const waste::PrefillEstimate predicted =
                        waste::estimatePrefill(c, cal, n, choice.pass_tokens, banks.gbps, choice.expand_room_bytes);
                    std::printf("    %6d tokens: %6.1f s, %7.1f tok/s = %5.1fx decode; read %s = %.2fx the banks; "
                                "limits: disk %.1f s, compute %.1f s; %.2fx the larger; predicted %.0f tok/s "
                                "(compute %.2f s of which panel decoding %.2f s, linear attention %.2f s, attention %.2f s, "
                                "vector work %.2f s; measured %.2fx); cores busy "
                                "%.0f %%, waiting for reads %.1f s\n",
                                n, r.seconds, r.tokPerS, dec > 0 ? r.tokPerS / dec : 0.0,
                                gb(double(r.bytesRead)).c_str(),
                                banks.bytes > 0 ? double(r.bytesRead) / double(banks.bytes) : 0.0, diskLimit,
                                computeLimit, limit > 0 ? r.seconds / limit : 0.0, predicted.tokPerS,
                                predicted.computeSeconds, predicted.panelDecodeSeconds, predicted.linearAttentionSeconds,
                                predicted.attentionSeconds, predicted.vectorSeconds, predicted.tokPerS > 0 ? r.tokPerS / predicted.tokPerS : 0.0,
                                100.0 * r.cpuSeconds / (r.seconds * nThreads), r.ioWait);
                    std::fflush(stdout);
                    if (compareMla && r.mlaExpanded) {
                        // The same prompt with MLA's absorbed form forced, then the engine's choice
                        // again: both forms' times in turns, and how far apart their logits are.
                        using Form = waste::model::Forward::MlaForm;
                        const PrefillRun a = prefill(c, budget, threads, ids, false, Form::Absorbed);
                        const PrefillRun e = prefill(c, budget, threads, ids, false, Form::Auto);
                        double gap = 0, largest = 0;
                        for (size_t i = 0; i < a.logits.size() && i < r.logits.size(); ++i) {
                            gap = std::max(gap, std::fabs(double(r.logits[i]) - double(a.logits[i])));
                            largest = std::max(largest, std::fabs(double(a.logits[i])));
                        }
                        std::printf("    %6d tokens, MLA's forms in turns: expanded %.1f s and %.1f s, absorbed %.1f s "
                                    "(%.2fx); logits within %.1e of the absorbed form's\n",
                                    n, r.seconds, e.seconds, a.seconds, a.seconds / std::min(r.seconds, e.seconds),
                                    largest > 0 ? gap / largest : 0.0);
                        std::fflush(stdout);
                    }
                    if (const PrefillRun l = prefill(c, budget, threads, ids, true); l.loadedAtOpen > 0)
                        std::printf("    %6d tokens after the open read every expert (%.1f s): %6.1f s, %7.1f tok/s; "
                                    "read %s; open and prompt %.1f s\n",
                                    n, l.loadSeconds, l.seconds, l.tokPerS, gb(double(l.bytesRead)).c_str(),
                                    l.loadSeconds + l.seconds);
                    lastRatio = dec > 0 ? r.tokPerS / dec : 0;
                }
                char item[160];
                std::snprintf(item, sizeof item, "%s%s@%s %.1fx", summary.empty() ? "" : ", ",
                              std::filesystem::path(c).filename().string().c_str(), bt.c_str(), lastRatio);
                summary += item;
            }
        }
        std::printf("\nprefill/decode at %d tokens: %s\n", lengths.empty() ? 0 : lengths.back(), summary.c_str());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench_prefill: %s\n", e.what());
        return 1;
    }
    return 0;
}
