// A plain float64 forward pass of Qwen3.5-MoE, written from its public modeling code
// (transformers' modeling_qwen3_5_moe.py; docs/architectures/qwen3.5-moe.md), reading the
// release as it ships: the multimodal wrapper's text_config with rope_parameters nested, the
// text model's tensors under `model.language_model.` (read here through the mapping
// mlx-lm's sanitize makes), the Gated DeltaNet's four projections apart (in_proj_qkv in
// conv channel order, in_proj_z, in_proj_b, in_proj_a by value head), the fused routed
// experts (gate_up_proj[e] · x chunked in two: gate first; down_proj[e]), a router that
// always renormalises, and the gated shared expert. The gated attention is Qwen3-Next's
// (Qwen3_5MoeAttention is Qwen3NextAttention) and is qwen3_next_reference.hpp's; nothing
// here shares code with the engine.
#pragma once

#include "qwen3_next_reference.hpp"

namespace q35ref {

using gqaref::mul;
using gqaref::rmsnorm;
using gqaref::Vec;
using gqaref::Weights;
using json = nlohmann::json;
using qnref::sigmoid;
using qnref::silu;

// text_config with rope_parameters' rope_theta and partial_rotary_factor at top level: the
// flat config Qwen3-Next's reference reads.
inline std::string flatTextConfig(const std::string &wrapperText)
{
    json c = json::parse(wrapperText)["text_config"];
    const json rp = c["rope_parameters"];
    c["rope_theta"] = rp["rope_theta"];
    c["partial_rotary_factor"] = rp.value("partial_rotary_factor", 0.25);
    return c.dump();
}

// The release's names for the text model's: model.X -> model.language_model.X (the head
// stays at top level).
inline Weights releaseNames(Weights w)
{
    return [w](const std::string &n) {
        return w(n.starts_with("model.") ? "model.language_model." + n.substr(6) : n);
    };
}

enum class Wrong {
    None,
    InterleavedQkv,   // in_proj_qkv read per key head [q k v(r Dv)] as Qwen3-Next's in_proj_qkvz groups
    TiledKeyHeads,    // value head h reads key head h mod Hk instead of h / (Hv/Hk)
    SwappedBA,        // in_proj_b taken as the decay input and in_proj_a as beta's
    InterleavedExperts, // gate_up rows interleaved (gpt-oss: gate 2i, up 2i+1) instead of halves
    NoRenorm,         // the top-k weights not renormalised (norm_topk_prob false)
    PlainNorms,       // norm weights applied as stored, not as 1 + w
    FullRope,         // every dim of a head rotated
};

class Reference {
public:
    Reference(const std::string &configText, Weights w)
        : m_flat(flatTextConfig(configText)), m_c(m_flat), m_w(releaseNames(std::move(w))), m_next(m_flat, m_w)
    {
        const json t = json::parse(configText)["text_config"];
        m_E = t["num_experts"];
        m_K = t["num_experts_per_tok"];
        m_I = t["moe_intermediate_size"];
    }

    const qnref::Config &cfg() const { return m_c; }
    using DeltaState = qnref::Reference::DeltaState;
    using Cache = qnref::Reference::Cache;

    Vec norm(const std::string &name, Wrong wrong) const
    {
        Vec w = m_w(name);
        if (wrong != Wrong::PlainNorms)
            for (double &x : w)
                x += 1.0;
        return w;
    }

