#include "format/gqa_config.hpp"

#include "format/manifest.hpp"

#include "waste/waste.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace waste::format {

namespace {

using nlohmann::json;

[[noreturn]] void refuse(const std::string &where, const std::string &what)
{
    throw Error(ErrorCode::Format, where + ": " + what + " (the container does not describe a model this engine runs; re-convert it)");
}

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

bool flag(const json &o, const char *key, bool def)
{
    auto it = o.find(key);
    return it != o.end() && it->is_boolean() ? it->get<bool>() : def;
}

} // namespace

int GqaConfig::slots(int layer, int ctx) const
{
    const bool slides = window > 0 && layer >= 0 && size_t(layer) < sliding.size() && sliding[size_t(layer)];
    return slides ? std::min(window, ctx) : ctx;
}

const char *gqaArchName(const std::string &a)
{
    if (a.find("Qwen3Moe") != std::string::npos)
        return "qwen3-moe";
    if (a.find("GptOss") != std::string::npos)
        return "gpt-oss";
    return nullptr;
}

void readGqaConfig(const json &cfg, ModelConfig &c, const std::string &where)
{
    GqaConfig &g = c.g;
    const bool oss = c.arch == "gpt-oss";
    g.on = true;
    g.kvHeads = int(number(cfg, {"num_key_value_heads"}, c.heads, 1, Limits::kMaxHeads, where));
    g.headDim = int(number(cfg, {"head_dim"}, c.heads > 0 ? c.hidden / c.heads : 0, 2, Limits::kMaxHeadDim, where));
    if (c.heads % g.kvHeads != 0)
        refuse(where, "num_attention_heads must be a multiple of num_key_value_heads");
    if (g.headDim % 2 != 0)
        refuse(where, "head_dim must be even (the rotary embedding turns pairs)");
    g.ropeTheta = number(cfg, {"rope_theta"}, 10000.0, 1.0, 1e12, where);
    g.tied = flag(cfg, "tie_word_embeddings", false);
    c.experts = int(number(cfg, {"num_experts", "num_local_experts"}, 0, 0, Limits::kMaxExperts, where));
    c.topK = int(number(cfg, {"num_experts_per_tok", "experts_per_token"}, 0, 0, Limits::kMaxTopK, where));
    c.sharedExperts = 0;
    c.firstDense = 0;
    if (oss) {
        // gpt-oss: every layer is MoE and its experts are intermediate_size wide.
        c.moeInter = int(number(cfg, {"intermediate_size"}, 0, 0, Limits::kMaxInter, where));
        g.attnBias = flag(cfg, "attention_bias", true);
        g.sinks = true;
        g.softmaxOverTopK = true;
        g.routerBias = true;
        g.expertBias = true;
        g.swigluLimit = float(number(cfg, {"swiglu_limit"}, 7.0, 0.0, 1e6, where));
        g.swigluAlpha = 1.702f; // fixed in the release's modeling code, not in the config
        g.window = int(number(cfg, {"sliding_window"}, 0, 0, 1 << 24, where));
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
        auto rs = cfg.find("rope_scaling");
        if (rs != cfg.end() && rs->is_object()) {
            const std::string type = rs->value("rope_type", rs->value("type", std::string()));
            if (type != "yarn")
                throw Error(ErrorCode::Unsupported, where + ": rope_scaling type '" + type + "' is not supported (gpt-oss uses yarn)");
            g.yarnFactor = number(*rs, {"factor"}, 1.0, 1.0, 1e6, where);
            g.yarnBetaFast = number(*rs, {"beta_fast"}, 32.0, 0.0, 1e6, where);
            g.yarnBetaSlow = number(*rs, {"beta_slow"}, 1.0, 0.0, 1e6, where);
            g.yarnOrigCtx = number(*rs, {"original_max_position_embeddings"}, 4096, 1, 1 << 30, where);
            g.yarnTruncate = flag(*rs, "truncate", true);
        }
    } else {
        g.qkNorm = true;
        g.attnBias = flag(cfg, "attention_bias", false);
        c.renormalize = flag(cfg, "norm_topk_prob", false);
        // The dense-layer switches of the family must say "every layer is MoE".
        auto only = cfg.find("mlp_only_layers");
        if ((only != cfg.end() && only->is_array() && !only->empty()) ||
            number(cfg, {"decoder_sparse_step"}, 1, 0, 1 << 20, where) != 1)
            throw Error(ErrorCode::Unsupported, where + ": dense layers between the MoE layers (mlp_only_layers, decoder_sparse_step) are not supported");
        if (flag(cfg, "use_sliding_window", false))
            throw Error(ErrorCode::Unsupported, where + ": use_sliding_window is not supported for Qwen3-MoE");
    }
    if (c.experts <= 0)
        refuse(where, "config needs num_experts (or num_local_experts) > 0");
}

} // namespace waste::format
