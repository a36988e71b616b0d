// Cache hit rate against Belady's optimum at 0.5, 1, 2 and 3 working sets, every policy
// side by side: on the real trace, on its held-out second half (cold start; the policy's
// constants were chosen on the first half), and on synthetic Zipf-with-drift routing of
// other model shapes, each split the same way (first half / held-out second half). On the
// synthetic ones a cache told the generator's odds (known_odds_replay.hpp) shows how much of
// the gap to the optimum is the future's randomness rather than the policy's estimates. Then
// the summary: the default policy's worst share of the optimum at 1-3 working sets, and last,
// per trace, its share at one working set on the held-out half beside LRU's and the
// known-odds cache's, with whether the 75 % goal is met and, where not, whether the known-odds
// cache meets it; before that, the same share with the held-out half warm-started from the first
// half's usage record, as the engine opens after a --learn run.
// Real traces: the OLMoE fixture, whose first half the policy was developed on, and the routing
// of small byte-level MoEs trained here (tests/bench/trained_moe_trace.py), never tuned on.
// Beside each real trace, a cache that knows the next pass exactly (horizon_oracle.hpp,
// column next/opt): what predicting the next token's routing perfectly would be worth.
// Usage: bench_cache [TRACE.jsonl...]   (default: the three fixture traces)
#include "cache/cache_sim.hpp"
#include "cache/horizon_oracle.hpp"
#include "cache/known_odds_replay.hpp"
#include "cache/synthetic_trace.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

using namespace waste::cache;

namespace {

struct Shares {
    double half = 0;      // default policy's share of the optimum at 0.5 ws
    double worst = 1;     // ... and its worst at 1-3 ws
    double overLru = 1;   // its least hit-rate margin over LRU at 1-3 ws (points / 100)
    double knownWorst = 1; // the known-odds cache's worst share at 1-3 ws (synthetic traces)
    double one = 0;       // default policy's share at 1 ws
    double knownOne = -1; // the known-odds cache's share at 1 ws (-1: none)
    double lruOne = 0;    // LRU's share at 1 ws
    double share[4] = {};                 // default policy's share at each of kWorkingSets
    double horizon[4] = {-1, -1, -1, -1}; // the next-pass oracle's share there (-1: not run)
};

constexpr double kGoal = 0.75; // the goal: this share of the optimum at 1-3 ws

constexpr double kWorkingSets[] = {0.5, 1.0, 2.0, 3.0};

// knownHits: the known-odds cache's hits at each of kWorkingSets, or empty. withHorizon: also
// the cache that knows the next pass's routing (horizon_oracle.hpp), for the real traces.
Shares table(const std::string &title, const RoutingTrace &trace, const std::vector<int64_t> &knownHits = {},
             bool withHorizon = false)
{
    const std::vector<PolicyKind> policies = {PolicyKind::Reuse, PolicyKind::LayerFreq, PolicyKind::SampledLfru,
                                              PolicyKind::Lru};
    std::printf("\n%s: %zu tokens, %d layers, %d experts, top-%d, working set %lld records\n", title.c_str(),
                trace.tokens.size(), trace.layers, trace.experts, trace.topK, (long long)trace.workingSet());
    std::printf("%5s %6s %8s", "ws", "slots", "optimum");
    for (PolicyKind p : policies)
        std::printf(" %10s", policyName(p).c_str());
    for (PolicyKind p : policies)
        std::printf(" %9s", (policyName(p) + "/opt").c_str());
    if (!knownHits.empty())
        std::printf(" %9s", "known/opt");
    if (withHorizon)
        std::printf(" %9s", "next/opt");
    std::printf("\n");
    Shares s;
    for (size_t w = 0; w < std::size(kWorkingSets); ++w) {
        const double ws = kWorkingSets[w];
        const int slots = std::max(1, int(ws * double(trace.workingSet())));
        std::vector<CacheSimResult> r;
        for (PolicyKind p : policies)
            r.push_back(cacheSim(trace, slots, p, r.empty()));
        const double opt = r[0].optHitRate;
        std::printf("%5.1f %6d %7.1f%%", ws, slots, 100 * opt);
        for (const auto &x : r)
            std::printf(" %9.1f%%", 100 * x.hitRate);
        for (const auto &x : r)
            std::printf(" %8.1f%%", opt > 0 ? 100 * x.hitRate / opt : 100.0);
        const double known = knownHits.empty() || opt <= 0 ? 1.0 : double(knownHits[w]) / double(r[0].accesses) / opt;
        if (!knownHits.empty())
            std::printf(" %8.1f%%", 100 * known);
        if (withHorizon) {
            s.horizon[w] = opt > 0 ? double(horizonOracleHits(trace, slots, 1)) / double(r[0].accesses) / opt : 1.0;
            std::printf(" %8.1f%%", 100 * s.horizon[w]);
        }
        std::printf("\n");
        const double share = opt > 0 ? r[0].hitRate / opt : 1.0;
        if (ws == 1.0) {
            s.one = share;
            s.lruOne = opt > 0 ? r.back().hitRate / opt : 1.0;
            if (!knownHits.empty())
                s.knownOne = known;
        }
        s.share[w] = share;
        if (ws < 1.0) {
            s.half = share;
        } else {
            s.worst = std::min(s.worst, share);
            s.overLru = std::min(s.overLru, r[0].hitRate - r.back().hitRate);
            s.knownWorst = std::min(s.knownWorst, known);
        }
    }
    return s;
}

} // namespace

