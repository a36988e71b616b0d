// A plain float64 DeepSeek-V3 / Kimi K2 forward pass written from
// docs/architectures/deepseek-v3.md (the releases' config.json and modeling code),
// reading a container with k3_reference.hpp's independent readers (trunk formats,
// native FP8 / INT4 expert records). It follows the Hugging Face formulation where the
// engine takes another route: RoPE de-interleaves the rotated dims and uses
// rotate_half, attention rebuilds every head's keys and values from the cached latent,
// and the group mask is applied as a separate pass over the experts.
#pragma once

#include "k3_reference.hpp"

#include <numbers>

namespace dsref {

using k3ref::Container;
using k3ref::Mat;
using k3ref::Vec;
using k3ref::json;
using k3ref::rmsNorm;
using k3ref::sigmoid;
using k3ref::silu;

inline double mscaleOf(double s, double k) { return s <= 1 ? 1.0 : 0.1 * k * std::log(s) + 1.0; }

// Inverse frequencies, cos/sin scale and score scale from config.json's keys.
struct Yarn {
    Vec invFreq;
    double cosSin = 1, score = 1;
    Yarn(const json &c, bool withYarn = true)
    {
        const int d = c["qk_rope_head_dim"], dq = d + c["qk_nope_head_dim"].get<int>();
        // GLM-5 nests theta in rope_parameters (rope_type default: no scaling).
        const double base = c.contains("rope_theta") ? c["rope_theta"].get<double>()
                                                     : c["rope_parameters"]["rope_theta"].get<double>();
        score = 1.0 / std::sqrt(double(dq));
        Vec extra(size_t(d / 2));
        for (int i = 0; i < d / 2; ++i)
            extra[size_t(i)] = std::pow(base, -double(2 * i) / d);
        invFreq = extra;
        if (!withYarn || !c.contains("rope_scaling") || c["rope_scaling"].is_null())
            return;
        const json &s = c["rope_scaling"];
        const double f = s["factor"], L0 = s["original_max_position_embeddings"];
        auto corr = [&](double r) { return d * std::log(L0 / (r * 2 * std::numbers::pi)) / (2 * std::log(base)); };
        const double lo = std::max(std::floor(corr(s["beta_fast"].get<double>())), 0.0);
        double hi = std::min(std::ceil(corr(s["beta_slow"].get<double>())), double(d - 1));
        if (lo == hi)
            hi += 0.001;
        for (int i = 0; i < d / 2; ++i) {
            const double mask = 1.0 - std::clamp((i - lo) / (hi - lo), 0.0, 1.0); // 1: keep the frequency
            invFreq[size_t(i)] = extra[size_t(i)] / f * (1 - mask) + extra[size_t(i)] * mask;
        }
        const double m = s.value("mscale", 1.0), mall = s.value("mscale_all_dim", 0.0);
        cosSin = mscaleOf(f, m) / mscaleOf(f, mall);
        if (mall != 0)
            score *= mscaleOf(f, mall) * mscaleOf(f, mall);
    }
    // HF's apply_rotary_pos_emb on one vector: de-interleave, then x·cos + rotate_half(x)·sin.
    Vec rotate(const Vec &x, int pos) const
    {
        const size_t h = x.size() / 2;
        Vec y(x.size()), out(x.size());
        for (size_t i = 0; i < h; ++i) {
            y[i] = x[2 * i];
            y[i + h] = x[2 * i + 1];
        }
        for (size_t i = 0; i < x.size(); ++i) {
            const double a = pos * invFreq[i % h];
            const double rot = i < h ? -y[i + h] : y[i - h];
            out[i] = y[i] * std::cos(a) * cosSin + rot * std::sin(a) * cosSin;
        }
        return out;
    }
};

// Group-limited top-k on the selection keys: the experts chosen, best first.
inline std::vector<int> route(const Vec &key, int K, int groups, int topkGroups)
{
    const int E = int(key.size()), per = E / groups;
    Vec masked = key;
    if (groups > 1) {
        std::vector<std::pair<double, int>> gs;
        for (int g = 0; g < groups; ++g) {
            Vec v(key.begin() + g * per, key.begin() + (g + 1) * per);
            std::sort(v.begin(), v.end(), std::greater<>());
            gs.push_back({v[0] + v[1], g});
        }
        std::stable_sort(gs.begin(), gs.end(), [](auto a, auto b) { return a.first > b.first; });
        std::vector<bool> keep(static_cast<size_t>(groups), false);
        for (int j = 0; j < topkGroups; ++j)
            keep[size_t(gs[size_t(j)].second)] = true;
        for (int e = 0; e < E; ++e)
            if (!keep[size_t(e / per)])
                masked[size_t(e)] = -INFINITY;
    }
    std::vector<int> order(static_cast<size_t>(E));
    for (int e = 0; e < E; ++e)
        order[size_t(e)] = e;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return masked[size_t(a)] > masked[size_t(b)]; });
    order.resize(size_t(K));
    return order;
}

