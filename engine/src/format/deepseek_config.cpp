#include "format/deepseek_config.hpp"

#include "format/config_keys.hpp"

#include "waste/waste.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace waste::format {
namespace {

using nlohmann::json;
using config::count;
using config::flag;
using config::number;
using config::refuse;
using config::text;

void readRope(const json &cfg, RopeParams &r, const std::string &where)
{
    r.enabled = true;
    // Newer configs (GLM-5) nest theta and the scaling in rope_parameters; rope_type
    // "default" there is plain RoPE.
    const auto params = cfg.find("rope_parameters");
    const bool nested = params != cfg.end() && params->is_object();
    r.theta = number(nested && params->contains("rope_theta") ? *params : cfg, "rope_theta", 10000.0, where);
    if (!(r.theta > 1.0) || !std::isfinite(r.theta))
        refuse(where, "rope_theta must be a finite number above 1");
    auto it = cfg.find("rope_scaling");
    if ((it == cfg.end() || it->is_null()) && nested)
        it = params;
    if (it == cfg.end() || it->is_null())
        return;
    if (!it->is_object())
        refuse(where, "rope_scaling is not an object");
    const json &s = *it;
    std::string type = text(s, "type");
    if (type.empty())
        type = text(s, "rope_type");
    if (nested && it == params && (type.empty() || type == "default"))
        return;
    if (type != "yarn")
        throw Error(ErrorCode::Unsupported, where + ": rope_scaling type '" + type +
                                                "' is not supported (DeepSeek-V3 and Kimi K2 releases use yarn)");
    r.yarn = true;
    r.factor = number(s, "factor", 1.0, where);
    r.betaFast = number(s, "beta_fast", 32.0, where);
    r.betaSlow = number(s, "beta_slow", 1.0, where);
    r.mscale = number(s, "mscale", 1.0, where);
    r.mscaleAllDim = number(s, "mscale_all_dim", 0.0, where);
    // (Absent, transformers takes max_position_embeddings as the original length.)
    r.originalMax = number(s, "original_max_position_embeddings", number(cfg, "max_position_embeddings", 4096.0, where), where);
    for (double v : {r.factor, r.betaFast, r.betaSlow, r.originalMax})
        if (!(v > 0.0) || !std::isfinite(v))
            refuse(where, "rope_scaling factor, beta_fast, beta_slow and original_max_position_embeddings must be positive");
    if (!std::isfinite(r.mscale) || !std::isfinite(r.mscaleAllDim))
        refuse(where, "rope_scaling mscale and mscale_all_dim must be finite");
}

} // namespace

bool isDeepseekFamily(const std::string &arch)
{
    return arch == "deepseek-v3" || arch == "kimi-k2" || arch == "deepseek-v32" || arch == "glm-moe-dsa";
}

void readNoauxRouting(const json &cfg, ModelConfig &c, const std::string &where, const std::string &family, int groups,
                      int keptGroups)
{
    c.groups = count(cfg, "n_group", groups, 1, Limits::kMaxExperts, where);
    c.topkGroups = count(cfg, "topk_group", std::min(keptGroups, c.groups), 1, c.groups, where);
    if (c.experts <= 0)
        return;
    if (c.experts % c.groups != 0)
        refuse(where, "n_routed_experts " + std::to_string(c.experts) + " is not a multiple of n_group " +
                          std::to_string(c.groups));
    if (c.groups > 1 && c.experts / c.groups < 2)
        refuse(where, "group-limited routing needs at least 2 experts per group");
    if (int64_t(c.topkGroups) * (c.experts / c.groups) < c.topK)
        refuse(where, "topk_group groups hold fewer experts than num_experts_per_tok");
    const std::string scoring = text(cfg, "scoring_func"), method = text(cfg, "topk_method");
    if (!scoring.empty() && scoring != "sigmoid")
        throw Error(ErrorCode::Unsupported, where + ": scoring_func '" + scoring + "' is not supported (" + family +
                                                " routes with sigmoid)");
    if (!method.empty() && method != "noaux_tc")
        throw Error(ErrorCode::Unsupported, where + ": topk_method '" + method + "' is not supported (" + family +
                                                " routes with noaux_tc)");
}

