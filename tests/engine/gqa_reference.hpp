// A plain float64 forward pass of the grouped-query-attention MoE families, Qwen3-MoE and
// gpt-oss, written from their public modeling code (docs/architectures/*.md): its own
// config reading (the release's config.json keys), its own rotary tables (RoPE and YaRN),
// attention with per-head q/k norm, biases, sinks and sliding windows, the softmax routers,
// plain and clamped SwiGLU experts with biases. Weights come from a callback (the tiny
// model's generator), so nothing here shares code with the engine.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numbers>
#include <string>
#include <vector>

namespace gqaref {

using Vec = std::vector<double>;
using json = nlohmann::json;

struct Config {
    bool oss = false;
    int H = 0, L = 0, V = 0, nh = 0, kvh = 0, hd = 0, E = 0, K = 0, Im = 0;
    double eps = 1e-6, theta = 10000;
    bool renorm = false, tied = false;
    int window = 0;
    std::vector<bool> sliding;
    double yarnFactor = 0, betaFast = 32, betaSlow = 1, origCtx = 4096;
    bool truncate = true;
    double limit = 0, alpha = 1.702;
    std::vector<bool> dense; // Qwen3-MoE's mlp_only_layers / decoder_sparse_step: a dense MLP there

    explicit Config(const std::string &text)
    {
        const json c = json::parse(text);
        oss = c["model_type"] == "gpt_oss";
        H = c["hidden_size"];
        L = c["num_hidden_layers"];
        V = c["vocab_size"];
        nh = c["num_attention_heads"];
        kvh = c["num_key_value_heads"];
        hd = c["head_dim"];
        E = oss ? c["num_local_experts"].get<int>() : c["num_experts"].get<int>();
        K = c["num_experts_per_tok"];
        Im = oss ? c["intermediate_size"].get<int>() : c["moe_intermediate_size"].get<int>();
        eps = c["rms_norm_eps"];
        theta = c["rope_theta"];
        tied = c.value("tie_word_embeddings", false);
        renorm = c.value("norm_topk_prob", false);
        sliding.assign(size_t(L), false);
        dense.assign(size_t(L), false);
        if (!oss) { // transformers' Qwen3MoeDecoderLayer
            const int step = c.value("decoder_sparse_step", 1);
            for (int i = 0; i < L; ++i)
                dense[size_t(i)] = (i + 1) % step != 0;
            for (const auto &i : c.value("mlp_only_layers", json::array()))
                dense[size_t(i.get<int>())] = true;
        }
        if (oss) {
            window = c["sliding_window"];
            for (int i = 0; i < L; ++i)
                sliding[size_t(i)] = c["layer_types"][size_t(i)] == "sliding_attention";
            const json &r = c["rope_scaling"];
            yarnFactor = r["factor"];
            betaFast = r["beta_fast"];
            betaSlow = r["beta_slow"];
            origCtx = r["original_max_position_embeddings"];
            truncate = r.value("truncate", true);
            limit = c["swiglu_limit"];
        }
    }
};

// What a test may switch off to show that the engine's reading is not an accident.
enum class Wrong { None, NoQkNorm, AdjacentPairs, NoSinks, NoWindow, PlainRope, NoRenorm, SoftmaxAll, PlainSwiglu, NoClamp, NoExpertBias };

using Weights = std::function<Vec(const std::string &)>;

inline Vec rmsnorm(const Vec &x, const Vec &w, double eps)
{
    double ss = 0;
    for (double v : x)
        ss += v * v;
    const double r = 1.0 / std::sqrt(ss / double(x.size()) + eps);
    Vec y(x.size());
    for (size_t i = 0; i < x.size(); ++i)
        y[i] = x[i] * r * w[i];
    return y;
}

// RMSNorm over each of the `heads` heads of hd values in x, in place (the q/k norms).
inline void normHeads(Vec &x, const Vec &w, int heads, int hd, double eps)
{
    for (int h = 0; h < heads; ++h) {
        const Vec y = rmsnorm(Vec(x.begin() + h * hd, x.begin() + (h + 1) * hd), w, eps);
        std::copy(y.begin(), y.end(), x.begin() + h * hd);
    }
}

// y = W x for W stored [rows, cols] row-major.
inline Vec mul(const Vec &W, const Vec &x)
{
    const size_t cols = x.size(), rows = W.size() / cols;
    Vec y(rows, 0.0);
    for (size_t r = 0; r < rows; ++r) {
        double s = 0;
        for (size_t c = 0; c < cols; ++c)
            s += W[r * cols + c] * x[c];
        y[r] = s;
    }
    return y;
}

// The pre-norm decoder these families share (transformers' *DecoderLayer and *Model): per
// token and layer, h += mix(layer, RMSNorm(h; input_layernorm), position), then
// h += ffn(layer, RMSNorm(h; post_attention_layernorm)); the last token's logits are
// lm_head (or `head`) of RMSNorm(h; model.norm). `norm` gives a norm's weight as applied
// (Qwen3-Next's are 1 + w); `mix` keeps its own per-layer caches.
template <typename Norm, typename Mix, typename Ffn>
Vec decoderLogits(const Weights &w, const std::vector<int32_t> &tokens, int layers, double eps, const std::string &head,
                  Norm norm, Mix mix, Ffn ffn)
{
    const Vec embed = w("model.embed_tokens.weight");
    Vec h;
    const size_t width = w("model.norm.weight").size();
    for (size_t t = 0; t < tokens.size(); ++t) {
        h.assign(embed.begin() + size_t(tokens[t]) * width, embed.begin() + size_t(tokens[t] + 1) * width);
        for (int l = 0; l < layers; ++l) {
            const std::string p = "model.layers." + std::to_string(l) + ".";
            const Vec a = mix(l, rmsnorm(h, norm(p + "input_layernorm.weight"), eps), int(t));
            for (size_t i = 0; i < h.size(); ++i)
                h[i] += a[i];
            const Vec m = ffn(l, rmsnorm(h, norm(p + "post_attention_layernorm.weight"), eps));
            for (size_t i = 0; i < h.size(); ++i)
                h[i] += m[i];
        }
    }
    return mul(w(head), rmsnorm(h, norm("model.norm.weight"), eps));
}

class Reference {
public:
    Reference(const Config &c, Weights w) : m_c(c), m_w(std::move(w)) {}
    Reference(const std::string &configText, Weights w) : Reference(Config(configText), std::move(w)) {}

