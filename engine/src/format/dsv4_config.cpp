#include "format/dsv4_config.hpp"

#include "format/config_keys.hpp"

#include "format/manifest.hpp"

#include "waste/waste.hpp"

#include <nlohmann/json.hpp>

#include <cmath>

namespace waste::format {
namespace {

using nlohmann::json;
using config::count;
using config::number;
using config::refuse;
using config::text;

bool powerOfTwo(int v) { return v > 0 && (v & (v - 1)) == 0; }

} // namespace

void readDsv4Config(const json &cfg, ModelConfig &c, const std::string &where)
{
    Dsv4Config &v = c.v4;
    v.on = true;
    // Keys every release carries; defaults are HF's DeepseekV4Config's where it has them.
    c.experts = count(cfg, "n_routed_experts", 0, 1, Limits::kMaxExperts, where);
    c.topK = count(cfg, "num_experts_per_tok", 0, 1, Limits::kMaxTopK, where);
    c.sharedExperts = count(cfg, "n_shared_experts", 1, 0, 64, where);
    if (c.sharedExperts != 1) // model.py: assert args.n_shared_experts == 1
        throw Error(ErrorCode::Unsupported, where + ": DeepSeek V4 has exactly one shared expert (n_shared_experts " +
                                                std::to_string(c.sharedExperts) + ")");
    c.firstDense = 0; // every layer is a MoE layer
    c.qLora = count(cfg, "q_lora_rank", 0, 1, 1 << 20, where);
    c.qkRope = count(cfg, "qk_rope_head_dim", 64, 2, Limits::kMaxHeadDim, where);
    c.kvLora = c.qkNope = c.vHead = 0;
    c.eps = float(number(cfg, "rms_norm_eps", 1e-6, where));
    c.routedScale = float(number(cfg, "routed_scaling_factor", 1.0, where));
    auto ntp = cfg.find("norm_topk_prob");
    c.renormalize = ntp == cfg.end() || !ntp->is_boolean() || ntp->get<bool>();
    if (!c.renormalize) // model.py divides by the chosen scores' sum whenever scoring is not softmax
        throw Error(ErrorCode::Unsupported, where + ": norm_topk_prob false is not DeepSeek V4's routing");
    const std::string scoring = text(cfg, "scoring_func", "sqrtsoftplus");
    if (scoring != "sqrtsoftplus")
        throw Error(ErrorCode::Unsupported, where + ": scoring_func '" + scoring +
                                                "' is not supported (DeepSeek V4 Flash routes with sqrtsoftplus)");
    const std::string method = text(cfg, "topk_method", "noaux_tc");
    if (method != "noaux_tc")
        throw Error(ErrorCode::Unsupported, where + ": topk_method '" + method + "' is not supported (DeepSeek V4 uses noaux_tc)");
    if (count(cfg, "n_group", 1, 0, 1, where) > 1)
        refuse(where, "DeepSeek V4 routes without expert groups");
    const int kvHeads = count(cfg, "num_key_value_heads", 1, 1, 1, where);
    (void)kvHeads; // one shared key=value head: anything else is refused by count's range

    v.headDim = count(cfg, "head_dim", 512, 2, Limits::kMaxHeadDim, where);
    v.ropeDim = c.qkRope;
    if (v.ropeDim % 2 != 0 || v.ropeDim >= v.headDim)
        refuse(where, "qk_rope_head_dim must be even and smaller than head_dim");
    // (The QAT round trips take blocks of 64 and 32; a last partial block, which no release
    // has, is scaled by its own largest value.)
    v.oGroups = count(cfg, "o_groups", 8, 1, Limits::kMaxHeads, where);
    v.oLora = count(cfg, "o_lora_rank", 1024, 1, 1 << 20, where);
    if (c.heads % v.oGroups != 0)
        refuse(where, "num_attention_heads must be a multiple of o_groups");
    v.window = count(cfg, "sliding_window", 128, 1, 1 << 20, where);
    v.indexHeads = count(cfg, "index_n_heads", 64, 1, Limits::kMaxHeads, where);
    v.indexDim = count(cfg, "index_head_dim", 128, 1, Limits::kMaxHeadDim, where);
    v.indexTopk = count(cfg, "index_topk", 512, 1, 1 << 24, where);
    v.ropeTheta = number(cfg, "rope_theta", 10000.0, where);
    v.compressTheta = number(cfg, "compress_rope_theta", v.ropeTheta, where);
    for (double t : {v.ropeTheta, v.compressTheta})
        if (!(t > 1.0) || !std::isfinite(t))
            refuse(where, "rope_theta and compress_rope_theta must be finite numbers above 1");
    if (auto rs = cfg.find("rope_scaling"); rs != cfg.end() && !rs->is_null()) {
        if (!rs->is_object())
            refuse(where, "rope_scaling is not an object");
        const std::string type = text(*rs, "type", text(*rs, "rope_type", ""));
        if (type != "yarn")
            throw Error(ErrorCode::Unsupported, where + ": rope_scaling type '" + type + "' is not supported (DeepSeek V4 uses yarn)");
        v.yarnFactor = number(*rs, "factor", 1.0, where);
        v.yarnOrig = number(*rs, "original_max_position_embeddings", 0.0, where);
        v.betaFast = number(*rs, "beta_fast", 32.0, where);
        v.betaSlow = number(*rs, "beta_slow", 1.0, where);
        for (double x : {v.yarnFactor, v.yarnOrig, v.betaFast, v.betaSlow})
            if (!(x > 0.0) || !std::isfinite(x))
                refuse(where, "rope_scaling factor, original_max_position_embeddings, beta_fast and beta_slow must be positive");
    }
    v.hashLayers = count(cfg, "num_hash_layers", 0, 0, c.layers, where);
    v.swigluLimit = float(number(cfg, "swiglu_limit", 0.0, where));
    if (!(v.swigluLimit >= 0.0f) || !std::isfinite(v.swigluLimit))
        refuse(where, "swiglu_limit must be a finite number >= 0");
    v.hcMult = count(cfg, "hc_mult", 4, 1, 16, where);
    v.hcIters = count(cfg, "hc_sinkhorn_iters", 20, 1, 1000, where);
    v.hcEps = float(number(cfg, "hc_eps", 1e-6, where));

    // compress_ratios: one per layer, then the MTP block's (and later builds' padding), read
    // past. Absent, HF's config class builds V4-Pro's schedule, so it is required here.
    auto cr = cfg.find("compress_ratios");
    if (cr == cfg.end() || !cr->is_array() || cr->size() < size_t(c.layers))
        refuse(where, "compress_ratios must list a ratio for each of the " + std::to_string(c.layers) + " layers");
    v.ratios.clear();
    for (int L = 0; L < c.layers; ++L) {
        const json &r = (*cr)[size_t(L)];
        if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() > (1 << 20) || r.get<int64_t>() == 1)
            refuse(where, "compress_ratios[" + std::to_string(L) + "] must be 0 (window only) or a ratio of at least 2");
        v.ratios.push_back(int(r.get<int64_t>()));
    }
    bool anyIndexed = false;
    for (int L = 0; L < c.layers; ++L)
        anyIndexed = anyIndexed || v.indexed(L);
    // The indexer's Hadamard rotation needs a power of two.
    if (anyIndexed && (!powerOfTwo(v.indexDim) || v.indexDim <= v.ropeDim))
        refuse(where, "index_head_dim must be a power of two wider than qk_rope_head_dim");
    if (c.moeInter <= 0)
        refuse(where, "moe_intermediate_size must be positive");
}

} // namespace waste::format
