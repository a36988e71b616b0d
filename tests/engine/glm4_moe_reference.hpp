// A plain float64 forward pass of GLM-4.5 / 4.6 / 4.7 and GLM-4.5-Air (glm4_moe), written from
// transformers' modeling_glm4_moe.py as docs/architectures/glm4-moe.md gives it: its own
// config reading (the release's keys and Glm4MoeConfig's defaults), attention with q/k/v
// biases added before the optional per-head q/k RMSNorm, rotate-half RoPE on the first
// int(head_dim · partial_rotary_factor) dims of each head (scale 1/sqrt(head_dim)), the
// sigmoid router with e_score_correction_bias for selection only, group-limited top-k,
// norm_topk_prob and routed_scaling_factor, the ungated shared experts and the dense first
// layers. The matrix and norm helpers are gqa_reference.hpp's; nothing is the engine's.
#pragma once

#include "gqa_reference.hpp"

namespace glmref {

using gqaref::mul;
using gqaref::rmsnorm;
using gqaref::Vec;
using gqaref::Weights;
using json = nlohmann::json;

struct Config {
    int H = 0, L = 0, nh = 0, kvh = 0, hd = 0, rot = 0, E = 0, K = 0, groups = 1, topkGroups = 1, firstDense = 1;
    double eps = 1e-5, theta = 10000, scale = 1;
    bool qkNorm = false, bias = false, renorm = true;

    explicit Config(const std::string &text)
    {
        const json c = json::parse(text);
        H = c["hidden_size"];
        L = c["num_hidden_layers"];
        nh = c["num_attention_heads"];
        kvh = c["num_key_value_heads"];
        hd = c["head_dim"];
        rot = int(hd * c.value("partial_rotary_factor", 0.5));
        E = c["n_routed_experts"];
        K = c["num_experts_per_tok"];
        groups = c.value("n_group", 1);
        topkGroups = c.value("topk_group", 1);
        firstDense = c.value("first_k_dense_replace", 1);
        eps = c["rms_norm_eps"];
        theta = c["rope_theta"];
        scale = c.value("routed_scaling_factor", 1.0);
        qkNorm = c.value("use_qk_norm", false);
        bias = c.value("attention_bias", false);
        renorm = c.value("norm_topk_prob", true);
    }
};

// Plausible misreadings a test may switch on to show the engine's reading is no accident.
enum class Wrong {
    None,
    NoQkNorm,        // q/k norm skipped where use_qk_norm asks for it
    BiasAfterNorm,   // q/k biases added after the q/k norm
    AdjacentPairs,   // interleaved pairs (2i, 2i+1) in the rotary slice (the dense GLM-4's rule)
    FullRope,        // every dim of a head rotated
    NoCorrection,    // experts chosen by the plain sigmoid, without e_score_correction_bias
    BiasedWeights,   // weights taken from the biased selection keys
    NoGroupLimit,    // top-k over every expert, ignoring n_group / topk_group
    NoRoutedScale,   // routed_scaling_factor left out
};

inline double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

class Reference {
public:
    Reference(const std::string &configText, Weights w) : m_c(configText), m_w(std::move(w)) {}

    const Config &cfg() const { return m_c; }

    struct Cache {
        std::vector<Vec> k, v;
    };

    // Tokens whose group-masked selection depended on the masking value: fewer than K kept
    // experts had a positive key, so HF's fill with 0.0 and the -inf of DeepSeek's own code
    // (which this reference follows, docs/architectures/deepseek-v3.md) would choose apart.
    mutable int ambiguousMasks = 0;

    void rotate(double *x, int pos, Wrong wrong) const
    {
        const int d = wrong == Wrong::FullRope ? m_c.hd : m_c.rot, half = d / 2;
        for (int i = 0; i < half; ++i) {
            const double f = std::pow(m_c.theta, -2.0 * i / d), c = std::cos(pos * f), s = std::sin(pos * f);
            const int a = wrong == Wrong::AdjacentPairs ? 2 * i : i, b = wrong == Wrong::AdjacentPairs ? 2 * i + 1 : i + half;
            const double x1 = x[a], x2 = x[b];
            x[a] = x1 * c - x2 * s;
            x[b] = x2 * c + x1 * s;
        }
    }

