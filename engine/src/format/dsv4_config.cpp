#include "format/dsv4_config.hpp"

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
using config::number;
using config::refuse;
using config::text;

bool powerOfTwo(int v) { return v > 0 && (v & (v - 1)) == 0; }

// YaRN on the compressed layers, from the release's flat rope_scaling or the compress table
// HF nests. Frequencies are blended only: a magnitude factor other than 1 (HF's
// attention_factor, which it derives as 0.1·ln(factor) + 1 in a nested table that leaves it
// out) is not what the release computes, so it is refused rather than dropped.
void readYarn(const json &s, double defaultOrig, bool nested, Dsv4Config &v, const std::string &where)
{
    v.yarnFactor = number(s, "factor", 1.0, where);
    v.yarnOrig = number(s, "original_max_position_embeddings", defaultOrig, where);
    v.betaFast = number(s, "beta_fast", 32.0, where);
    v.betaSlow = number(s, "beta_slow", 1.0, where);
    for (double x : {v.yarnFactor, v.yarnOrig, v.betaFast, v.betaSlow})
        if (!(x > 0.0) || !std::isfinite(x))
            refuse(where, "rope_scaling factor, original_max_position_embeddings, beta_fast and beta_slow must be positive");
    const bool given = s.contains("attention_factor") && !s["attention_factor"].is_null();
    const double magnitude = given ? number(s, "attention_factor", 1.0, where) : nested ? 0.1 * std::log(v.yarnFactor) + 1.0 : 1.0;
    if (std::fabs(magnitude - 1.0) > 1e-9)
        throw Error(ErrorCode::Unsupported, where + ": a YaRN attention_factor other than 1 is not DeepSeek V4's RoPE "
                                                    "(the compressed layers blend frequencies only)");
}

// The two RoPE tables: plain on window-only layers, YaRN-blended on compressed ones. The
// release writes rope_theta, compress_rope_theta and rope_scaling; a config HF saved nests
// them as rope_parameters {main, compress}.
void readRope(const json &cfg, Dsv4Config &v, const std::string &where)
{
    const double maxPos = number(cfg, "max_position_embeddings", 1048576.0, where); // HF's default original length
    const json *main = nullptr, *comp = nullptr;
    if (auto rp = cfg.find("rope_parameters"); rp != cfg.end() && rp->is_object()) {
        auto m = rp->find("main"), k = rp->find("compress");
        if (m != rp->end() && m->is_object() && k != rp->end() && k->is_object()) {
            main = &*m;
            comp = &*k;
        }
    }
    const auto typeOf = [](const json &s) { return text(s, "rope_type", text(s, "type", "default")); };
    if (main) {
        if (typeOf(*main) != "default")
            throw Error(ErrorCode::Unsupported, where + ": rope_parameters.main must be plain RoPE (rope_type '" +
                                                    typeOf(*main) + "')");
        v.ropeTheta = number(*main, "rope_theta", 10000.0, where);
        v.compressTheta = number(*comp, "rope_theta", 160000.0, where);
    } else {
        v.ropeTheta = number(cfg, "rope_theta", 10000.0, where);
        v.compressTheta = number(cfg, "compress_rope_theta", 160000.0, where); // HF's default
    }
    for (double t : {v.ropeTheta, v.compressTheta})
        if (!(t > 1.0) || !std::isfinite(t))
            refuse(where, "rope_theta and compress_rope_theta must be finite numbers above 1");
    // (rope_parameters written flat, as HF writes other families', stands for rope_scaling.)
    const json *scaling = comp;
    for (const char *key : {"rope_scaling", "rope_parameters"})
        if (auto rs = cfg.find(key); !scaling && rs != cfg.end() && !rs->is_null()) {
            if (!rs->is_object())
                refuse(where, std::string(key) + " is not an object");
            scaling = &*rs;
        }
    if (!scaling)
        return;
    const std::string type = typeOf(*scaling);
    if (type == "yarn")
        readYarn(*scaling, maxPos, comp != nullptr, v, where);
    else if (type != "default")
        throw Error(ErrorCode::Unsupported, where + ": rope_scaling type '" + type + "' is not supported (DeepSeek V4 uses yarn)");
}

// num_hash_layers (the release; HF's default 3), or HF's mlp_layer_types: the hash-routed
// layers must come first, as the release has them.
int hashLayers(const json &cfg, int layers, const std::string &where)
{
    auto types = cfg.find("mlp_layer_types");
    if (types == cfg.end() || types->is_null())
        return std::min(count(cfg, "num_hash_layers", 3, 0, 1 << 20, where), layers);
    if (!types->is_array() || types->size() != size_t(layers))
        refuse(where, "mlp_layer_types must name one kind for each of the " + std::to_string(layers) + " layers");
    int hash = 0;
    for (size_t L = 0; L < types->size(); ++L) {
        const std::string t = (*types)[L].is_string() ? (*types)[L].get<std::string>() : std::string();
        if (t != "hash_moe" && t != "moe")
            refuse(where, "mlp_layer_types[" + std::to_string(L) + "] must be \"hash_moe\" or \"moe\"");
        if (t == "hash_moe" && size_t(hash) != L)
            throw Error(ErrorCode::Unsupported, where + ": hash-routed layers after a score-routed one are not supported");
        hash += t == "hash_moe";
    }
    return hash;
}