class Reference {
public:
    explicit Reference(const Container &c) : m_ct(c), m_cfg(c.config()), m_yarn(m_cfg)
    {
        const json &j = m_cfg;
        Hd = j["hidden_size"], layers = j["num_hidden_layers"], firstDense = j["first_k_dense_replace"];
        E = j["n_routed_experts"], K = j["num_experts_per_tok"], groups = j["n_group"], topkGroups = j["topk_group"];
        nh = j["num_attention_heads"], dn = j["qk_nope_head_dim"], dr = j["qk_rope_head_dim"], dv = j["v_head_dim"];
        dc = j["kv_lora_rank"];
        eps = j["rms_norm_eps"], rsf = j["routed_scaling_factor"];
        renorm = j["norm_topk_prob"];
    }
    int64_t Hd, layers, firstDense, E, K, groups, topkGroups, nh, dn, dr, dv, dc;
    double eps, rsf;
    bool renorm;
    const Yarn &yarn() const { return m_yarn; }

    struct Cache {
        std::vector<Vec> latent, rope; // per position: normed latent, rotated shared key
    };
    // One MLA step at position cache.latent.size(); `y` overrides the rotation (ablations).
    Vec mla(int L, const Vec &a, Cache &cache, const Yarn *y = nullptr) const
    {
        const Yarn &yr = y ? *y : m_yarn;
        const std::string p = "model.layers." + std::to_string(L) + ".self_attn.";
        const int64_t dq = dn + dr;
        const int pos = int(cache.latent.size());
        const Vec q = t(p + "q_b_proj.weight").mul(rmsNorm(t(p + "q_a_proj.weight").mul(a), m_ct.vec(p + "q_a_layernorm.weight"), eps));
        const Vec kv = t(p + "kv_a_proj_with_mqa.weight").mul(a);
        cache.latent.push_back(rmsNorm(Vec(kv.begin(), kv.begin() + dc), m_ct.vec(p + "kv_a_layernorm.weight"), eps));
        cache.rope.push_back(yr.rotate(Vec(kv.begin() + dc, kv.end()), pos));
        const Mat &kvb = t(p + "kv_b_proj.weight");
        const size_t n = cache.latent.size();
        std::vector<Vec> kvs(n);
        for (size_t s = 0; s < n; ++s)
            kvs[s] = kvb.mul(cache.latent[s]);
        Vec o(static_cast<size_t>(nh * dv), 0.0);
        for (int64_t h = 0; h < nh; ++h) {
            const Vec qpe = yr.rotate(Vec(q.begin() + h * dq + dn, q.begin() + (h + 1) * dq), pos);
            Vec z(n);
            for (size_t s = 0; s < n; ++s) {
                double d = 0;
                for (int64_t i = 0; i < dn; ++i)
                    d += q[size_t(h * dq + i)] * kvs[s][size_t(h * (dn + dv) + i)];
                for (int64_t i = 0; i < dr; ++i)
                    d += qpe[size_t(i)] * cache.rope[s][size_t(i)];
                z[s] = d * yr.score;
            }
            const double zmax = *std::max_element(z.begin(), z.end());
            double sum = 0;
            for (double &v : z)
                sum += (v = std::exp(v - zmax));
            for (size_t s = 0; s < n; ++s)
                for (int64_t i = 0; i < dv; ++i)
                    o[size_t(h * dv + i)] += z[s] / sum * kvs[s][size_t(h * (dn + dv) + dn + i)];
        }
        return t(p + "o_proj.weight").mul(o);
    }

