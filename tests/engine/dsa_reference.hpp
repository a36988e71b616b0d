// A plain float64 DeepSeek Sparse Attention forward pass (DeepSeek-V3.2, GLM-5.x) written
// from docs/architectures/dsa.md and the public code it cites (transformers'
// DeepseekV32Indexer / GlmMoeDsaIndexer, DeepSeek's inference/model.py), on top of the
// DeepSeek-V3 reference (deepseek_reference.hpp) for the MoE, dense layers and YaRN. Where
// the engine takes another route it follows transformers: the indexer's interleaved RoPE
// de-interleaves and rotates halves (permuting the rotated dims of q and k alike), the
// scores scale each head's dot product before the ReLU, every head's keys and values are
// rebuilt from the cached latent, and the selection is a full sort of the scores.
#pragma once

#include "deepseek_reference.hpp"

#include <numeric>

namespace dsaref {

using dsref::Vec;
using dsref::json;
using k3ref::rmsNorm;

class Reference {
public:
    explicit Reference(const dsref::Container &c) : m_ct(c), m_base(c), m_cfg(c.config()), m_yarn(m_cfg)
    {
        const json &j = m_cfg;
        Hi = j["index_n_heads"], Di = j["index_head_dim"], K = j["index_topk"];
        glm = j.value("model_type", "") == "glm_moe_dsa";
        interleave = j.contains("indexer_rope_interleave") ? j["indexer_rope_interleave"].get<bool>() : glm;
        const int layers = j["num_hidden_layers"];
        shared.assign(size_t(layers), false);
        if (j.contains("indexer_types") && j["indexer_types"].is_array())
            for (int L = 0; L < layers; ++L)
                shared[size_t(L)] = j["indexer_types"][size_t(L)] == "shared";
        if (j.contains("mlp_layer_types") && j["mlp_layer_types"].is_array())
            for (int L = 0; L < layers; ++L)
                dense.push_back(j["mlp_layer_types"][size_t(L)] == "dense");
    }
    int64_t Hi, Di, K;
    bool glm, interleave;
    std::vector<bool> shared, dense;
    const dsref::Reference &base() const { return m_base; }
    void forgetInputs() const { m_inputs.clear(); } // before a new sequence through mla()

    struct Cache {
        std::vector<Vec> latent, rope, ikey; // per position: normed latent, rotated key, indexer key
    };

    // The indexer's RoPE on x[0, dr) at pos: rotate-half pairs (i, i + dr/2) on V3.2; on
    // GLM transformers' apply_rotary_pos_emb_interleave: de-interleave, then rotate halves.
    Vec rope(const Vec &x, int pos, bool inter) const
    {
        const size_t dr = size_t(m_base.dr), h = dr / 2;
        Vec pe(x.begin(), x.begin() + long(dr)), out = x;
        if (inter)
            for (size_t i = 0; i < h; ++i) {
                pe[i] = x[2 * i];
                pe[i + h] = x[2 * i + 1];
            }
        for (size_t i = 0; i < dr; ++i) {
            const double a = pos * m_yarn.invFreq[i % h];
            const double rot = i < h ? -pe[i + h] : pe[i - h];
            out[i] = pe[i] * std::cos(a) + rot * std::sin(a);
        }
        return out;
    }

