#include "format/dsa_config.hpp"

#include "format/config_keys.hpp"

#include "format/manifest.hpp"
#include "waste/waste.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace waste::format {
namespace {

using nlohmann::json;
using config::count;
using config::refuse;

} // namespace

bool isDsaArch(const std::string &arch) { return arch == "deepseek-v32" || arch == "glm-moe-dsa"; }

void readDsaConfig(const json &cfg, ModelConfig &c, const std::string &where)
{
    DsaConfig &d = c.dsa;
    d.on = true;
    // transformers' defaults (DeepseekV32Config, GlmMoeDsaConfig) where a key is absent.
    const bool glm = c.arch == "glm-moe-dsa";
    d.heads = count(cfg, "index_n_heads", glm ? 32 : 64, 1, Limits::kMaxHeads, where);
    d.headDim = count(cfg, "index_head_dim", 128, 1, Limits::kMaxHeadDim, where);
    d.topk = count(cfg, "index_topk", 2048, 1, 1 << 24, where);
    if (auto it = cfg.find("indexer_rope_interleave"); it != cfg.end() && !it->is_null()) {
        if (!it->is_boolean())
            refuse(where, "config key 'indexer_rope_interleave' is not true or false");
        d.ropeInterleave = it->get<bool>();
    } else {
        d.ropeInterleave = glm; // GlmMoeDsaConfig's default; DeepSeek-V3.2 rotates halves
    }
    if (c.qkRope > d.headDim)
        refuse(where, "qk_rope_head_dim is wider than index_head_dim (the indexer rotates its first qk_rope_head_dim dims)");
    if (c.qLora <= 0)
        refuse(where, "the indexer's queries come from the q latent: q_lora_rank must be positive");

    // Which layers share (HF GlmMoeDsaConfig.__post_init__ order): indexer_types, else
    // index_topk_pattern, else the index_topk_freq / index_skip_topk_offset schedule.
    d.shared.assign(size_t(c.layers), false);
    if (auto it = cfg.find("indexer_types"); it != cfg.end() && !it->is_null()) {
        if (!it->is_array() || it->size() < size_t(c.layers))
            refuse(where, "indexer_types must list \"full\" or \"shared\" for each of the num_hidden_layers layers");
        for (int L = 0; L < c.layers; ++L) {
            const json &v = (*it)[size_t(L)];
            if (!v.is_string() || (v != "full" && v != "shared"))
                refuse(where, "indexer_types[" + std::to_string(L) + "] is not \"full\" or \"shared\"");
            d.shared[size_t(L)] = v == "shared";
        }
    } else if (auto p = cfg.find("index_topk_pattern"); p != cfg.end() && !p->is_null()) {
        if (!p->is_string() || p->get<std::string>().size() < size_t(c.layers))
            refuse(where, "index_topk_pattern must be a string of F and S, one per layer");
        const std::string s = p->get<std::string>();
        for (int L = 0; L < c.layers; ++L) {
            if (s[size_t(L)] != 'F' && s[size_t(L)] != 'S')
                refuse(where, "index_topk_pattern holds '" + std::string(1, s[size_t(L)]) + "', not F or S");
            d.shared[size_t(L)] = s[size_t(L)] == 'S';
        }
    } else {
        const int freq = count(cfg, "index_topk_freq", 1, 1, Limits::kMaxLayers, where);
        const int offset = count(cfg, "index_skip_topk_offset", 2, 0, Limits::kMaxLayers, where);
        for (int L = 0; L < c.layers; ++L)
            d.shared[size_t(L)] = std::max(L - offset + 1, 0) % freq != 0;
    }
    if (c.layers > 0 && d.shared[0])
        refuse(where, "layer 0 cannot reuse a selection: no layer below it runs the indexer");
}

} // namespace waste::format
