// A reference for the online cache policies on synthetic routing: a cache told the
// generator's odds, which learns nothing and guesses nothing.
//
// Why: Belady's optimum sees the future draws, so "share of the optimum" mixes two losses:
// what an online policy cannot know (the next token's random choice) and what it estimates
// badly (the odds it learns from the routing). This cache is told the odds (up to the
// formula below): each expert's popularity rank after the drift (zipfDriftTrace's hidden
// state) and the mean chance that a token reuses the previous token's experts. It keeps
// the records with the most expected hits per unit of slot time, p / d (p = the chance of
// a pick at the record's next chance, d = passes until that chance), the index the reuse
// policy estimates (and, with these odds, the best of p / d^a for a in 0.5-2 and of
// densities over up to 8 chances, on the deep and Mixtral-like shapes at 1 ws). It is
// not a bound: on Mixtral-like at 1 ws LRU edges it by 0.1-0.3 points. But where it falls
// short of a goal, a policy that must learn the odds from the routing cannot be expected
// to meet that goal by ranking records this way.
//
// p = m + (1 - m) q if the record was picked by the token before its next chance, else q;
// q = zipfPickChance() at the record's rank now (for a chance in the next pass, the rank
// before that pass's drift), m = E[min(1, 2 locality U)], U uniform on [0, 1). Using the
// token's own reuse chance for the layers still to come in it did not rank better (the
// deep shape at 1 ws, first half: 75.8 % of the optimum against 76.0 %, in a scratch run
// that kept every record of the layer being served), nor did odds measured by drawing each
// token 4000 times instead of the formula (Mixtral-like: 74.7 / 74.4 % against 75.0 / 74.7 %).
//
// Cache mechanics as ExpertCache with cacheSim(): demand fills only, ids in listed order,
// a layer's resident records kept until acquired (given up when nothing else is
// evictable), cold start. A miss compares each layer's least likely record (a layer's
// records all wait as long): O(layers) plus a rescan of the layers that changed.
#pragma once

#include "cache/synthetic_trace.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace waste::cache {

struct KnownOddsRun {
    size_t first = 0; // tokens [first, first + count) of the trace, from a cold cache
    size_t count = 0;
    int slots = 0;
    int64_t hits = 0;     // filled by knownOddsReplay
    int64_t accesses = 0;
};

// Generates zipfDriftTrace(spec) once and replays every run alongside.
// Throws waste::Error(Argument) for a run without slots or past the trace's end.
void knownOddsReplay(const SyntheticTraceSpec &spec, std::vector<KnownOddsRun> &runs);

} // namespace waste::cache