// One compression ratio per layer (0: window only). The release lists them in
// compress_ratios (then the MTP block's, read past); a config HF saved names each layer's
// kind in layer_types, with the rates of compressed_sparse_attention and
// heavily_compressed_attention in compress_rates (or compress_rate_csa / _hca), which HF lets
// override the ratios the list gives for those kinds. Overlapping windows and the indexer go
// with ratio 4 (model.py), so a sparse kind at another rate is refused.
std::vector<int> layerRatios(const json &cfg, int layers, const std::string &where)
{
    int csa = 4, hca = 128;
    if (auto cr = cfg.find("compress_rates"); cr != cfg.end() && cr->is_object()) {
        csa = count(*cr, "compressed_sparse_attention", csa, 2, 1 << 20, where);
        hca = count(*cr, "heavily_compressed_attention", hca, 2, 1 << 20, where);
    }
    csa = count(cfg, "compress_rate_csa", csa, 2, 1 << 20, where);
    hca = count(cfg, "compress_rate_hca", hca, 2, 1 << 20, where);
    if (csa != 4 || hca == 4)
        throw Error(ErrorCode::Unsupported, where + ": compressed_sparse_attention at a rate other than 4 (or heavily "
                                                    "compressed attention at 4) is not supported");
    std::vector<int> ratios;
    if (auto lt = cfg.find("layer_types"); lt != cfg.end() && !lt->is_null()) {
        if (!lt->is_array() || lt->size() < size_t(layers))
            refuse(where, "layer_types must name a kind for each of the " + std::to_string(layers) + " layers");
        for (int L = 0; L < layers; ++L) {
            const json &t = (*lt)[size_t(L)];
            const std::string kind = t.is_string() ? t.get<std::string>() : std::string();
            if (kind == "sliding_attention")
                ratios.push_back(0);
            else if (kind == "compressed_sparse_attention")
                ratios.push_back(csa);
            else if (kind == "heavily_compressed_attention")
                ratios.push_back(hca);
            else
                refuse(where, "layer_types[" + std::to_string(L) + "] '" + kind + "' is not a DeepSeek V4 attention kind");
        }
        return ratios;
    }
    // Absent, HF's config class builds V4-Pro's schedule, so the list is required here.
    auto cr = cfg.find("compress_ratios");
    if (cr == cfg.end() || !cr->is_array() || cr->size() < size_t(layers))
        refuse(where, "compress_ratios must list a ratio for each of the " + std::to_string(layers) + " layers");
    for (int L = 0; L < layers; ++L) {
        const json &r = (*cr)[size_t(L)];
        if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() > (1 << 20) || r.get<int64_t>() == 1)
            refuse(where, "compress_ratios[" + std::to_string(L) + "] must be 0 (window only) or a ratio of at least 2");
        const int ratio = int(r.get<int64_t>());
        ratios.push_back(ratio == 128 ? hca : ratio); // a 4 is the sparse kind, already at csa
    }
    return ratios;
}

} // namespace

void checkTrainedRounding(const ModelConfig &c)
{
    if (!c.v4.on)
        return;
    for (int L = 0; L < c.layers; ++L)
        if (c.v4.indexed(L) && !powerOfTwo(c.v4.indexDim))
            throw Error(ErrorCode::Unsupported, "the trained rounding rotates the indexer's heads by a Hadamard transform, "
                                                "which needs index_head_dim a power of two (it is " +
                                                    std::to_string(c.v4.indexDim) + "); open it without the trained rounding");
}

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
    v.headDim = count(cfg, "head_dim", 512, 2, Limits::kMaxHeadDim, where);
    // The rotated width: the release's qk_rope_head_dim, else HF's partial_rotary_factor
    // (int(head_dim · factor), as HF truncates), else HF's default 64/512 of head_dim.
    if (cfg.contains("qk_rope_head_dim") || !cfg.contains("partial_rotary_factor")) {
        c.qkRope = count(cfg, "qk_rope_head_dim", v.headDim / 8, 2, Limits::kMaxHeadDim, where);
    } else {
        const double f = number(cfg, "partial_rotary_factor", 0.125, where);
        if (!(f > 0.0 && f < 1.0))
            refuse(where, "partial_rotary_factor must lie between 0 and 1");
        c.qkRope = int(double(v.headDim) * f);
    }
    c.kvLora = c.qkNope = c.vHead = 0;
    c.eps = float(number(cfg, "rms_norm_eps", 1e-6, where));
    c.routedScale = float(number(cfg, "routed_scaling_factor", 1.5, where));
    // norm_topk_prob is read past: model.py divides by the chosen scores' sum whenever scoring
    // is not softmax, and HF's DeepseekV4 router always normalises, whatever the key says.
    c.renormalize = true;
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
    readRope(cfg, v, where);
    v.hashLayers = hashLayers(cfg, c.layers, where);
    v.swigluLimit = float(number(cfg, "swiglu_limit", 10.0, where));
    if (!(v.swigluLimit >= 0.0f) || !std::isfinite(v.swigluLimit))
        refuse(where, "swiglu_limit must be a finite number >= 0");
    v.hcMult = count(cfg, "hc_mult", 4, 1, 16, where);
    v.hcIters = count(cfg, "hc_sinkhorn_iters", 20, 1, 1000, where);
    v.hcEps = float(number(cfg, "hc_eps", 1e-6, where));

    v.ratios = layerRatios(cfg, c.layers, where);
    if (std::any_of(v.ratios.begin(), v.ratios.end(), [](int r) { return r == 4; }) && v.indexDim <= v.ropeDim)
        refuse(where, "index_head_dim must be wider than qk_rope_head_dim");
    if (c.moeInter <= 0)
        refuse(where, "moe_intermediate_size must be positive");
}

} // namespace waste::format