    Vec deltaNet(int layer, const Vec &a, DeltaState &st, Wrong wrong = Wrong::None) const
    {
        const std::string p = "model.layers." + std::to_string(layer) + ".linear_attn.";
        const int Hk = m_c.Hk, Hv = m_c.Hv, Dk = m_c.Dk, Dv = m_c.Dv, r = Hv / Hk, K = m_c.convK;
        const Vec y = mul(m_w(p + "in_proj_qkv.weight"), a), z = mul(m_w(p + "in_proj_z.weight"), a);
        Vec b = mul(m_w(p + "in_proj_b.weight"), a), al = mul(m_w(p + "in_proj_a.weight"), a);
        if (wrong == Wrong::SwappedBA)
            std::swap(b, al);
        // mixed_qkv = in_proj_qkv(x): [q (Hk Dk) | k (Hk Dk) | v (Hv Dv)], convolved as it stands.
        Vec x = y;
        if (wrong == Wrong::InterleavedQkv) {
            const int group = 2 * Dk + r * Dv;
            for (int g = 0; g < Hk; ++g) {
                for (int i = 0; i < Dk; ++i) {
                    x[size_t(g * Dk + i)] = y[size_t(g * group + i)];
                    x[size_t(Hk * Dk + g * Dk + i)] = y[size_t(g * group + Dk + i)];
                }
                for (int i = 0; i < r * Dv; ++i)
                    x[size_t(2 * Hk * Dk + g * r * Dv + i)] = y[size_t(g * group + 2 * Dk + i)];
            }
        }
        const Vec w = m_w(p + "conv1d.weight");
        if (st.history.empty())
            st.history.assign(size_t(K - 1), Vec(x.size(), 0.0));
        Vec c(x.size());
        for (size_t ch = 0; ch < x.size(); ++ch) {
            double s = x[ch] * w[ch * size_t(K) + size_t(K - 1)];
            for (int j = 0; j < K - 1; ++j)
                s += st.history[size_t(j)][ch] * w[ch * size_t(K) + size_t(j)];
            c[ch] = silu(s);
        }
        st.history.erase(st.history.begin());
        st.history.push_back(x);
        Vec q(c.begin(), c.begin() + Hk * Dk), k(c.begin() + Hk * Dk, c.begin() + 2 * Hk * Dk), v(c.begin() + 2 * Hk * Dk, c.end());
        auto l2 = [](double *h, int n, double scale) { // FLA's l2norm: x · rsqrt(Σx² + 1e-6)
            double ss = 0;
            for (int i = 0; i < n; ++i)
                ss += h[i] * h[i];
            for (int i = 0; i < n; ++i)
                h[i] = h[i] / std::sqrt(ss + 1e-6) * scale;
        };
        for (int g = 0; g < Hk; ++g) {
            l2(q.data() + g * Dk, Dk, 1.0 / std::sqrt(double(Dk)));
            l2(k.data() + g * Dk, Dk, 1.0);
        }
        const Vec A = m_w(p + "A_log"), dt = m_w(p + "dt_bias"), nw = m_w(p + "norm.weight");
        if (st.S.empty())
            st.S.assign(size_t(Hv), Vec(size_t(Dk * Dv), 0.0));
        Vec o(size_t(Hv * Dv));
        for (int h = 0; h < Hv; ++h) {
            const int kh = wrong == Wrong::TiledKeyHeads ? h % Hk : h / r; // repeat_interleave
            const double *qh = q.data() + kh * Dk, *kk = k.data() + kh * Dk, *vh = v.data() + h * Dv;
            const double g = -std::exp(A[size_t(h)]) * std::log1p(std::exp(al[size_t(h)] + dt[size_t(h)]));
            const double beta = sigmoid(b[size_t(h)]);
            Vec &S = st.S[size_t(h)];
            for (double &s : S)
                s *= std::exp(g);
            for (int j = 0; j < Dv; ++j) {
                double mem = 0;
                for (int i = 0; i < Dk; ++i)
                    mem += S[size_t(i * Dv + j)] * kk[i];
                const double delta = (vh[j] - mem) * beta;
                for (int i = 0; i < Dk; ++i)
                    S[size_t(i * Dv + j)] += kk[i] * delta;
            }
            Vec oh(static_cast<size_t>(Dv), 0.0);
            for (int j = 0; j < Dv; ++j)
                for (int i = 0; i < Dk; ++i)
                    oh[size_t(j)] += S[size_t(i * Dv + j)] * qh[i];
            oh = rmsnorm(oh, nw, m_c.eps); // Qwen3_5MoeRMSNormGated: weight as stored, gate SiLU(z)
            for (int j = 0; j < Dv; ++j)
                o[size_t(h * Dv + j)] = oh[size_t(j)] * silu(z[size_t(h * Dv + j)]);
        }
        return mul(m_w(p + "out_proj.weight"), o);
    }

