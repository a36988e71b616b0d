#include "plan/floor.hpp"

#include <algorithm>

namespace waste::plan {

int64_t visionBytes(const PlanInputs &in)
{
    if (in.visionWeightBytes <= 0)
        return 0;
    const int64_t D = in.vtHidden, Q = in.vtQkv, I = in.vtInter, PH = in.posH, PW = in.posW, MP = in.maxPatches;
    const int64_t T = in.textHidden > 0 ? in.textHidden : in.hidden;
    const bool inRange = T > 0 && D >= 1 && D <= (1 << 20) && Q >= 1 && Q <= (1 << 20) && I >= 1 && I <= (1 << 22) &&
                         PH >= 1 && PH <= (1 << 16) && PW >= 1 && PW <= (1 << 16) && MP >= 4 && MP <= (1 << 20);
    if (!inRange)
        return in.visionWeightBytes;
    const int64_t queue = 32 * ((MP + 3) / 4) * T * 4;          // 32 queued images of MP/4 rows
    const int64_t pixels = MP * 588 * 4;                         // one patch tensor (14 x 14 x 3)
    const int64_t tower = 4 * (5 * MP * D + 4 * MP * Q + MP * I + MP + PH * PW * D);
    const int64_t decode = int64_t(3) << 26;                     // largest accepted source image
    return in.visionWeightBytes + 2 * queue + pixels + tower + decode; // two queues: a realloc may hold both
}

FloorTerms computeFloor(const PlanInputs &in, int64_t ctx)
{
    FloorTerms f;
    f.trunk = in.trunkBytes;

    // Attention state: KDA S matrices and conv rings (f32) on KDA layers, the MLA latent
    // cache for `ctx` positions (f32) on the others.
    const int64_t nKda = in.kdaLayers, nMla = in.layers - in.kdaLayers - in.gqaLayers - in.v4Layers;
    const int64_t perLinear = in.linearStateBytes > 0 ? in.linearStateBytes
                                                      : in.kdaHeads * in.kdaDim * in.kdaDim * 4 +
                                                            3 * (in.convKernel - 1) * in.kdaHeads * in.kdaDim * 4;
    f.state = nKda * perLinear + nMla * ctx * (in.kvLora + in.qkRope) * 4;
    // DeepSeek Sparse Attention: the indexer's key (f32) of every position on its layers.
    f.state += in.indexLayers * ctx * in.indexHeadDim * 4;
    // GQA keys and values (f32): ctx positions on full layers, at most a window on sliding ones.
    const int64_t kvRow = 2 * in.kvHeads * in.headDim * 4;
    f.state += (in.gqaLayers - in.gqaSlidingLayers) * ctx * kvRow +
               in.gqaSlidingLayers * std::min(ctx, in.window > 0 ? in.window : ctx) * kvRow;

    // DeepSeek V4: window rings and compressor states, and the compressed rows `ctx` positions make.
    f.state += in.v4FixedStateBytes;
    for (const PlanInputs::RowLayer &r : in.v4RowLayers)
        f.state += ctx / r.ratio * r.rowFloats * 4;

    // Scratch, counted term by term (a flat guess once under-counted K3 by 0.7 GB).
    const int64_t H = in.hidden, Im = in.moeInter, I = in.inter, Lt = in.expertWidth, E = in.experts, k = in.topK;
    const int64_t nb = in.attnResBlock > 0 ? in.layers / in.attnResBlock + 2 : 1;
    const int64_t big = std::max(H, in.kdaHeads * in.kdaDim);
    const int64_t lw = std::max({H, Lt, Im});
    const int64_t lut = (lw / in.vecDim + 1) * in.stages * in.entries;
    const int64_t nsc = (lw / in.vecDim + 1) / 32 + 2;
    // T: the tokens of a chunk (the floor's prompt pass reads 64).
    auto scratchFor = [&](int64_t T) {
        const int64_t terms[] = {
            3 * Im * H * 4,                                                    // expert staging
            2 * std::max(I, Im) * 4,                                           // FFN buffer
            (std::max({ctx * in.heads, in.kdaHeads * in.kdaDim, 4096 + 2 * E}) + 1024) * 4, // attention / router
            in.vocab * 4,                                                      // logits
            (8 * big + 8 * Im + 8 * I + 512) * 4,                              // per-token scratch
            3 * in.heads * std::max<int64_t>(in.kvLora, 1) * 4,                // MLA absorption
            (nb + 4) * H * 4,                                                  // AttnRes + latent staging
            3 * T * H * 4,                                                     // prefill activations
            ((2 * T + 1) * lut + 64) * 4,                                      // prefill LUTs
            3 * lut * 4,                                                       // decode LUTs
            3 * lut + 3 * nsc * 4 + (2 * T + 1) * (lut + nsc * 4) + 64,        // int8 LUT shadows
            k * (2 * Im + Lt) * 4 + k * lut * 4 + k * (lut + nsc * 4),         // per-expert (parallel path)
            (T * (2 * Im * in.sharedExperts + H) + 64) * 4,                    // prefill shared experts
            T * (2 * Lt + 2 * H) * 4,                                          // prefill latent
            2 * T * I * 4,                                                     // prefill dense FFN
            3 * Im * Lt * 4,                                                   // one expanded expert
            T * nb * H * 4 + T * H * 4,                                        // prefill AttnRes history + partials
            T * 64 * 12,                                                       // prefill routing
            in.indexLayers > 0 ? T * (in.indexTopk * 4 + 64) + ctx * 8 : 0,   // DSA selections, one query's scores
            in.hcMult > 0 ? (in.hcMult + 2) * T * H * 4 : 0,                   // DeepSeek V4's streams and mixes
        };
        int64_t sum = 0;
        for (int64_t t : terms)
            sum += t;
        return sum;
    };
    f.scratch = scratchFor(64);
    // What of it only a prompt's chunk uses: a batched decode step reads one token per
    // sequence (at most 16), so a pass (plan/pass_plan.hpp) may spend the rest.
    f.passScratch = f.scratch - scratchFor(16);

    f.minExpertCache = in.recordBytes * k * 2; // one layer's top-k, double-buffered
    // One token's expert reads: top-k records on each MoE layer (the reference's figure counts
    // dense layers too: 5 % more on DeepSeek-V3's 3 dense of 61; it stays the budget's step).
    f.workingSet = in.recordBytes * k * (in.moeLayers > 0 ? in.moeLayers : in.layers);
    f.budgetStep = in.recordBytes * k * in.layers;
    f.vision = visionBytes(in);
    return f;
}

} // namespace waste::plan
