// The trunk tensors a Kimi-Linear (or K3 text) forward pass reads, loaded and shape-checked.
#pragma once

#include "format/codebooks.hpp"
#include "format/manifest.hpp"
#include "format/trunk.hpp"

#include <memory>
#include <vector>

namespace waste::model {

using TensorPtr = std::shared_ptr<format::TrunkTensor>;

struct FfnWeights {
    TensorPtr gate, up, down;
};

struct KdaWeights {
    TensorPtr q, k, v, qConv, kConv, vConv, fa, fb, b, aLog, dtBias, ga, gb, g, oNorm, o;
};

// DeepSeek Sparse Attention's lightning indexer (dsa_indexer.cpp): queries from the q latent
// (wq_b), one key per token (wk, then a LayerNorm with bias), per-head weights. All null on a
// layer without an indexer (GLM-5.2's shared layers, and every other family).
struct IndexerWeights {
    TensorPtr wqb, wk, kNorm, kNormBias, headWeights;
};

struct MlaWeights {
    TensorPtr q, qa, qaNorm, qb, kva, kvaNorm, kvb, o, g;
    IndexerWeights idx;
};

// Grouped-query attention (Qwen3-MoE, Qwen3-Next, gpt-oss, GLM-4.5): biases, q/k norms and sinks where the
// family has them (null otherwise).
struct GqaWeights {
    TensorPtr q, k, v, o, qBias, kBias, vBias, oBias, qNorm, kNorm, sinks;
};

// Qwen3-Next's Gated DeltaNet (model/gated_deltanet.cpp): q, k, v and the output gate z
// in one projection, b (beta) and a (decay) in another, both grouped by key head; one
// convolution over the q, k and v channels; the gated norm's weight (plain, not 1 + w).
struct GdnWeights {
    TensorPtr qkvz, ba, conv, aLog, dtBias, norm, out;
    // Qwen3.5-MoE stores the projections apart (GqaConfig::splitProjections); qkvz and ba are
    // then null and these hold q|k|v (conv channel order), z, b and a.
    TensorPtr qkv, z, b, a;
};

// DeepSeek V4 Flash (docs/architectures/deepseek-v4-flash.md): a KV compressor, the
// indexer, the attention with its grouped output projection, and each sublayer's
// hyper-connection mixes.
struct Dsv4CompressorWeights {
    TensorPtr wkv, wgate, ape, norm; // ape: F32 [ratio, c·dim]
};
struct Dsv4Weights {
    TensorPtr wqA, qNorm, wqB, wkv, kvNorm, sinks, woB;
    std::vector<TensorPtr> woA; // wo_a split by output group: o_groups matrices [o_lora_rank, heads/groups · head_dim]
    Dsv4CompressorWeights comp, indexComp;
    TensorPtr indexWqB, indexWeights;
    TensorPtr hcAttnFn, hcAttnBase, hcAttnScale, hcFfnFn, hcFfnBase, hcFfnScale;
    TensorPtr tid2eid; // hash layers: [vocab, top-k] expert ids, stored as F32
};

struct MoeWeights {
    TensorPtr router, bias; // bias: F32 e_score_correction_bias or null (zeros)
    FfnWeights shared;
    TensorPtr latentDown, latentUp, latentNorm; // K3 latent MoE
    TensorPtr routerBias, gateUpBias, downBias;  // gpt-oss: [E], [E, 2 Im] (gate/up interleaved), [E, Hd]
    TensorPtr sharedGate;                        // Qwen3-Next: [1, Hd], the shared expert's sigmoid gate
};

struct LayerWeights {
    bool kda = false;
    bool moe = false;
    TensorPtr inNorm, postNorm;
    TensorPtr attnResNorm, attnResProj, mlpResNorm, mlpResProj; // K3 Attention Residuals
    KdaWeights k;
    MlaWeights m;
    GqaWeights g;
    GdnWeights gdn;
    FfnWeights dense;
    MoeWeights moeW;
    Dsv4Weights v4;
};

struct Weights {
    TensorPtr embed, norm, head;
    TensorPtr outResNorm, outResProj; // K3 Attention Residuals: final aggregation
    TensorPtr hcHeadFn, hcHeadBase, hcHeadScale; // DeepSeek V4: the streams merged for the head
    std::vector<LayerWeights> layers;
    int64_t residentBytes = 0;
};

// Loads every tensor the text path needs; throws Error(Format) naming the first bad one.
Weights loadWeights(const format::Manifest &m, const format::Trunk &trunk);

} // namespace waste::model
