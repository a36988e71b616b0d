// How many prompt tokens one pass reads (model/forward.hpp), from the RAM a budget leaves.
//
// A pass holds a few rows per token for its whole length (the residual stream and the
// normed input; K3's block history) and a fixed scratch for the pieces its attention, dense
// layers, routing and experts run in (Forward::kPassPiece tokens each) and the panels its
// threads decode. Where the room is short of a prompt, the attention's and dense layers'
// pieces shrink (down to kMinPiece tokens) so that it is read in fewer passes: each pass
// reads most of the experts again, while a shorter piece only decodes the trunk's matrices
// more often. The floor pays for a 64-token chunk's tables and activations, which a pass
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
inline constexpr int kMaxPiece = 256;     // Forward::kPassPiece
inline constexpr int kMinPiece = 64;      // a piece's tokens, at the shortest
inline constexpr int kPieceStep = 16;     // and the steps between

struct PassCost {
    int64_t perToken = 0;   // bytes each token of a pass holds for the whole pass
    int64_t fixed = 0;      // bytes a pass holds whatever its length, with pieces of kMaxPiece
    int64_t pieceToken = 0; // of those, what each token of a piece holds
    // What a pass holds whatever its length, with pieces of `piece` tokens.
    int64_t fixedAt(int piece) const { return fixed - int64_t(kMaxPiece - piece) * pieceToken; }
    // The most tokens a pass with pieces of `piece` reads in `room` bytes (0: not kMinPassTokens).
    int tokensIn(int64_t room, int piece) const;
};
PassCost passCost(const PlanInputs &in, int threads);

struct PassChoice {
    int tokens = kMinPassTokens; // the most prompt tokens a pass reads
    int64_t bytes = 0;           // what that borrows from the expert cache (0 at the floor's pass)
    int piece = kMaxPiece;       // the tokens its attention and dense layers take at a time
};
// floorRoom: the floor's scratch only a prompt chunk uses (FloorTerms::passScratch), the
// pass's own; lendable: the expert cache's bytes a pass may borrow. The longest pass: its
// pieces as short as they go, and no shorter than that length needs.
PassChoice choosePass(const PassCost &cost, int64_t floorRoom, int64_t lendable);
// The next pass of a prompt with `left` tokens still to read, at most `most` tokens: as few
// passes as the room allows, of equal length, with the longest pieces that still hold them.
PassChoice passFor(const PassCost &cost, int64_t floorRoom, int64_t lendable, int64_t left, int most);
// What a pass of n tokens with pieces of `piece` tokens borrows from the cache (0 when the
// floor's room holds it).
int64_t passBorrows(const PassCost &cost, int64_t floorRoom, int n, int piece = kMaxPiece);

// The other way round: while tokens are generated and no pass runs, the expert cache holds the
// floor's prompt room (ModelImpl::roomToCache). The records of slotBytes (4 KiB-aligned) it
// holds, no more than the cacheSlots lack to hold all `records`.
int64_t promptRoomSlots(int64_t floorRoom, int64_t slotBytes, int64_t cacheSlots, int64_t records);

} // namespace waste::plan