    // Glm4MoeAttention for one normed input at `pos`; appends to the cache.
    Vec attention(int layer, const Vec &a, int pos, Cache &cache, Wrong wrong = Wrong::None) const
    {
        const std::string p = "model.layers." + std::to_string(layer) + ".self_attn.";
        const int nh = m_c.nh, kvh = m_c.kvh, hd = m_c.hd;
        Vec q = mul(m_w(p + "q_proj.weight"), a), k = mul(m_w(p + "k_proj.weight"), a), v = mul(m_w(p + "v_proj.weight"), a);
        const auto addBias = [&](Vec &x, const char *name) {
            const Vec b = m_w(p + name);
            for (size_t i = 0; i < x.size(); ++i)
                x[i] += b[i];
        };
        if (m_c.bias) {
            if (wrong != Wrong::BiasAfterNorm) {
                addBias(q, "q_proj.bias");
                addBias(k, "k_proj.bias");
            }
            addBias(v, "v_proj.bias");
        }
        if (m_c.qkNorm && wrong != Wrong::NoQkNorm) {
            gqaref::normHeads(q, m_w(p + "q_norm.weight"), nh, hd, m_c.eps);
            gqaref::normHeads(k, m_w(p + "k_norm.weight"), kvh, hd, m_c.eps);
        }
        if (m_c.bias && wrong == Wrong::BiasAfterNorm) {
            addBias(q, "q_proj.bias");
            addBias(k, "k_proj.bias");
        }
        for (int h = 0; h < nh; ++h)
            rotate(q.data() + h * hd, pos, wrong);
        for (int h = 0; h < kvh; ++h)
            rotate(k.data() + h * hd, pos, wrong);
        if (int(cache.k.size()) != pos)
            throw std::runtime_error("reference cache out of step");
        cache.k.push_back(k);
        cache.v.push_back(v);
        Vec o(size_t(nh * hd), 0.0);
        for (int h = 0; h < nh; ++h) {
            const int g = h / (nh / kvh);
            Vec z;
            for (int s = 0; s <= pos; ++s) {
                double d = 0;
                for (int j = 0; j < hd; ++j)
                    d += q[size_t(h * hd + j)] * cache.k[size_t(s)][size_t(g * hd + j)];
                z.push_back(d / std::sqrt(double(hd))); // the whole head's dims, not the rotated ones
            }
            double top = -INFINITY, sum = 0;
            for (double x : z)
                top = std::max(top, x);
            for (double &x : z)
                sum += (x = std::exp(x - top));
            for (int s = 0; s <= pos; ++s)
                for (int j = 0; j < hd; ++j)
                    o[size_t(h * hd + j)] += z[size_t(s)] / sum * cache.v[size_t(s)][size_t(g * hd + j)];
        }
        return mul(m_w(p + "o_proj.weight"), o); // o_proj has no bias
    }

    // Glm4MoeMLP: down(silu(gate x) · up x), under `prefix` ("…mlp.", "…mlp.shared_experts.", "…mlp.experts.E.").
    Vec mlp(const std::string &prefix, const Vec &x) const
    {
        const Vec g = mul(m_w(prefix + "gate_proj.weight"), x), u = mul(m_w(prefix + "up_proj.weight"), x);
        Vec act(g.size());
        for (size_t i = 0; i < g.size(); ++i)
            act[i] = g[i] * sigmoid(g[i]) * u[i];
        return mul(m_w(prefix + "down_proj.weight"), act);
    }

