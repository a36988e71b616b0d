// How many prompt tokens one pass reads (model/forward.hpp), from the RAM a budget leaves.
//
// A pass holds a few rows per token for its whole length (the residual stream and the
// normed input; K3's block history) and a fixed scratch for the pieces its attention, dense
// layers, routing and experts run in (Forward::kPassPiece tokens each) and the panels its
// threads decode. The floor pays for a 64-token chunk's tables and activations, which a pass
// does not use: that much is the pass's own; more is borrowed from the expert cache while the
// pass runs (its slots above twice the cache's smallest size leave it and come back after),
// up to the longest pass worth having (kMaxPassTokens). A pass is never shorter than 64
// tokens (the floor pays for those).
#pragma once

#include "plan/plan_inputs.hpp"

#include <cstdint>

namespace waste::plan {

inline constexpr int kMinPassTokens = 64;
inline constexpr int kMaxPassTokens = 16384;

struct PassCost {
    int64_t perToken = 0; // bytes each token of a pass holds for the whole pass
    int64_t fixed = 0;    // bytes a pass holds whatever its length
};
PassCost passCost(const PlanInputs &in, int threads);

struct PassChoice {
    int tokens = kMinPassTokens; // the most prompt tokens a pass reads
    int64_t bytes = 0;           // what that borrows from the expert cache (0 at the floor's pass)
};
// floorRoom: the floor's scratch only a prompt chunk uses (FloorTerms::passScratch), the
// pass's own; lendable: the expert cache's bytes a pass may borrow.
PassChoice choosePass(const PassCost &cost, int64_t floorRoom, int64_t lendable);
// What a pass of n tokens borrows from the cache (0 when the floor's room holds it).
int64_t passBorrows(const PassCost &cost, int64_t floorRoom, int n);

// The other way round: while tokens are generated and no pass runs, the expert cache holds the
// floor's prompt room (ModelImpl::roomToCache). The records of slotBytes (4 KiB-aligned) it
// holds, no more than the cacheSlots lack to hold all `records`.
int64_t promptRoomSlots(int64_t floorRoom, int64_t slotBytes, int64_t cacheSlots, int64_t records);

} // namespace waste::plan
