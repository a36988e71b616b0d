// DeepSeek Sparse Attention's config keys (DeepSeek-V3.2 and GLM-5.x;
// docs/architectures/dsa.md): the lightning indexer's heads, width and top-k, its RoPE pair
// layout, and which layers reuse the previous indexer layer's selection (GLM-5.2).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace waste::format {

struct ModelConfig;

struct DsaConfig {
    bool on = false;
    int heads = 0, headDim = 0, topk = 0; // index_n_heads, index_head_dim, index_topk
    // The indexer's rotated dims are its first qk_rope_head_dim ones, paired (2i, 2i+1) when
    // interleaved (GLM-5), (i, i + dr/2) otherwise (DeepSeek-V3.2's rotate-half).
    bool ropeInterleave = false;
    // Per layer: true where the layer runs no indexer and attends over the selection of the
    // nearest layer below it that does (GLM-5.2's "shared" layers). Empty: every layer indexes.
    std::vector<bool> shared;
    bool sharedLayer(int L) const { return size_t(L) < shared.size() && shared[size_t(L)]; }
    // The layer whose selection layer L uses (L itself unless shared).
    int indexerLayer(int L) const
    {
        while (L > 0 && sharedLayer(L))
            --L;
        return L;
    }
};

// True for the architectures with DeepSeek Sparse Attention ("deepseek-v32", "glm-moe-dsa").
bool isDsaArch(const std::string &arch);

// Fills c.dsa (c.layers and c.qkRope read before); throws Error(Format) naming the key.
void readDsaConfig(const nlohmann::json &cfg, ModelConfig &c, const std::string &where);

} // namespace waste::format