    // The experts route_tokens_to_experts picks for a normed input, and their weights.
    void route(int layer, const Vec &b, std::vector<int> &ids, Vec &weights, Wrong wrong = Wrong::None) const
    {
        const std::string p = "model.layers." + std::to_string(layer) + ".mlp.gate.";
        const Vec logits = mul(m_w(p + "weight"), b), corr = m_w(p + "e_score_correction_bias");
        const int E = m_c.E, G = wrong == Wrong::NoGroupLimit ? 1 : m_c.groups,
                  TG = wrong == Wrong::NoGroupLimit ? 1 : m_c.topkGroups, per = E / G;
        Vec s(static_cast<size_t>(E)), c(static_cast<size_t>(E));
        for (int e = 0; e < E; ++e) {
            s[size_t(e)] = sigmoid(logits[size_t(e)]);
            c[size_t(e)] = s[size_t(e)] + (wrong == Wrong::NoCorrection ? 0.0 : corr[size_t(e)]);
        }
        // A group scores the sum of its two largest keys; the topk_group best stay.
        std::vector<std::pair<double, int>> groupScores;
        for (int g = 0; g < G; ++g) {
            Vec in(c.begin() + g * per, c.begin() + (g + 1) * per);
            std::sort(in.begin(), in.end(), std::greater<>());
            groupScores.push_back({-(in[0] + (per > 1 ? in[1] : 0.0)), g});
        }
        std::sort(groupScores.begin(), groupScores.end());
        std::vector<bool> kept(size_t(G), false);
        for (int j = 0; j < TG; ++j)
            kept[size_t(groupScores[size_t(j)].second)] = true;
        std::vector<std::pair<double, int>> keys;
        int positive = 0;
        for (int e = 0; e < E; ++e)
            if (kept[size_t(e / per)]) {
                keys.push_back({-c[size_t(e)], e});
                positive += c[size_t(e)] > 0 ? 1 : 0;
            }
        if (G > 1 && TG < G && positive < m_c.K)
            ++ambiguousMasks;
        std::sort(keys.begin(), keys.end());
        ids.clear();
        weights.clear();
        double sum = 0;
        for (int j = 0; j < m_c.K; ++j) {
            const int e = keys[size_t(j)].second;
            ids.push_back(e);
            weights.push_back(wrong == Wrong::BiasedWeights ? c[size_t(e)] : s[size_t(e)]);
            sum += weights.back();
        }
        for (double &w : weights) {
            if (m_c.renorm)
                w /= sum + 1e-20;
            if (wrong != Wrong::NoRoutedScale)
                w *= m_c.scale;
        }
    }

    // The MLP sub-layer of `layer` on a normed input: dense below first_k_dense_replace,
    // else Glm4MoeMoE (routed experts plus the shared experts).
    Vec ffn(int layer, const Vec &b, Wrong wrong = Wrong::None) const
    {
        const std::string p = "model.layers." + std::to_string(layer) + ".mlp.";
        if (layer < m_c.firstDense)
            return mlp(p, b);
        std::vector<int> ids;
        Vec w;
        route(layer, b, ids, w, wrong);
        Vec out = mlp(p + "shared_experts.", b);
        for (size_t j = 0; j < ids.size(); ++j) {
            const Vec y = mlp(p + "experts." + std::to_string(ids[j]) + ".", b);
            for (size_t i = 0; i < out.size(); ++i)
                out[i] += w[j] * y[i];
        }
        return out;
    }

    // The whole forward pass over tokens; the last token's logits.
    Vec logits(const std::vector<int32_t> &tokens) const
    {
        std::vector<Cache> caches(size_t(m_c.L));
        return gqaref::decoderLogits(
            m_w, tokens, m_c.L, m_c.eps, "lm_head.weight", m_w,
            [&](int l, const Vec &a, int pos) { return attention(l, a, pos, caches[size_t(l)]); },
            [&](int l, const Vec &b) { return ffn(l, b); });
    }

private:
    Config m_c;
    Weights m_w;
};

} // namespace glmref