    const Config &cfg() const { return m_c; }

    // The cached keys and values of one layer, by position.
    struct Cache {
        std::vector<Vec> k, v;
    };

    // Inverse frequencies of the rotation (YaRN when the config has it) and the cos/sin scale.
    void rotaryTables(Vec &inv, double &scale, Wrong wrong) const
    {
        const int d = m_c.hd;
        inv.assign(size_t(d / 2), 0);
        for (int i = 0; i < d / 2; ++i)
            inv[size_t(i)] = std::pow(m_c.theta, -2.0 * i / d);
        scale = 1;
        if (m_c.yarnFactor <= 1 || wrong == Wrong::PlainRope)
            return;
        auto dimFor = [&](double rot) { return d * std::log(m_c.origCtx / (rot * 2 * std::numbers::pi)) / (2 * std::log(m_c.theta)); };
        double lo = dimFor(m_c.betaFast), hi = dimFor(m_c.betaSlow);
        if (m_c.truncate)
            lo = std::floor(lo), hi = std::ceil(hi);
        lo = std::max(lo, 0.0);
        hi = std::min(hi, double(d - 1));
        if (lo == hi)
            hi += 0.001;
        for (int i = 0; i < d / 2; ++i) {
            const double ramp = std::clamp((i - lo) / (hi - lo), 0.0, 1.0);
            // ramp 0: keep the original frequency (fast dims), ramp 1: interpolate by factor
            inv[size_t(i)] = inv[size_t(i)] * (1 - ramp) + inv[size_t(i)] / m_c.yarnFactor * ramp;
        }
        scale = 0.1 * std::log(m_c.yarnFactor) + 1;
    }

    void rotate(double *x, int pos, Wrong wrong) const
    {
        Vec inv;
        double scale;
        rotaryTables(inv, scale, wrong);
        const int half = m_c.hd / 2;
        for (int i = 0; i < half; ++i) {
            const double c = std::cos(pos * inv[size_t(i)]) * scale, s = std::sin(pos * inv[size_t(i)]) * scale;
            // rotate_half pairs i with i + d/2; the wrong reading pairs 2i with 2i + 1
            const int a = wrong == Wrong::AdjacentPairs ? 2 * i : i, b = wrong == Wrong::AdjacentPairs ? 2 * i + 1 : i + half;
            const double x1 = x[a], x2 = x[b];
            x[a] = x1 * c - x2 * s;
            x[b] = x2 * c + x1 * s;
        }
    }

    void addBias(Vec &x, const std::string &name) const
    {
        const Vec b = m_w(name);
        for (size_t i = 0; i < x.size(); ++i)
            x[i] += b[i];
    }

