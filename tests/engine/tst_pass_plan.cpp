// How long a prompt's passes are (plan/pass_plan.hpp), with the arithmetic written out: what a
// pass holds per token and whatever its length, on the hidden-1024 Kimi-Linear shape of issue
// 36's mid-size container (tests/bench/mid1024b.json); and where the room is short of a
// prompt, shorter pieces for the attention and dense layers so that it is read in fewer
// passes, each as long as the others.
#include <gtest/gtest.h>

#include "plan/pass_plan.hpp"

namespace {

using waste::plan::PassChoice;
using waste::plan::PassCost;

// tests/bench/mid1024b.json's terms: hidden 1024, dense intermediate 4096, experts of 512
// (one shared), 256 experts top-8, 8 KDA heads of 128, one MLA layer of 8 heads (dc 512, dr 64).
waste::plan::PlanInputs mid1024b()
{
    waste::plan::PlanInputs in;
    in.layers = 9;
    in.hidden = 1024;
    in.inter = 4096;
    in.moeInter = 512;
    in.sharedExperts = 1;
    in.experts = 256;
    in.topK = 8;
    in.heads = 8;
    in.kvLora = 512;
    in.qkRope = 64;
    in.kdaHeads = 8;
    in.kdaDim = 128;
    return in;
}

} // namespace

TEST(PassPlan, WhatAPassHoldsOnTheMidSizeShape)
{
    const PassCost c = waste::plan::passCost(mid1024b(), 2);
    // Per token: the residual stream and the normed input (2 x 1024 floats), and 8 routes of
    // 16 bytes.
    EXPECT_EQ(c.perToken, 4 * 2 * 1024 + 16 * 8); // 8 320
    // A piece's token: attention's projections (8 x 1024 floats), the dense FFN (2 x 4096), the
    // router's input row and logits (1024 + 256); an expert's users (2 x 1024 + 2 x 512) go 256
    // at a time whatever the piece.
    const int64_t pieceToken = 4 * (8 * 1024 + 2 * 4096 + 1024 + 256);
    EXPECT_EQ(c.pieceToken, pieceToken); // 70 656
    const int64_t users = 4 * 256 * (2 * 1024 + 2 * 512);
    const int64_t panels = 2 * 4 * 64 * 4096;                        // each thread's panel, widest 4096
    const int64_t mla = 4 * 64 * 8 * (2 * (2 * 512 + 64) + 3 * 64); // 64 tokens' absorbed queries
    EXPECT_EQ(c.fixed, 256 * pieceToken + users + panels + mla);     // 28 180 480
    EXPECT_EQ(c.fixedAt(176), c.fixed - 80 * pieceToken);
    EXPECT_EQ(c.tokensIn(c.fixed + 2800 * c.perToken, 256), 2800);
    EXPECT_EQ(c.tokensIn(c.fixed + 63 * c.perToken, 256), 0); // not even the floor's 64
}

TEST(PassPlan, APromptJustPastThePassIsReadInOneWithShorterPieces)
{
    const PassCost c = waste::plan::passCost(mid1024b(), 2);
    const int64_t room = c.fixed + 2800 * c.perToken; // 2 800 tokens with pieces of 256

    // 3 445 tokens need (3 445 - 2 800) x 8 320 = 5 366 400 bytes more: 76 piece tokens fewer
    // (5 366 400 / 70 656 = 75.9), so pieces of 180 at most, 176 in steps of 16.
    const PassChoice one = waste::plan::passFor(c, room, 0, 3445, waste::plan::kMaxPassTokens);
    EXPECT_EQ(one.tokens, 3445);
    EXPECT_EQ(one.piece, 176);
    EXPECT_EQ(one.bytes, 0); // all of it in the floor's room

    // 8 000 tokens: pieces of 64 hold 2 800 + 192 x 70 656 / 8 320 = 4 430 a pass, so two passes
    // of 4 000; those need (4 000 - 2 800) x 8 320 / 70 656 = 141.3 piece tokens fewer: 112.
    const PassChoice two = waste::plan::passFor(c, room, 0, 8000, waste::plan::kMaxPassTokens);
    EXPECT_EQ(c.tokensIn(room, 64), 4430);
    EXPECT_EQ(two.tokens, 4000);
    EXPECT_EQ(two.piece, 112);

    // A prompt the room holds with whole pieces keeps them; so does one no longer than 64.
    const PassChoice short1 = waste::plan::passFor(c, room, 0, 1000, waste::plan::kMaxPassTokens);
    EXPECT_EQ(short1.tokens, 1000);
    EXPECT_EQ(short1.piece, 256);
    EXPECT_EQ(waste::plan::passFor(c, room, 0, 40, waste::plan::kMaxPassTokens).piece, 256);

    // The budget's cap on a pass (ModelImpl's pass tokens) splits as evenly: 3 445 in two.
    const PassChoice capped = waste::plan::passFor(c, room, 0, 3445, 2000);
    EXPECT_EQ(capped.tokens, 1723);
    EXPECT_EQ(capped.piece, 256);

    // Room lent by the cache counts, and what is borrowed is what the floor's room lacks.
    const int64_t floorRoom = c.fixed + 1000 * c.perToken;
    const PassChoice lent = waste::plan::passFor(c, floorRoom, 1800 * c.perToken, 3445, waste::plan::kMaxPassTokens);
    EXPECT_EQ(lent.tokens, 3445);
    EXPECT_EQ(lent.piece, 176);
    EXPECT_EQ(lent.bytes, c.fixedAt(176) + 3445 * c.perToken - floorRoom);
}

TEST(PassPlan, TheLongestPassAndTheFloors)
{
    const PassCost c = waste::plan::passCost(mid1024b(), 2);
    // The longest pass a room allows takes the shortest pieces: 4 430 tokens, as above.
    const PassChoice longest = waste::plan::choosePass(c, c.fixed + 2800 * c.perToken, 0);
    EXPECT_EQ(longest.tokens, 4430);
    EXPECT_EQ(longest.piece, 64);
    // With room to spare, the most a pass reads (16 384) keeps whole pieces.
    const PassChoice roomy = waste::plan::choosePass(c, c.fixed + 20000 * c.perToken, 0);
    EXPECT_EQ(roomy.tokens, waste::plan::kMaxPassTokens);
    EXPECT_EQ(roomy.piece, 256);
    // Below 64 tokens even with the shortest pieces: the floor's own 64-token pass.
    const PassChoice floor = waste::plan::choosePass(c, c.fixedAt(64) + 63 * c.perToken, 0);
    EXPECT_EQ(floor.tokens, waste::plan::kMinPassTokens);
    EXPECT_EQ(floor.bytes, 0);
    EXPECT_EQ(waste::plan::passFor(c, c.fixedAt(64) + 63 * c.perToken, 0, 3445, 16384).tokens, waste::plan::kMinPassTokens);
}
