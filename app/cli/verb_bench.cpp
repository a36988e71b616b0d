// waste bench MODEL [--tokens N] [--budget SIZE] [--json]: decode speed and what the
// expert streaming did during it. A fixed prompt is prefilled, then N tokens are decoded
// greedily one at a time (no stop at EOS, so every run decodes exactly N); the figures are
// the decode's alone: tok/s, demand hit rate, bytes read (and per token), I/O wait and its
// share of the decode time, router-lookahead accuracy, and whether reads bypassed the page
// cache (without it the figures measure RAM, not the disk). The decode speed is kept as one of
// this machine's real runs of the model (observed_runs.h: `waste plan` and the app's Planner
// correct their forecasts by them) unless --no-record is given.
#include "model_options.h"
#include "observed_runs.h"
#include "verb.h"

#include <chrono>
#include <cstdio>
#include <span>

namespace {

// The reference engine's bench prompt, so figures compare across the two.
constexpr const char *kPrompt = "Write a C function that parses a JSON array of integers and explain its edge cases.";

double seconds(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int runBench(const cli::Args &args)
{
    const long long n = args.integer("--tokens", 64);
    if (n < 1 || n > 100000)
        throw cli::UsageError("--tokens must be between 1 and 100000");
    auto model = cli::openModel(args);
    std::vector<int32_t> prompt = model->tokenize(kPrompt);
    if (model->info().bosId >= 0)
        prompt.insert(prompt.begin(), model->info().bosId);
    if (int64_t(prompt.size()) + n > model->info().ctxMax && model->info().ctxMax > 0)
        throw cli::UsageError("--tokens " + std::to_string(n) + " does not fit the context after the " +
                              std::to_string(prompt.size()) + "-token prompt (raise --ctx)");

    auto t0 = std::chrono::steady_clock::now();
    std::vector<float> logits = model->eval(prompt);
    const double prefillSeconds = seconds(t0);
    const waste::Stats before = model->stats();
    t0 = std::chrono::steady_clock::now();
    for (long long i = 0; i < n; ++i) {
        const int32_t next = waste::topTokens(logits, 1).at(0).id;
        logits = model->eval(std::span<const int32_t>(&next, 1));
    }
    const double decodeSeconds = seconds(t0);
    const waste::Stats after = model->stats();

    const int64_t hits = after.demandHits - before.demandHits;
    const int64_t misses = after.demandMisses - before.demandMisses;
    const int64_t bytes = after.bytesRead - before.bytesRead;
    const int64_t predicted = after.lookaheadPredicted - before.lookaheadPredicted;
    const int64_t correct = after.lookaheadCorrect - before.lookaheadCorrect;
    const double ioWait = after.secondsIoWait - before.secondsIoWait;
    const double tokPerS = decodeSeconds > 0 ? double(n) / decodeSeconds : 0;
    const double hitRate = hits + misses > 0 ? double(hits) / double(hits + misses) : 0;
    const double ioShare = decodeSeconds > 0 ? ioWait / decodeSeconds : 0;
    if (!after.directIo)
        std::fprintf(stderr, "waste: warning: expert reads went through the page cache (direct_io false): "
                             "these figures measure RAM, not the disk\n");
    else if (!args.flag("--no-record")) // a disk-less figure would mislead the forecast
        cli::recordRun(args.positional(0), ObservedSpeeds::measured(model->info().budgetBytes, n, tokPerS, 0, 0));

    if (args.flag("--json")) {
        std::printf("{\"tokens\":%lld,\"tok_per_s\":%.6g,\"ms_per_token\":%.6g,\"prompt_tokens\":%zu,"
                    "\"prefill_seconds\":%.6g,\"decode_seconds\":%.6g,\"experts_hit\":%lld,\"experts_missed\":%lld,"
                    "\"hit_rate\":%.6g,\"bytes_read\":%lld,\"gb_per_token\":%.6g,\"io_wait_seconds\":%.6g,"
                    "\"io_wait_share\":%.6g,\"lookahead_predicted\":%lld,\"lookahead_correct\":%lld,"
                    "\"lookahead_accuracy\":",
                    n, tokPerS, decodeSeconds * 1000 / double(n), prompt.size(), prefillSeconds, decodeSeconds,
                    static_cast<long long>(hits), static_cast<long long>(misses), hitRate,
                    static_cast<long long>(bytes), double(bytes) / 1e9 / double(n), ioWait, ioShare,
                    static_cast<long long>(predicted), static_cast<long long>(correct));
        if (predicted > 0)
            std::printf("%.6g", double(correct) / double(predicted));
        else
            std::printf("null");
        std::printf(",\"speculative_fills\":%lld,\"budget_bytes\":%lld,\"expert_cache_bytes\":%lld,"
                    "\"experts_loaded_at_open\":%lld,\"experts_load_seconds\":%.6g,\"direct_io\":%s}\n",
                    static_cast<long long>(after.speculativeFills - before.speculativeFills),
                    static_cast<long long>(model->info().budgetBytes),
                    static_cast<long long>(model->info().expertCacheBytes),
                    static_cast<long long>(model->info().expertsLoadedAtOpen), model->info().expertsLoadSeconds,
                    after.directIo ? "true" : "false");
        return 0;
    }
    if (model->info().expertsLoadedAtOpen > 0) // the budget holds every expert: all read at open, not timed below
        std::printf("every expert loaded at open: %lld records in %.2f s\n",
                    static_cast<long long>(model->info().expertsLoadedAtOpen), model->info().expertsLoadSeconds);
    std::printf("%lld tokens in %.2f s: %.2f tok/s (%.1f ms/token); prefill %zu tokens in %.2f s\n", n, decodeSeconds,
                tokPerS, decodeSeconds * 1000 / double(n), prompt.size(), prefillSeconds);
    std::printf("experts %lld hit / %lld miss = %.1f%%; read %.3f GB (%.4f GB/token)\n", static_cast<long long>(hits),
                static_cast<long long>(misses), 100 * hitRate, double(bytes) / 1e9, double(bytes) / 1e9 / double(n));
    std::printf("I/O wait %.2f s = %.1f%% of the decode; lookahead ", ioWait, 100 * ioShare);
    if (predicted > 0)
        std::printf("%.1f%% right (%lld of %lld)", 100.0 * double(correct) / double(predicted),
                    static_cast<long long>(correct), static_cast<long long>(predicted));
    else
        std::printf("off");
    std::printf("; direct_io %s\n", after.directIo ? "true" : "false");
    return 0;
}

std::vector<cli::OptionSpec> options()
{
    auto o = cli::modelOptions();
    o.push_back({"--tokens", cli::OptionKind::Value, "N     tokens to decode (default 64)"});
    o.push_back({"--json", cli::OptionKind::Flag, "      one JSON object on stdout"});
    o.push_back({"--no-record", cli::OptionKind::Flag, " do not keep this run among the model's real runs (waste plan)"});
    return o;
}

} // namespace

WASTE_CLI_VERB({"bench", "MODEL [--tokens N] [--budget SIZE] [--json]",
                "Decode N tokens and report tok/s, hit rate, bytes read, I/O wait, lookahead accuracy, direct_io",
                {options(), 1, 1}, &runBench});