    // The attention sub-layer of `layer` for one normed input at `pos`; appends to the cache.
    Vec attention(int layer, const Vec &a, int pos, Cache &cache, Wrong wrong = Wrong::None) const
    {
        const std::string p = "model.layers." + std::to_string(layer) + ".self_attn.";
        const int nh = m_c.nh, kvh = m_c.kvh, hd = m_c.hd;
        Vec q = mul(m_w(p + "q_proj.weight"), a), k = mul(m_w(p + "k_proj.weight"), a), v = mul(m_w(p + "v_proj.weight"), a);
        if (m_c.oss) {
            addBias(q, p + "q_proj.bias");
            addBias(k, p + "k_proj.bias");
            addBias(v, p + "v_proj.bias");
        }
        if (!m_c.oss && wrong != Wrong::NoQkNorm) {
            normHeads(q, m_w(p + "q_norm.weight"), nh, hd, m_c.eps);
            normHeads(k, m_w(p + "k_norm.weight"), kvh, hd, m_c.eps);
        }
        for (int h = 0; h < nh; ++h)
            rotate(q.data() + h * hd, pos, wrong);
        for (int h = 0; h < kvh; ++h)
            rotate(k.data() + h * hd, pos, wrong);
        if (int(cache.k.size()) != pos)
            throw std::runtime_error("reference cache out of step");
        cache.k.push_back(k);
        cache.v.push_back(v);
        const bool window = m_c.sliding[size_t(layer)] && wrong != Wrong::NoWindow;
        const int first = window ? std::max(0, pos + 1 - m_c.window) : 0;
        const Vec sinks = m_c.oss ? m_w(p + "sinks") : Vec();
        Vec o(size_t(nh * hd), 0.0);
        for (int h = 0; h < nh; ++h) {
            const int g = h / (nh / kvh);
            Vec z;
            for (int s = first; s <= pos; ++s) {
                double d = 0;
                for (int j = 0; j < hd; ++j)
                    d += q[size_t(h * hd + j)] * cache.k[size_t(s)][size_t(g * hd + j)];
                z.push_back(d / std::sqrt(double(hd)));
            }
            const bool sink = m_c.oss && wrong != Wrong::NoSinks;
            double top = sink ? sinks[size_t(h)] : -INFINITY;
            for (double x : z)
                top = std::max(top, x);
            double sum = sink ? std::exp(sinks[size_t(h)] - top) : 0;
            for (double &x : z)
                sum += (x = std::exp(x - top));
            for (int s = first; s <= pos; ++s)
                for (int j = 0; j < hd; ++j)
                    o[size_t(h * hd + j)] += z[size_t(s - first)] / sum * cache.v[size_t(s)][size_t(g * hd + j)];
        }
        Vec out = mul(m_w(p + "o_proj.weight"), o);
        if (m_c.oss)
            addBias(out, p + "o_proj.bias");
        return out;
    }

    // Expert e of `layer` on x: gate, up (rows of the release's tensors), activation, down.
    Vec expert(int layer, int e, const Vec &x, Wrong wrong) const
    {
        const std::string p = "model.layers." + std::to_string(layer) + ".mlp.experts.";
        Vec g, u, y;
        if (m_c.oss) {
            const Vec gu = expertGateUp(layer, e), gub = m_w(p + "gate_up_proj_bias");
            const size_t Im = size_t(m_c.Im), W = x.size();
            g.assign(Im, 0), u.assign(Im, 0);
            // The fused rows interleave: 2i is gate row i, 2i + 1 up row i.
            for (size_t i = 0; i < Im; ++i) {
                for (size_t c = 0; c < W; ++c) {
                    g[i] += gu[(2 * i) * W + c] * x[c];
                    u[i] += gu[(2 * i + 1) * W + c] * x[c];
                }
                if (wrong == Wrong::NoExpertBias)
                    continue;
                g[i] += gub[size_t(e) * 2 * Im + 2 * i];
                u[i] += gub[size_t(e) * 2 * Im + 2 * i + 1];
            }
        } else {
            const std::string q = p + std::to_string(e) + ".";
            g = mul(m_w(q + "gate_proj.weight"), x);
            u = mul(m_w(q + "up_proj.weight"), x);
        }
        Vec act(g.size());
        for (size_t i = 0; i < g.size(); ++i) {
            if (m_c.oss && wrong != Wrong::PlainSwiglu) {
                const bool clamp = wrong != Wrong::NoClamp;
                const double gc = clamp ? std::min(g[i], m_c.limit) : g[i], uc = clamp ? std::clamp(u[i], -m_c.limit, m_c.limit) : u[i];
                act[i] = (uc + 1) * gc / (1 + std::exp(-m_c.alpha * gc));
            } else {
                act[i] = g[i] / (1 + std::exp(-g[i])) * u[i];
            }
        }
        if (m_c.oss) {
            y = mul(expertDown(layer, e), act);
            const Vec db = m_w(p + "down_proj_bias");
            for (size_t i = 0; i < y.size(); ++i)
                y[i] += db[size_t(e) * y.size() + i];
        } else {
            y = mul(m_w(p + std::to_string(e) + ".down_proj.weight"), act);
        }
        return y;
    }

