#include "format/gqa_config.hpp"

#include "format/config_keys.hpp"

#include "format/deepseek_config.hpp"
#include "format/manifest.hpp"

#include "waste/waste.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace waste::format {

namespace {

using nlohmann::json;
using config::flag;
using config::refuse;

// The first of `keys` that holds a number, bounded to [lo, hi]; `def` when none does.
double number(const json &o, std::initializer_list<const char *> keys, double def, double lo, double hi,
              const std::string &where)
{
    for (const char *k : keys) {
        auto it = o.find(k);
        if (it == o.end() || !it->is_number())
            continue;
        const double v = it->get<double>();
        if (!(v >= lo && v <= hi))
            refuse(where, std::string("config key '") + k + "' = " + std::to_string(v) + " is out of range");
        return v;
    }
    return def;
}

// The rope_parameters object where a config has one (transformers 5 nests rope_theta and the
// scaling there), else the config itself.
const json &ropeParameters(const json &cfg)
{
    return cfg.contains("rope_parameters") && cfg["rope_parameters"].is_object() ? cfg["rope_parameters"] : cfg;
}

// rope_theta from rope_parameters, else from the top level, else `def`.
double ropeTheta(const json &cfg, double def, const std::string &where)
{
    return number(ropeParameters(cfg), {"rope_theta"}, number(cfg, {"rope_theta"}, def, 1.0, 1e12, where), 1.0, 1e12, where);
}

// rope_theta and partial_rotary_factor (newer configs nest both in rope_parameters), for the
// families that turn part of each head (Qwen3-Next, GLM-4.5): rotaryDim = int(head_dim ·
// factor), as their releases compute it. Plain RoPE only.
void readPartialRope(const json &cfg, GqaConfig &g, double defaultFactor, const std::string &where,
                     const std::string &family)
{
    const json &rp = ropeParameters(cfg);
    g.ropeTheta = ropeTheta(cfg, 10000.0, where);
    const double factor = number(rp, {"partial_rotary_factor"},
                                 number(cfg, {"partial_rotary_factor"}, defaultFactor, 0.0, 1.0, where), 0.0, 1.0, where);
    g.rotaryDim = int(double(g.headDim) * factor);
    if (g.rotaryDim < 2 || g.rotaryDim % 2 != 0)
        refuse(where, "partial_rotary_factor must leave an even number (>= 2) of rotated dims per head");
    auto rs = cfg.find("rope_scaling");
    if (rs != cfg.end() && !rs->is_null())
        throw Error(ErrorCode::Unsupported, where + ": rope_scaling is not supported for " + family + " (plain RoPE only)");
    const std::string type = rp.is_object() ? rp.value("rope_type", std::string("default")) : std::string("default");
    if (&rp != &cfg && type != "default")
        throw Error(ErrorCode::Unsupported, where + ": rope_parameters rope_type '" + type + "' is not supported for " +
                                                family + " (plain RoPE only)");
}

// Qwen3-Next's attention and expert keys (Qwen3.5-MoE's too: `family` names which).
void readQwen3NextKeys(const json &cfg, ModelConfig &c, const std::string &where, const std::string &family = "Qwen3-Next")
{
    GqaConfig &g = c.g;
    g.next = true;
    g.outputGate = true;
    g.zeroCentredNorm = true;
    // Absent, the factor is transformers' default for both families (Qwen3NextConfig,
    // Qwen3_5MoeTextConfig): a quarter of each head turns.
    readPartialRope(cfg, g, 0.25, where, family);
    g.sharedInter = int(number(cfg, {"shared_expert_intermediate_size"}, 0, 0, Limits::kMaxInter, where));
    if (g.sharedInter <= 0)
        refuse(where, family + " needs shared_expert_intermediate_size > 0");
    if (cfg.value("hidden_act", std::string("silu")) != "silu")
        throw Error(ErrorCode::Unsupported, where + ": hidden_act must be silu for " + family);
}

// Qwen3.5-MoE (docs/architectures/qwen3.5-moe.md): Qwen3-Next's text model read from the
// wrapper's text_config. Its config class (transformers' Qwen3_5MoeTextConfig) drops
// norm_topk_prob, decoder_sparse_step, mlp_only_layers and intermediate_size, and its
// decoder builds a sparse MoE block on every layer with a router that always renormalises
// (Qwen3_5MoeTopKRouter): so those keys, where a copy still carries them (the released
// 397B config has "mlp_only_layers": []), are read past as transformers reads them past.
// rope_parameters' M-RoPE keys (mrope_section, mrope_interleaved) give three equal position
// streams for text, which is plain partial RoPE at the token's position.
void readQwen35MoeKeys(const json &cfg, ModelConfig &c, const std::string &where)
{
    GqaConfig &g = c.g;
    // An older transformers wrote the M-RoPE keys under rope_scaling (rope_type default):
    // the same plain rotation for text, not a scaling.
    json plain = cfg;
    if (auto rs = plain.find("rope_scaling"); rs != plain.end() && rs->is_object()) {
        const std::string type = rs->value("rope_type", rs->value("type", std::string("default")));
        if (type != "default")
            throw Error(ErrorCode::Unsupported, where + ": rope_scaling type '" + type +
                                                    "' is not supported for Qwen3.5-MoE (plain RoPE only)");
        if (!plain.contains("rope_parameters"))
            plain["rope_parameters"] = *rs;
        plain.erase("rope_scaling");
    }
    readQwen3NextKeys(plain, c, where, "Qwen3.5-MoE");
    g.splitProjections = true;
    g.qkNorm = true;
    g.attnBias = flag(cfg, "attention_bias", false);
    g.outBias = g.attnBias;
    c.renormalize = true;
    c.denseMlp.assign(size_t(c.layers), false);
    if (flag(cfg, "use_sliding_window", false))
        throw Error(ErrorCode::Unsupported, where + ": use_sliding_window is not supported for qwen3.5-moe");
}

// GLM-4.5 / 4.6 / 4.7 and GLM-4.5-Air (docs/architectures/glm4-moe.md): q, k, v biases (o
// none), per-head q/k norm only where use_qk_norm says so (not on Air), half of each head
// rotated, DeepSeek-V3's sigmoid noaux_tc router, n_shared_experts ungated shared experts
// and dense first layers. Defaults are transformers' Glm4MoeConfig's.
void readGlm4MoeKeys(const json &cfg, ModelConfig &c, const std::string &where)
{
    GqaConfig &g = c.g;
    g.qkNorm = flag(cfg, "use_qk_norm", false);
    g.attnBias = flag(cfg, "attention_bias", false);
    g.outBias = false;
    g.sigmoidRouter = true;
    readPartialRope(cfg, g, 0.5, where, "GLM-4.5");
    c.experts = int(number(cfg, {"n_routed_experts", "num_local_experts"}, 0, 0, Limits::kMaxExperts, where)); // (HF's alias)
    c.sharedExperts = int(number(cfg, {"n_shared_experts"}, 1, 0, 64, where));
    g.sharedInter = c.sharedExperts * c.moeInter;
    c.firstDense = int(number(cfg, {"first_k_dense_replace"}, 1, 0, Limits::kMaxLayers, where));
    if (c.firstDense >= c.layers)
        refuse(where, "every layer is dense (first_k_dense_replace >= num_hidden_layers): not a mixture of experts");
    c.renormalize = flag(cfg, "norm_topk_prob", true);
    readNoauxRouting(cfg, c, where, "GLM-4.5", 1, 1); // Glm4MoeConfig: n_group 1, topk_group 1
    if (cfg.value("hidden_act", std::string("silu")) != "silu")
        throw Error(ErrorCode::Unsupported, where + ": hidden_act must be silu for GLM-4.5");
}

} // namespace