    Vec attention(int layer, const Vec &a, int pos, Cache &cache, Wrong wrong = Wrong::None) const
    {
        const qnref::Wrong w = wrong == Wrong::PlainNorms ? qnref::Wrong::PlainNorms
                               : wrong == Wrong::FullRope ? qnref::Wrong::FullRope
                                                          : qnref::Wrong::None;
        return m_next.attention(layer, a, pos, cache, w);
    }

    // Qwen3_5MoeSparseMoeBlock: softmax over all experts, top k, renormalised; each expert
    // from the fused tensors; plus sigmoid(shared_expert_gate · b) · shared_expert(b).
    Vec moe(int layer, const Vec &b, Wrong wrong = Wrong::None) const
    {
        const std::string p = "model.layers." + std::to_string(layer) + ".mlp.";
        const Vec logits = mul(m_w(p + "gate.weight"), b);
        std::vector<int> ids(static_cast<size_t>(m_E));
        for (int e = 0; e < m_E; ++e)
            ids[size_t(e)] = e;
        std::stable_sort(ids.begin(), ids.end(), [&](int x, int y) { return logits[size_t(x)] > logits[size_t(y)]; });
        ids.resize(size_t(m_K));
        double top = logits[size_t(ids[0])], sum = 0, kept = 0;
        for (double l : logits)
            sum += std::exp(l - top);
        Vec wts(static_cast<size_t>(m_K));
        for (int j = 0; j < m_K; ++j)
            kept += (wts[size_t(j)] = std::exp(logits[size_t(ids[size_t(j)])] - top) / sum);
        if (wrong != Wrong::NoRenorm)
            for (double &x : wts)
                x /= kept;
        const Vec gateUp = m_w(p + "experts.gate_up_proj"), down = m_w(p + "experts.down_proj");
        const size_t H = b.size(), I = size_t(m_I);
        Vec out(H, 0.0);
        for (int j = 0; j < m_K; ++j) {
            const size_t e = size_t(ids[size_t(j)]);
            const Vec gu = mul(Vec(gateUp.begin() + long(e * 2 * I * H), gateUp.begin() + long((e + 1) * 2 * I * H)), b);
            Vec act(I);
            for (size_t i = 0; i < I; ++i) {
                const double g = wrong == Wrong::InterleavedExperts ? gu[2 * i] : gu[i];
                const double u = wrong == Wrong::InterleavedExperts ? gu[2 * i + 1] : gu[I + i];
                act[i] = silu(g) * u;
            }
            const Vec y = mul(Vec(down.begin() + long(e * H * I), down.begin() + long((e + 1) * H * I)), act);
            for (size_t i = 0; i < H; ++i)
                out[i] += wts[size_t(j)] * y[i];
        }
        const Vec g = mul(m_w(p + "shared_expert.gate_proj.weight"), b), u = mul(m_w(p + "shared_expert.up_proj.weight"), b);
        Vec act(g.size());
        for (size_t i = 0; i < g.size(); ++i)
            act[i] = silu(g[i]) * u[i];
        const Vec y = mul(m_w(p + "shared_expert.down_proj.weight"), act);
        const double s = sigmoid(mul(m_w(p + "shared_expert_gate.weight"), b)[0]);
        for (size_t i = 0; i < H; ++i)
            out[i] += s * y[i];
        return out;
    }

    // Logits after each of `tokens` (the last when `all` is false).
    Vec logits(const std::vector<int32_t> &tokens, Wrong wrong = Wrong::None) const
    {
        std::vector<DeltaState> states(size_t(m_c.L));
        std::vector<Cache> caches(size_t(m_c.L));
        return gqaref::decoderLogits(
            m_w, tokens, m_c.L, m_c.eps, "lm_head.weight", [&](const std::string &n) { return norm(n, wrong); },
            [&](int l, const Vec &a, int pos) {
                return m_c.linear[size_t(l)] ? deltaNet(l, a, states[size_t(l)], wrong)
                                             : attention(l, a, pos, caches[size_t(l)], wrong);
            },
            [&](int l, const Vec &b) { return moe(l, b, wrong); });
    }

private:
    std::string m_flat;
    qnref::Config m_c;
    Weights m_w;
    qnref::Reference m_next; // the gated attention (identical in both families)
    int m_E = 0, m_K = 0, m_I = 0;
};

} // namespace q35ref
