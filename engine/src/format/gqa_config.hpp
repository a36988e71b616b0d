// The switches of the grouped-query-attention families, Qwen3-MoE, Qwen3-Next, Qwen3.5-MoE,
// gpt-oss and GLM-4.5, read from their own config.json keys (docs/architectures/qwen3-moe.md,
// gpt-oss.md, qwen3-next.md, qwen3.5-moe.md, glm4-moe.md). Kept apart from the Kimi keys in manifest.cpp because these
// releases spell experts, top-k and attention their own way.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace waste::format {

struct ModelConfig;

struct GqaConfig {
    bool on = false;     // every layer is grouped-query attention with a rotary embedding
    int kvHeads = 0, headDim = 0;
    double ropeTheta = 10000.0;
    bool qkNorm = false;   // Qwen3: RMSNorm over each head of q and k before the rotation
    bool attnBias = false; // gpt-oss, GLM-4.5: q, k and v projections carry biases
    bool outBias = false;  // gpt-oss: o_proj carries one too (GLM-4.5's has none)
    bool sinks = false;    // gpt-oss: a learned logit per head joins every softmax
    int window = 0;        // sliding-window length (0: none)
    std::vector<bool> sliding; // per layer: attends to the last `window` positions only
    // YaRN (gpt-oss): 0 = plain RoPE.
    double yarnFactor = 0, yarnBetaFast = 32, yarnBetaSlow = 1, yarnOrigCtx = 4096;
    bool yarnTruncate = true;
    // Routing: Qwen3 takes the softmax over all experts, then the top k (renormalised when
    // norm_topk_prob); gpt-oss takes the top k of the logits (router bias added), then
    // the softmax over those k.
    bool softmaxOverTopK = false;
    bool routerBias = false;
    // GLM-4.5: DeepSeek-V3's router instead (sigmoid scores, e_score_correction_bias for
    // selection only, group-limited top-k, norm_topk_prob, routed_scaling_factor), and
    // dense layers before ModelConfig::firstDense.
    bool sigmoidRouter = false;
    bool expertBias = false;  // gpt-oss: biases on gate/up and down of every expert
    float swigluLimit = 0.0f; // > 0: gpt-oss's clamped SwiGLU with swigluAlpha
    float swigluAlpha = 0.0f;
    bool tied = false;        // tie_word_embeddings: the head is the embedding table
    // Qwen3-Next (docs/architectures/qwen3-next.md): Gated DeltaNet layers (ModelConfig::isKda
    // marks them) between gated full-attention layers, norms stored zero-centred, one
    // shared expert with a sigmoid gate.
    bool next = false;
    // Qwen3.5-MoE (docs/architectures/qwen3.5-moe.md): Qwen3-Next's text model with the Gated
    // DeltaNet's projections stored apart (in_proj_qkv, in_proj_z, in_proj_b, in_proj_a)
    // instead of interleaved per key head (in_proj_qkvz, in_proj_ba).
    bool splitProjections = false;
    bool outputGate = false;      // q_proj doubles: each head's q, then its output gate
    int rotaryDim = 0;            // rotated dims of a head (partial_rotary_factor); 0: all
    bool zeroCentredNorm = false; // RMSNorm weights are stored as w and applied as 1 + w
    int sharedInter = 0;          // the shared expert's width (0: none; GLM-4.5: n_shared_experts x moe_intermediate_size)
    // Gated DeltaNet: key heads (q, k) and value heads (v, z, state), their widths, the
    // short-convolution taps (ModelConfig::convK).
    int linKeyHeads = 0, linValueHeads = 0, linKeyDim = 0, linValueDim = 0;
    int linKeyWidth() const { return linKeyHeads * linKeyDim; }
    int linValueWidth() const { return linValueHeads * linValueDim; }
    int linConvWidth() const { return 2 * linKeyWidth() + linValueWidth(); } // q, k, v channels convolved

    int slots(int layer, int ctx) const; // KV-cache positions a layer keeps
};

// Fills c.g and the expert keys these families name differently (num_experts_per_tok,
// num_local_experts, gpt-oss's intermediate_size). Throws Error(Format/Unsupported).
void readGqaConfig(const nlohmann::json &cfg, ModelConfig &c, const std::string &where);

// Qwen3-Next's and Qwen3.5-MoE's layer schedule and linear-attention keys (layer_types or
// full_attention_interval, linear_*): marks the Gated DeltaNet layers in c.isKda. Runs
// after the Kimi keys are read. Throws Error(Format/Unsupported).
void readQwen3NextLayers(const nlohmann::json &cfg, ModelConfig &c, const std::string &where);

} // namespace waste::format