void readQwen3NextLayers(const json &cfg, ModelConfig &c, const std::string &where)
{
    GqaConfig &g = c.g;
    g.linKeyHeads = int(number(cfg, {"linear_num_key_heads"}, 0, 0, Limits::kMaxHeads, where));
    g.linValueHeads = int(number(cfg, {"linear_num_value_heads"}, 0, 0, Limits::kMaxHeads, where));
    g.linKeyDim = int(number(cfg, {"linear_key_head_dim"}, 0, 0, Limits::kMaxHeadDim, where));
    g.linValueDim = int(number(cfg, {"linear_value_head_dim"}, 0, 0, Limits::kMaxHeadDim, where));
    c.convK = int(number(cfg, {"linear_conv_kernel_dim"}, 4, 1, Limits::kMaxConvK, where));
    if (g.linKeyHeads <= 0 || g.linValueHeads <= 0 || g.linKeyDim <= 0 || g.linValueDim <= 0)
        refuse(where, "Qwen3-Next needs linear_num_key_heads, linear_num_value_heads, linear_key_head_dim and linear_value_head_dim > 0");
    if (g.linValueHeads % g.linKeyHeads != 0)
        refuse(where, "linear_num_value_heads must be a multiple of linear_num_key_heads");
    c.isKda.assign(size_t(c.layers), false);
    auto lt = cfg.find("layer_types");
    if (lt != cfg.end() && lt->is_array()) {
        if (lt->size() != size_t(c.layers))
            refuse(where, "layer_types must name one type per layer");
        for (size_t i = 0; i < lt->size(); ++i) {
            std::string t = (*lt)[i].is_string() ? (*lt)[i].get<std::string>() : std::string();
            if (t == "attention" || t == "mamba") // older spellings transformers still maps
                t = t == "attention" ? "full_attention" : "linear_attention";
            if (t != "linear_attention" && t != "full_attention")
                refuse(where, "layer_types[" + std::to_string(i) + "] must be linear_attention or full_attention, not '" + t + "'");
            c.isKda[i] = t == "linear_attention";
        }
    } else {
        // The release's schedule: every full_attention_interval-th layer is full attention.
        const int every = int(number(cfg, {"full_attention_interval"}, 4, 1, Limits::kMaxLayers, where));
        for (int i = 0; i < c.layers; ++i)
            c.isKda[size_t(i)] = (i + 1) % every != 0;
    }
}

