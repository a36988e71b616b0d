// The token-budget rule the constraints share: a candidate token is allowed when the
// shortest completion after it (its cost) fits the tokens left. If none fits (the limit
// was too small from the start), the candidates that progress most are allowed instead,
// so generation still moves toward the end.
#pragma once

#include "text/json_schema.hpp"

#include <algorithm>
#include <cstdint>

namespace waste::text {

// The cost limit to apply to `candidates`: `limit` when some candidate fits it (or the
// output may already end, `fitsAlready`), else the smallest cost among them.
template <class Candidates, class CostOf>
int64_t affordableCost(const Candidates &candidates, int64_t limit, bool fitsAlready, CostOf costOf)
{
    bool fits = fitsAlready;
    int64_t best = kInfiniteLen;
    for (const auto &c : candidates) {
        fits = fits || costOf(c) <= limit;
        best = std::min(best, costOf(c));
    }
    return fits ? limit : best;
}

} // namespace waste::text