    // A dense layer's MLP (Qwen3MoeMLP): down(silu(gate x) * up x).
    Vec mlp(int layer, const Vec &b) const
    {
        const std::string p = "model.layers." + std::to_string(layer) + ".mlp.";
        const Vec g = mul(m_w(p + "gate_proj.weight"), b), u = mul(m_w(p + "up_proj.weight"), b);
        Vec act(g.size());
        for (size_t i = 0; i < g.size(); ++i)
            act[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
        return mul(m_w(p + "down_proj.weight"), act);
    }

    // The MoE sub-layer of `layer` on a normed input.
    Vec moe(int layer, const Vec &b, Wrong wrong = Wrong::None) const
    {
        const std::string p = "model.layers." + std::to_string(layer) + ".mlp.";
        Vec logits = mul(m_w(p + (m_c.oss ? "router.weight" : "gate.weight")), b);
        if (m_c.oss)
            addBias(logits, p + "router.bias");
        std::vector<int> ids(size_t(m_c.E));
        for (int e = 0; e < m_c.E; ++e)
            ids[size_t(e)] = e;
        std::stable_sort(ids.begin(), ids.end(), [&](int x, int y) { return logits[size_t(x)] > logits[size_t(y)]; });
        ids.resize(size_t(m_c.K));
        Vec w(size_t(m_c.K));
        if (m_c.oss && wrong != Wrong::SoftmaxAll) { // softmax over the top k logits
            double sum = 0;
            for (int j = 0; j < m_c.K; ++j)
                sum += (w[size_t(j)] = std::exp(logits[size_t(ids[size_t(j)])] - logits[size_t(ids[0])]));
            for (double &x : w)
                x /= sum;
        } else { // softmax over all, the top k, renormalised when norm_topk_prob
            double top = logits[size_t(ids[0])], sum = 0, kept = 0;
            for (double l : logits)
                sum += std::exp(l - top);
            for (int j = 0; j < m_c.K; ++j)
                kept += (w[size_t(j)] = std::exp(logits[size_t(ids[size_t(j)])] - top) / sum);
            if (m_c.renorm && wrong != Wrong::NoRenorm)
                for (double &x : w)
                    x /= kept;
        }
        Vec out(b.size(), 0.0);
        for (int j = 0; j < m_c.K; ++j) {
            const Vec y = expert(layer, ids[size_t(j)], b, wrong);
            for (size_t i = 0; i < out.size(); ++i)
                out[i] += w[size_t(j)] * y[i];
        }
        return out;
    }

    // The whole forward pass over tokens; the last token's logits.
    Vec logits(const std::vector<int32_t> &tokens) const
    {
        std::vector<Cache> caches(size_t(m_c.L));
        return decoderLogits(
            m_w, tokens, m_c.L, m_c.eps, m_c.tied ? "model.embed_tokens.weight" : "lm_head.weight", m_w,
            [&](int l, const Vec &a, int pos) { return attention(l, a, pos, caches[size_t(l)]); },
            [&](int l, const Vec &b) { return m_c.dense[size_t(l)] ? mlp(l, b) : moe(l, b); });
    }

private:
    // gpt-oss's fused expert tensors, one expert's slice: [2 Im, H] and [H, Im].
    Vec expertGateUp(int layer, int e) const { return slice("model.layers." + std::to_string(layer) + ".mlp.experts.gate_up_proj", e); }
    Vec expertDown(int layer, int e) const { return slice("model.layers." + std::to_string(layer) + ".mlp.experts.down_proj", e); }
    Vec slice(const std::string &name, int e) const
    {
        const Vec all = m_w(name);
        const size_t per = all.size() / size_t(m_c.E);
        return Vec(all.begin() + size_t(e) * per, all.begin() + size_t(e + 1) * per);
    }

    Config m_c;
    Weights m_w;
};

} // namespace gqaref