int GqaConfig::slots(int layer, int ctx) const
{
    const bool slides = window > 0 && layer >= 0 && size_t(layer) < sliding.size() && sliding[size_t(layer)];
    return slides ? std::min(window, ctx) : ctx;
}

void readGqaConfig(const json &cfg, ModelConfig &c, const std::string &where)
{
    GqaConfig &g = c.g;
    const bool oss = c.arch == "gpt-oss";
    g.on = true;
    // Keys a config leaves out take its transformers config class's defaults: Qwen3-Next's and
    // Qwen3.5's (Qwen3NextConfig, Qwen3_5MoeTextConfig) give 2 key/value heads of 256, and every
    // Qwen3 family's rms_norm_eps is 1e-6 (the generic reading's default is 1e-5, GLM's and gpt-oss's).
    const bool hybrid = c.arch == "qwen3-next" || c.arch == "qwen3.5-moe";
    // (GptOssConfig: 8 key/value heads of 64; Glm4MoeConfig 8 key/value heads; Qwen3MoeConfig 4.)
    const int kvDefault = hybrid ? 2 : oss || c.arch == "glm4-moe" ? 8 : c.arch == "qwen3-moe" ? 4 : c.heads;
    if (c.arch.rfind("qwen3", 0) == 0 && !cfg.contains("rms_norm_eps"))
        c.eps = 1e-6f;
    g.kvHeads = int(number(cfg, {"num_key_value_heads"}, kvDefault, 1, Limits::kMaxHeads, where));
    g.headDim = int(number(cfg, {"head_dim"}, hybrid ? 256 : oss ? 64 : c.heads > 0 ? c.hidden / c.heads : 0, 2,
                           Limits::kMaxHeadDim, where));
    if (c.heads % g.kvHeads != 0)
        refuse(where, "num_attention_heads must be a multiple of num_key_value_heads");
    if (g.headDim % 2 != 0)
        refuse(where, "head_dim must be even (the rotary embedding turns pairs)");
    g.ropeTheta = ropeTheta(cfg, oss ? 150000.0 : 10000.0, where); // GptOssConfig's default 150000
    // (Qwen3.5's wrapper says it at its top level: the generic reading found it there.)
    g.tied = flag(cfg, "tie_word_embeddings", false) || c.tiedEmbeddings;
    c.experts = int(number(cfg, {"num_experts", "num_local_experts"}, 0, 0, Limits::kMaxExperts, where));
    c.topK = int(number(cfg, {"num_experts_per_tok", "experts_per_token"}, 0, 0, Limits::kMaxTopK, where));
    c.sharedExperts = 0;
    c.firstDense = 0;
    if (oss) {
        // gpt-oss: every layer is MoE and its experts are intermediate_size wide.
        c.moeInter = int(number(cfg, {"intermediate_size"}, 0, 0, Limits::kMaxInter, where));
        g.attnBias = flag(cfg, "attention_bias", true);
        g.outBias = g.attnBias;
        g.sinks = true;
        g.softmaxOverTopK = true;
        g.routerBias = true;
        g.expertBias = true;
        g.swigluLimit = float(number(cfg, {"swiglu_limit"}, 7.0, 0.0, 1e6, where));
        g.swigluAlpha = 1.702f; // fixed in the release's modeling code, not in the config
        g.window = int(number(cfg, {"sliding_window"}, 128, 0, 1 << 24, where)); // GptOssConfig's default
        g.sliding.assign(size_t(c.layers), false);
        auto lt = cfg.find("layer_types");
        if (lt != cfg.end() && lt->is_array()) {
            if (lt->size() != size_t(c.layers))
                refuse(where, "layer_types must name one type per layer");
            for (size_t i = 0; i < lt->size(); ++i)
                g.sliding[i] = (*lt)[i].is_string() && (*lt)[i].get<std::string>() == "sliding_attention";
        } else {
            for (int i = 0; i < c.layers; ++i) // the release's schedule: even layers slide
                g.sliding[size_t(i)] = i % 2 == 0;
        }
        // YaRN: the release's rope_scaling, or the rope_parameters transformers 5 saves it as;
        // where a config names neither, GptOssConfig's own (factor 32, betas 32 / 1, 4096
        // original positions, not truncated).
        static const json kDefaultYarn = {{"rope_type", "yarn"}, {"factor", 32.0}, {"beta_fast", 32.0},
                                          {"beta_slow", 1.0}, {"original_max_position_embeddings", 4096}, {"truncate", false}};
        const json *scaling = &kDefaultYarn;
        if (auto rs = cfg.find("rope_scaling"); rs != cfg.end() && !rs->is_null())
            scaling = &*rs;
        else if (const json &rp = ropeParameters(cfg); &rp != &cfg)
            scaling = rp.value("rope_type", std::string("default")) == "default" ? nullptr : &rp;
        if (scaling) {
            if (!scaling->is_object())
                refuse(where, "rope_scaling is not an object");
            const std::string type = scaling->value("rope_type", scaling->value("type", std::string()));
            if (type != "yarn")
                throw Error(ErrorCode::Unsupported, where + ": rope_scaling type '" + type + "' is not supported (gpt-oss uses yarn)");
            g.yarnFactor = number(*scaling, {"factor"}, 1.0, 1.0, 1e6, where);
            g.yarnBetaFast = number(*scaling, {"beta_fast"}, 32.0, 0.0, 1e6, where);
            g.yarnBetaSlow = number(*scaling, {"beta_slow"}, 1.0, 0.0, 1e6, where);
            g.yarnOrigCtx = number(*scaling, {"original_max_position_embeddings"},
                                   number(cfg, {"max_position_embeddings"}, 4096, 1, 1 << 30, where), 1, 1 << 30, where);
            g.yarnTruncate = flag(*scaling, "truncate", true);
        }
    } else if (c.arch == "glm4-moe") {
        readGlm4MoeKeys(cfg, c, where);
    } else if (c.arch == "qwen3.5-moe") {
        readQwen35MoeKeys(cfg, c, where);
    } else {
        if (c.arch == "qwen3-next")
            readQwen3NextKeys(cfg, c, where);
        g.qkNorm = true;
        g.attnBias = flag(cfg, "attention_bias", false);
        g.outBias = g.attnBias;
        c.renormalize = flag(cfg, "norm_topk_prob", c.arch == "qwen3-next"); // Qwen3NextConfig: true; Qwen3MoeConfig: false
        // As the family's decoder layer decides (transformers' Qwen3MoeDecoderLayer): layer L
        // routes to experts unless it is in mlp_only_layers or (L + 1) is not a multiple of
        // decoder_sparse_step; the others run a dense MLP of intermediate_size.
        const int step = int(number(cfg, {"decoder_sparse_step"}, 1, 1, 1 << 20, where));
        c.denseMlp.assign(size_t(c.layers), false);
        for (int L = 0; L < c.layers; ++L)
            c.denseMlp[size_t(L)] = (L + 1) % step != 0;
        if (auto only = cfg.find("mlp_only_layers"); only != cfg.end() && only->is_array())
            for (const json &v : *only) {
                if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= c.layers)
                    refuse(where, "mlp_only_layers must list layer indices from 0 to num_hidden_layers - 1");
                c.denseMlp[size_t(v.get<int64_t>())] = true;
            }
        if (std::find(c.denseMlp.begin(), c.denseMlp.end(), true) != c.denseMlp.end() && c.inter <= 0)
            refuse(where, "layers with a dense MLP (mlp_only_layers, decoder_sparse_step) need intermediate_size > 0");
        if (std::find(c.denseMlp.begin(), c.denseMlp.end(), false) == c.denseMlp.end())
            refuse(where, "every layer is dense (mlp_only_layers, decoder_sparse_step): not a mixture of experts");
        if (flag(cfg, "use_sliding_window", false))
            throw Error(ErrorCode::Unsupported, where + ": use_sliding_window is not supported for " + c.arch);
    }
    if (c.experts <= 0)
        refuse(where, "config needs num_experts (num_local_experts, n_routed_experts) > 0");
}

} // namespace waste::format