    // The indexer of layer L for the token at pos = cache size − 1 (its key already cached):
    // the scores of every position up to it, and the positions it keeps (ascending).
    std::vector<int> select(int L, const Vec &a, const Vec &cq, const Cache &cache, Vec *scoresOut = nullptr,
                            int layoutFlip = 0) const
    {
        const std::string p = "model.layers." + std::to_string(L) + ".self_attn.indexer.";
        const bool inter = layoutFlip ? !interleave : interleave;
        const int pos = int(cache.ikey.size()) - 1;
        const Vec q = t(p + "wq_b.weight").mul(cq);
        const Vec w = t(p + "weights_proj.weight").mul(a);
        std::vector<Vec> keys = cache.ikey;
        if (layoutFlip)
            for (int s = 0; s <= pos; ++s)
                keys[size_t(s)] = keyWith(L, s, cache, inter);
        Vec scores(size_t(pos + 1), 0.0);
        for (int64_t h = 0; h < Hi; ++h) {
            const Vec qh = rope(Vec(q.begin() + h * Di, q.begin() + (h + 1) * Di), pos, inter);
            for (int s = 0; s <= pos; ++s) {
                double d = 0;
                for (int64_t i = 0; i < Di; ++i)
                    d += qh[size_t(i)] * keys[size_t(s)][size_t(i)];
                scores[size_t(s)] += std::max(d / std::sqrt(double(Di)), 0.0) * w[size_t(h)] / std::sqrt(double(Hi));
            }
        }
        if (scoresOut)
            *scoresOut = scores;
        std::vector<int> order(size_t(pos + 1));
        std::iota(order.begin(), order.end(), 0);
        if (pos + 1 <= K)
            return order;
        std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return scores[size_t(x)] > scores[size_t(y)]; });
        order.resize(size_t(K));
        std::sort(order.begin(), order.end());
        return order;
    }

    // The indexer key of a token from its normed input a at pos (LayerNorm with bias, eps 1e-6).
    Vec indexKey(int L, const Vec &a, int pos, bool inter) const
    {
        const std::string p = "model.layers." + std::to_string(L) + ".self_attn.indexer.";
        Vec k = t(p + "wk.weight").mul(a);
        double mean = 0, var = 0;
        for (double v : k)
            mean += v;
        mean /= double(k.size());
        for (double v : k)
            var += (v - mean) * (v - mean);
        var /= double(k.size());
        const Vec g = m_ct.vec(p + "k_norm.weight"), b = m_ct.vec(p + "k_norm.bias");
        for (size_t i = 0; i < k.size(); ++i)
            k[i] = (k[i] - mean) / std::sqrt(var + 1e-6) * g[i] + b[i];
        return rope(k, pos, inter);
    }

    // MLA of layer L for one token over `sel` (positions; empty: the layer's own indexer picks,
    // written to *picked). dense: ignore the selection (an ablation).
    Vec mla(int L, const Vec &a, Cache &cache, std::vector<int> &sel, bool dense = false, int layoutFlip = 0) const
    {
        const dsref::Reference &r = m_base;
        const std::string p = "model.layers." + std::to_string(L) + ".self_attn.";
        const int64_t nh = r.nh, dn = r.dn, dr = r.dr, dv = r.dv, dc = r.dc, dq = dn + dr;
        const int pos = int(cache.latent.size());
        const Vec cq = rmsNorm(t(p + "q_a_proj.weight").mul(a), m_ct.vec(p + "q_a_layernorm.weight"), r.eps);
        const Vec q = t(p + "q_b_proj.weight").mul(cq);
        const Vec kv = t(p + "kv_a_proj_with_mqa.weight").mul(a);
        cache.latent.push_back(rmsNorm(Vec(kv.begin(), kv.begin() + dc), m_ct.vec(p + "kv_a_layernorm.weight"), r.eps));
        cache.rope.push_back(m_yarn.rotate(Vec(kv.begin() + dc, kv.end()), pos));
        if (!shared[size_t(L)]) {
            cache.ikey.push_back(indexKey(L, a, pos, interleave));
            m_inputs[L].push_back(a);
            sel = select(L, a, cq, cache, nullptr, layoutFlip);
        }
        std::vector<int> keys = sel;
        if (dense || keys.empty()) {
            keys.resize(size_t(pos + 1));
            std::iota(keys.begin(), keys.end(), 0);
        }
        const Mat &kvb = t(p + "kv_b_proj.weight");
        Vec o(static_cast<size_t>(nh * dv), 0.0);
        std::vector<Vec> kvs;
        for (int s : keys)
            kvs.push_back(kvb.mul(cache.latent[size_t(s)]));
        for (int64_t h = 0; h < nh; ++h) {
            const Vec qpe = m_yarn.rotate(Vec(q.begin() + h * dq + dn, q.begin() + (h + 1) * dq), pos);
            Vec z(keys.size());
            for (size_t j = 0; j < keys.size(); ++j) {
                double d = 0;
                for (int64_t i = 0; i < dn; ++i)
                    d += q[size_t(h * dq + i)] * kvs[j][size_t(h * (dn + dv) + i)];
                for (int64_t i = 0; i < dr; ++i)
                    d += qpe[size_t(i)] * cache.rope[size_t(keys[j])][size_t(i)];
                z[j] = d * m_yarn.score;
            }
            const double zmax = *std::max_element(z.begin(), z.end());
            double sum = 0;
            for (double &v : z)
                sum += (v = std::exp(v - zmax));
            for (size_t j = 0; j < keys.size(); ++j)
                for (int64_t i = 0; i < dv; ++i)
                    o[size_t(h * dv + i)] += z[j] / sum * kvs[j][size_t(h * (dn + dv) + dn + i)];
        }
        return t(p + "o_proj.weight").mul(o);
    }

    bool moeLayer(int L) const
    {
        if (size_t(L) < dense.size())
            return !dense[size_t(L)];
        return L >= m_base.firstDense;
    }

    // The whole forward pass over `tokens`; the last token's logits. *selections: per token,
    // per layer, the positions attended (empty: all).
    Vec logits(const std::vector<int32_t> &tokens, std::vector<std::vector<std::vector<int>>> *selections = nullptr,
               bool dense = false, int layoutFlip = 0) const
    {
        const dsref::Reference &r = m_base;
        std::vector<Cache> caches(static_cast<size_t>(r.layers));
        m_inputs.clear();
        const Mat &embed = t("model.embed_tokens.weight");
        Vec x;
        for (int32_t tok : tokens) {
            x = embed.row(tok);
            std::vector<int> sel;
            std::vector<std::vector<int>> perLayer;
            for (int L = 0; L < r.layers; ++L) {
                const std::string p = "model.layers." + std::to_string(L) + ".";
                const Vec a = rmsNorm(x, m_ct.vec(p + "input_layernorm.weight"), r.eps);
                const Vec o = mla(L, a, caches[size_t(L)], sel, dense, layoutFlip);
                perLayer.push_back(sel);
                for (size_t i = 0; i < x.size(); ++i)
                    x[i] += o[i];
                const Vec b = rmsNorm(x, m_ct.vec(p + "post_attention_layernorm.weight"), r.eps);
                const Vec f = moeLayer(L) ? r.moe(L, b) : r.denseFfn(L, b);
                for (size_t i = 0; i < x.size(); ++i)
                    x[i] += f[i];
            }
            if (selections)
                selections->push_back(perLayer);
        }
        return t("lm_head.weight").mul(rmsNorm(x, m_ct.vec("model.norm.weight"), r.eps));
    }

private:
    using Mat = k3ref::Mat;
    const Mat &t(const std::string &name) const { return m_base.t(name); }
    // The key of position s recomputed with the other layout (ablations only).
    Vec keyWith(int L, int s, const Cache &, bool inter) const { return indexKey(L, m_inputs.at(L)[size_t(s)], s, inter); }

    const dsref::Container &m_ct;
    dsref::Reference m_base;
    json m_cfg;
    dsref::Yarn m_yarn;
    mutable std::map<int, std::vector<Vec>> m_inputs; // per indexer layer: each position's normed input
};

} // namespace dsaref