void readDeepseekConfig(const json &cfg, ModelConfig &c, const std::string &where)
{
    // The Kimi-Linear spellings win when a config has both (parseConfig read them).
    if (!cfg.contains("num_experts"))
        c.experts = count(cfg, "n_routed_experts", count(cfg, "num_local_experts", 0, 0, Limits::kMaxExperts, where), 0,
                          Limits::kMaxExperts, where); // (num_local_experts: HF's alias)
    if (!cfg.contains("num_experts_per_token"))
        c.topK = count(cfg, "num_experts_per_tok", 0, 0, Limits::kMaxTopK, where);
    if (!cfg.contains("num_shared_experts"))
        c.sharedExperts = count(cfg, "n_shared_experts", 0, 0, 64, where);
    // Keys a config leaves out take the transformers class's defaults (DeepseekV3Config,
    // DeepseekV32Config, GlmMoeDsaConfig; Kimi K2 has none and reads as DeepSeek-V3): the
    // routing renormalised and scaled by 2.5, rms_norm_eps 1e-6 (GLM-5 1e-5), 8 groups of
    // which 4 kept (GLM-5 one group), 3 dense first layers. (The generic reading's defaults
    // are Kimi-Linear's.)
    const bool glm = c.arch == "glm-moe-dsa";
    c.renormalize = flag(cfg, "norm_topk_prob", true);
    if (!cfg.contains("routed_scaling_factor"))
        c.routedScale = 2.5f;
    if (!cfg.contains("rms_norm_eps"))
        c.eps = glm ? 1e-5f : 1e-6f;
    if (!cfg.contains("first_k_dense_replace") && !cfg.contains("mlp_layer_types"))
        c.firstDense = std::min(3, c.layers);
    const std::string family = glm ? "GLM-5" : c.arch == "deepseek-v32" ? "DeepSeek-V3.2" : "DeepSeek-V3";
    readNoauxRouting(cfg, c, where, family, glm ? 1 : 8, glm ? 1 : 4);
    if (c.qkRope % 2 != 0)
        refuse(where, "qk_rope_head_dim must be even to be rotated in pairs");
    readRope(cfg, c.rope, where);
    // The MLA's rotated dims are paired (2i, 2i+1) in every release of the family; GLM-5 says
    // so with rope_interleave (docs/architectures/dsa.md).
    if (auto it = cfg.find("rope_interleave"); it != cfg.end() && it->is_boolean() && !it->get<bool>())
        throw Error(ErrorCode::Unsupported, where + ": rope_interleave false (rotate-half MLA RoPE) is not supported (" +
                                                family + " releases rotate interleaved pairs)");
    // GLM-5 lists its stop ids; the first is the end of text.
    if (auto it = cfg.find("eos_token_id"); it != cfg.end() && it->is_array() && !it->empty() && (*it)[0].is_number_integer())
        c.eosId = (*it)[0].get<int64_t>();
    // GLM-5.2 names each layer's MLP ("dense" / "sparse") on top of first_k_dense_replace.
    if (auto it = cfg.find("mlp_layer_types"); it != cfg.end() && it->is_array()) {
        if (it->size() < size_t(c.layers))
            refuse(where, "mlp_layer_types must name the MLP of each of the num_hidden_layers layers");
        c.denseMlp.assign(size_t(c.layers), false);
        for (int L = 0; L < c.layers; ++L) {
            const json &v = (*it)[size_t(L)];
            if (!v.is_string() || (v != "dense" && v != "sparse"))
                refuse(where, "mlp_layer_types[" + std::to_string(L) + "] is not \"dense\" or \"sparse\"");
            c.denseMlp[size_t(L)] = v == "dense";
        }
        if (c.inter <= 0 && std::find(c.denseMlp.begin(), c.denseMlp.end(), true) != c.denseMlp.end())
            refuse(where, "dense layers need intermediate_size > 0");
    }
    c.moeBlock = "mlp.";
}

} // namespace waste::format