    Vec glu(const Mat &gate, const Mat &up, const Mat &down, const Vec &x) const
    {
        const Vec g = gate.mul(x), u = up.mul(x);
        Vec h(g.size());
        for (size_t i = 0; i < g.size(); ++i)
            h[i] = silu(g[i]) * u[i];
        return down.mul(h);
    }

    Vec denseFfn(int L, const Vec &b) const
    {
        const std::string p = "model.layers." + std::to_string(L) + ".mlp.";
        return glu(t(p + "gate_proj.weight"), t(p + "up_proj.weight"), t(p + "down_proj.weight"), b);
    }

    // The selection keys of a MoE layer's router for input b.
    Vec keys(int L, const Vec &b, Vec *scores = nullptr) const
    {
        const std::string p = "model.layers." + std::to_string(L) + ".mlp.";
        const Vec logits = t(p + "gate.weight").mul(b);
        const Vec bias = m_ct.vec(p + "gate.e_score_correction_bias");
        Vec s(logits.size()), k(logits.size());
        for (size_t e = 0; e < s.size(); ++e) {
            s[e] = sigmoid(logits[e]);
            k[e] = s[e] + bias[e];
        }
        if (scores)
            *scores = s;
        return k;
    }

    // The MoE layer; `chosen` receives the experts; groupsOverride 1 ablates the grouping.
    Vec moe(int L, const Vec &b, std::vector<int> *chosen = nullptr, int groupsOverride = 0) const
    {
        const std::string p = "model.layers." + std::to_string(L) + ".mlp.";
        Vec s;
        const Vec k = keys(L, b, &s);
        const std::vector<int> order = route(k, int(K), groupsOverride ? groupsOverride : int(groups), int(topkGroups));
        if (chosen)
            *chosen = order;
        Vec w(static_cast<size_t>(K));
        double sum = 0;
        for (int64_t j = 0; j < K; ++j)
            sum += (w[size_t(j)] = s[size_t(order[size_t(j)])]);
        for (double &v : w)
            v = (renorm && K > 1 ? v / (sum + 1e-20) : v) * rsf;
        Vec out = glu(t(p + "shared_experts.gate_proj.weight"), t(p + "shared_experts.up_proj.weight"),
                      t(p + "shared_experts.down_proj.weight"), b);
        for (int64_t j = 0; j < K; ++j) {
            const auto ex = expert(L, order[size_t(j)]);
            const Vec y = glu(ex[0], ex[1], ex[2], b);
            for (size_t i = 0; i < out.size(); ++i)
                out[i] += w[size_t(j)] * y[i];
        }
        return out;
    }

    // The whole forward pass over `tokens`; the last token's logits.
    Vec logits(const std::vector<int32_t> &tokens) const
    {
        std::vector<Cache> caches(static_cast<size_t>(layers));
        const Mat &embed = t("model.embed_tokens.weight");
        Vec x;
        for (int32_t tok : tokens) {
            x = embed.row(tok);
            for (int L = 0; L < layers; ++L) {
                const std::string p = "model.layers." + std::to_string(L) + ".";
                const Vec r = mla(L, rmsNorm(x, m_ct.vec(p + "input_layernorm.weight"), eps), caches[size_t(L)]);
                for (size_t i = 0; i < x.size(); ++i)
                    x[i] += r[i];
                const Vec b = rmsNorm(x, m_ct.vec(p + "post_attention_layernorm.weight"), eps);
                const Vec f = L < firstDense ? denseFfn(L, b) : moe(L, b);
                for (size_t i = 0; i < x.size(); ++i)
                    x[i] += f[i];
            }
        }
        return t("lm_head.weight").mul(rmsNorm(x, m_ct.vec("model.norm.weight"), eps));
    }

    std::array<Mat, 3> expert(int L, int e) const
    {
        const auto key = std::make_pair(L, e);
        auto it = m_experts.find(key);
        if (it == m_experts.end())
            it = m_experts.emplace(key, m_ct.expert(L, e)).first;
        return it->second;
    }
    const Mat &t(const std::string &name) const
    {
        auto it = m_mats.find(name);
        if (it == m_mats.end())
            it = m_mats.emplace(name, m_ct.tensor(name)).first;
        return it->second;
    }

private:
    const Container &m_ct;
    json m_cfg;
    Yarn m_yarn;
    mutable std::map<std::string, Mat> m_mats;
    mutable std::map<std::pair<int, int>, std::array<Mat, 3>> m_experts;
};

} // namespace dsref