int main(int argc, char **argv)
{
    std::vector<std::string> paths(argv + 1, argv + argc);
    if (paths.empty())
        paths = {std::string(WASTE_FIXTURES_DIR) + "/traces/olmoe_299.jsonl",
                 std::string(WASTE_FIXTURES_DIR) + "/traces/bytemoe_600.jsonl",
                 std::string(WASTE_FIXTURES_DIR) + "/traces/bytemoe_8x64_600.jsonl"};
    struct Real {
        std::string name;
        RoutingTrace trace;
        Shares whole, heldOut;
    };
    std::vector<Real> reals;
    for (const std::string &path : paths) {
        Real r;
        r.name = path.substr(path.find_last_of('/') + 1);
        r.trace = loadRoutingTrace(path);
        r.whole = table("trace " + path, r.trace, {}, true);
        const size_t half = r.trace.tokens.size() / 2;
        r.heldOut = table("held-out second half (tokens " + std::to_string(half) + "-" +
                              std::to_string(r.trace.tokens.size() - 1) + ", cold start)",
                          traceTail(r.trace, half), {}, true);
        reals.push_back(std::move(r));
    }

    struct Shape {
        const char *name;
        SyntheticTraceSpec spec;
    };
    const Shape shapes[] = {
        {"OLMoE-like 16 x 64, top-8", {400, 16, 64, 8, 1.0, 0.5, 0.3, 1}},
        {"wide 24 x 256, top-8, faster drift", {400, 24, 256, 8, 1.1, 1.0, 0.3, 2}},
        {"Mixtral-like 32 x 8, top-2", {400, 32, 8, 2, 0.8, 0.1, 0.3, 3}},
        {"deep 48 x 128, top-4, strong drift, less locality", {400, 48, 128, 4, 1.2, 2.0, 0.2, 4}},
        {"DeepSeek-like 58 x 256, top-8, strong locality", {300, 58, 256, 8, 1.0, 0.5, 0.5, 5}},
        {"Qwen-like 48 x 128, top-8", {300, 48, 128, 8, 1.0, 1.0, 0.3, 8}},
        // The large releases' shapes: Kimi K2 / DeepSeek-V3 (61 layers, the first dense)
        // and Kimi K3 (93 layers, the first dense, 896 experts, top-16).
        {"Kimi-K2-like 60 x 384, top-8", {300, 60, 384, 8, 1.0, 0.5, 0.3, 11}},
        {"Kimi-K3-like 92 x 896, top-16", {200, 92, 896, 16, 1.0, 0.5, 0.3, 12}},
        // gpt-oss-120b (36 layers, 128 experts, top-4): added after the policy's last change
        // and never looked at while choosing it.
        {"gpt-oss-like 36 x 128, top-4", {300, 36, 128, 4, 1.0, 0.5, 0.3, 13}},
    };
    // Each synthetic trace split like the real one: the first half and the held-out second
    // half, from a cold cache. (The policy's constants were fitted on the real trace's first
    // half only; the synthetic halves show how far one stretch of routing predicts the next.)
    double synthWorst = 1, synthOverLru = 1, synthHeldWorst = 1, synthHeldOverLru = 1;
    std::vector<std::pair<Shares, Shares>> perShape;
    for (const Shape &s : shapes) {
        const RoutingTrace whole = zipfDriftTrace(s.spec);
        const size_t h = whole.tokens.size() / 2;
        std::vector<KnownOddsRun> runs; // first half at each working set, then the second
        for (size_t from : {size_t(0), h})
            for (double ws : kWorkingSets)
                runs.push_back({from, from ? whole.tokens.size() - h : h, std::max(1, int(ws * double(whole.workingSet())))});
        knownOddsReplay(s.spec, runs);
        std::vector<int64_t> known[2];
        for (size_t i = 0; i < runs.size(); ++i)
            known[i / std::size(kWorkingSets)].push_back(runs[i].hits);
        const Shares first =
            table(std::string("synthetic Zipf with drift, ") + s.name + ", first half", traceHead(whole, h), known[0]);
        const Shares held = table(std::string("synthetic Zipf with drift, ") + s.name + ", second half (held out, cold start)",
                                  traceTail(whole, h), known[1]);
        synthWorst = std::min(synthWorst, first.worst);
        synthOverLru = std::min(synthOverLru, first.overLru);
        synthHeldWorst = std::min(synthHeldWorst, held.worst);
        synthHeldOverLru = std::min(synthHeldOverLru, held.overLru);
        perShape.emplace_back(first, held);
    }
    std::printf("\n%s share of Belady, first half (whole trace for the real one) / held-out second half, worst at 1-3 working sets:\n", policyName(kDefaultPolicy).c_str());
    for (const Real &r : reals)
        std::printf("  %-52s %6.1f%% / %6.1f%%\n", (r.name + " (real; whole trace)").c_str(), 100 * r.whole.worst,
                    100 * r.heldOut.worst);
    for (size_t i = 0; i < perShape.size(); ++i)
        std::printf("  %-52s %6.1f%% / %6.1f%%   (known odds %5.1f%% / %5.1f%%)\n", shapes[i].name,
                    100 * perShape[i].first.worst, 100 * perShape[i].second.worst, 100 * perShape[i].first.knownWorst,
                    100 * perShape[i].second.knownWorst);

    std::printf("\n%s worst share of Belady at 1-3 working sets: synthetic first halves %.1f%% / held out %.1f%%; "
                "least margin over LRU there: synthetic first halves %+.1f / held out %+.1f points\n",
                policyName(kDefaultPolicy).c_str(), 100 * synthWorst, 100 * synthHeldWorst, 100 * synthOverLru,
                100 * synthHeldOverLru);
    for (const Real &r : reals)
        std::printf("%s on %s: %.1f%% of Belady at 0.5 working sets, worst %.1f%% at 1-3 (held-out half %.1f%%, "
                    "least margin over LRU there %+.1f points)\n",
                    policyName(kDefaultPolicy).c_str(), r.name.c_str(), 100 * r.whole.half, 100 * r.whole.worst,
                    100 * r.heldOut.worst, 100 * r.heldOut.overLru);
    // The yardstick for real routing, where no generator's odds exist: a cache that knows the
    // next pass exactly (and LRU beyond it) at 1 / 2 / 3 working sets, whole trace.
    for (const Real &r : reals)
        std::printf("a cache knowing the next pass on %s: %.1f / %.1f / %.1f%% of Belady at 1 / 2 / 3 working sets "
                    "(%s: %.1f / %.1f / %.1f%%)\n",
                    r.name.c_str(), 100 * r.whole.horizon[1], 100 * r.whole.horizon[2], 100 * r.whole.horizon[3],
                    policyName(kDefaultPolicy).c_str(), 100 * r.whole.share[1], 100 * r.whole.share[2],
                    100 * r.whole.share[3]);
    // One working set is where the goal is hardest: per shape, the held-out half against the
    // cache told the generator's odds, so a reader sees where the goal lies beyond that yardstick.
    // Two decimals, because the verdict is taken on the unrounded share (74.97 % is not met).
    // The same halves warm-started, as the engine opens after a --learn run: the first half's
    // usage record (the records its cache ended with, and their uses) loaded before the second
    // half's first token, and Belady's optimum started from the same records.
    std::printf("\nAt 1 working set, held-out second half warm-started from the first half's usage record "
                "(Belady from the same preload):\n");
    auto warmShare = [](const RoutingTrace &whole, PolicyKind p) {
        const size_t h = whole.tokens.size() / 2;
        const int slots = std::max(1, int(whole.workingSet()));
        const std::vector<UsageEntry> learned = learnedUsage(traceHead(whole, h), slots, p);
        const CacheSimResult r = cacheSim(traceTail(whole, h), slots, p, true, &learned);
        return r.optHitRate > 0 ? r.hitRate / r.optHitRate : 1.0;
    };
    std::vector<std::pair<std::string, RoutingTrace>> wholes;
    std::vector<double> colds;
    for (const Real &r : reals) {
        wholes.emplace_back(r.name, r.trace);
        colds.push_back(r.heldOut.one);
    }
    for (size_t i = 0; i < std::size(shapes); ++i) {
        wholes.emplace_back(shapes[i].name, zipfDriftTrace(shapes[i].spec));
        colds.push_back(perShape[i].second.one);
    }
    for (size_t i = 0; i < wholes.size(); ++i) {
        const double cold = colds[i];
        const double warm = warmShare(wholes[i].second, kDefaultPolicy);
        std::printf("  %-52s %6.2f%% (cold %6.2f%%, %+5.2f points)   LRU warm %6.2f%%   %s\n", wholes[i].first.c_str(),
                    100 * warm, 100 * cold, 100 * (warm - cold), 100 * warmShare(wholes[i].second, PolicyKind::Lru),
                    warm >= kGoal ? "goal met warm" : "goal NOT met warm");
    }

    std::printf("\nAt 1 working set, held-out second half: %s vs the known-odds cache (share of Belady; goal %.0f%%):\n",
                policyName(kDefaultPolicy).c_str(), 100 * kGoal);
    for (const Real &r : reals)
        std::printf("  %-52s %6.2f%%   LRU %6.2f%%   (no known odds for real routing)            %s\n", r.name.c_str(),
                    100 * r.heldOut.one, 100 * r.heldOut.lruOne, r.heldOut.one >= kGoal ? "goal met" : "goal NOT met");
    for (size_t i = 0; i < perShape.size(); ++i) {
        const Shares &h = perShape[i].second;
        const char *verdict = h.one >= kGoal          ? "goal met"
                              : h.knownOne < kGoal    ? "goal NOT met; out of reach of the known-odds cache too"
                                                      : "goal NOT met; the known-odds cache reaches it";
        std::printf("  %-52s %6.2f%%   LRU %6.2f%%   known odds %6.2f%% (%+5.2f points)   %s\n", shapes[i].name, 100 * h.one,
                    100 * h.lruOne, 100 * h.knownOne, 100 * (h.one - h.knownOne), verdict);
    }
    return 0;
}
