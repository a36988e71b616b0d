#include "plan/pass_plan.hpp"

#include <algorithm>

namespace waste::plan {

namespace {
constexpr int64_t kPiece = kMaxPiece; // Forward::kPassPiece
constexpr int64_t kPanelRows = 64;
} // namespace

PassCost passCost(const PlanInputs &in, int threads)
{
    const int64_t H = in.hidden, W = in.expertWidth > 0 ? in.expertWidth : in.hidden, Im = in.moeInter;
    const int64_t I = std::max(in.inter, Im * std::max<int64_t>(in.sharedExperts, 1));
    const bool attnRes = in.attnResBlock > 0;
    const int64_t blocks = attnRes ? in.layers / in.attnResBlock + 2 : 0;
    PassCost c;
    // Rows held for the whole pass: the residual stream and the normed input (K3: the partial
    // sum, the stream, the input, the output, its own copy of the stream and the block history),
    // K3's latent expert inputs and sums, and each token's routing (ids, weights, and the
    // per-expert lists of both).
    const int64_t rows = (attnRes ? 5 + blocks : 2) * H + (W != H ? 2 * W : 0);
    c.perToken = 4 * rows + 16 * in.topK;
    // A piece's scratch: attention (projections of every kind, widest first), a dense FFN or
    // shared expert, the router's logits, one expert's users; and each thread's panel.
    const int64_t attention = 8 * std::max({H, in.kdaHeads * in.kdaDim, in.heads * std::max<int64_t>(in.headDim, 1),
                                            in.kvLora + in.qkRope});
    // (An expert's users go a whole kPiece at a time whatever the piece: a shorter one would
    // decode the expert's panels again for each.)
    const int64_t shrinks = attention + 2 * I + H + in.experts;
    const int64_t perPiece = shrinks + 2 * W + 2 * Im;
    const int64_t widest = std::max({H, I, W, Im, in.kvLora});
    // MLA's attention goes 64 tokens a piece (Forward::mlaPass): every head's absorbed query
    // and latent output, each thread's copy of its heads' share of both, and its scores,
    // weights and partial sums over a block.
    const int64_t mla =
        in.kvLora > 0 ? 4 * kPanelRows * in.heads * (2 * (2 * in.kvLora + in.qkRope) + 3 * kPanelRows) : 0;
    c.fixed = 4 * kPiece * perPiece + int64_t(std::max(threads, 1)) * 4 * kPanelRows * widest + mla;
    c.pieceToken = 4 * shrinks;
    return c;
}

int PassCost::tokensIn(int64_t room, int piece) const
{
    const int64_t left = room - fixedAt(piece);
    if (perToken <= 0 || left < int64_t(kMinPassTokens) * perToken)
        return 0;
    return int(std::min<int64_t>(kMaxPassTokens, left / perToken));
}

namespace {

// The longest piece with which `room` holds a pass of `tokens` (kMinPiece when none does).
int longestPiece(const PassCost &cost, int64_t room, int tokens)
{
    for (int piece = kMaxPiece; piece > kMinPiece; piece -= kPieceStep)
        if (cost.tokensIn(room, piece) >= tokens)
            return piece;
    return kMinPiece;
}

} // namespace

PassChoice passFor(const PassCost &cost, int64_t floorRoom, int64_t lendable, int64_t left, int most)
{
    PassChoice p;
    const int64_t room = std::max<int64_t>(0, floorRoom) + std::max<int64_t>(0, lendable);
    most = std::clamp(most, kMinPassTokens, kMaxPassTokens);
    const int longest = std::min(most, cost.tokensIn(room, kMinPiece));
    if (longest <= kMinPassTokens || left <= kMinPassTokens) {
        p.tokens = kMinPassTokens; // the floor's 64-token pass (or a prompt no longer)
        return p;
    }
    // As few passes as the shortest pieces allow, the prompt split evenly over them (each
    // reads most of the experts whatever its length), then the longest piece that holds one.
    const int64_t passes = (left + longest - 1) / longest;
    p.tokens = int((left + passes - 1) / passes);
    p.piece = longestPiece(cost, room, p.tokens);
    p.bytes = passBorrows(cost, floorRoom, p.tokens, p.piece);
    return p;
}

PassChoice choosePass(const PassCost &cost, int64_t floorRoom, int64_t lendable)
{
    // The longest pass is one prompt of that length read whole.
    const int longest = cost.tokensIn(std::max<int64_t>(0, floorRoom) + std::max<int64_t>(0, lendable), kMinPiece);
    return passFor(cost, floorRoom, lendable, longest, longest);
}

int64_t passBorrows(const PassCost &cost, int64_t floorRoom, int n, int piece)
{
    if (n <= kMinPassTokens)
        return 0;
    return std::max<int64_t>(0, cost.fixedAt(piece) + int64_t(n) * cost.perToken - std::max<int64_t>(0, floorRoom));
}

int64_t promptRoomSlots(int64_t floorRoom, int64_t slotBytes, int64_t cacheSlots, int64_t records)
{
    if (slotBytes <= 0 || floorRoom <= 0)
        return 0;
    return std::clamp<int64_t>(records - cacheSlots, 0, floorRoom / slotBytes);
}

} // namespace waste::plan
