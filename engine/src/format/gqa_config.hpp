// The switches of the grouped-query-attention families, Qwen3-MoE and gpt-oss, read from
// their own config.json keys (model/notes/qwen3-moe.md, gpt-oss.md). Kept apart from the
// Kimi keys in manifest.cpp because these releases spell experts, top-k and attention
// their own way.
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
    bool attnBias = false; // gpt-oss: q, k, v and o projections carry biases
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
    bool expertBias = false;  // gpt-oss: biases on gate/up and down of every expert
    float swigluLimit = 0.0f; // > 0: gpt-oss's clamped SwiGLU with swigluAlpha
    float swigluAlpha = 0.0f;
    bool tied = false;        // tie_word_embeddings: the head is the embedding table

    int slots(int layer, int ctx) const; // KV-cache positions a layer keeps
};

// "qwen3-moe" / "gpt-oss" for an architectures string of those families, else null.
const char *gqaArchName(const std::string &architecture);

// Fills c.g and the expert keys these families name differently (num_experts_per_tok,
// num_local_experts, gpt-oss's intermediate_size). Throws Error(Format/Unsupported).
void readGqaConfig(const nlohmann::json &cfg, ModelConfig &c, const std::string &where);

} // namespace waste::format
