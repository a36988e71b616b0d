// A plain float64 forward pass of Qwen3-Next, written from its public modeling code
// (docs/architectures/qwen3-next.md): its own config reading, the Gated DeltaNet
// (per-key-head projection layout, causal short convolution over a history of inputs,
// L2-normalised q and k, per-head decay, the delta rule, the SiLU-gated output norm),
// the gated full attention with partial RoPE and zero-centred q/k norms, and the shared
// expert with its sigmoid gate. The routed experts and the matrix and norm helpers are
// gqa_reference.hpp's (Qwen3-MoE's router and experts are the same), so nothing here
// shares code with the engine.
#pragma once

#include "gqa_reference.hpp"

namespace qnref {

using gqaref::mul;
using gqaref::rmsnorm;
using gqaref::Vec;
using gqaref::Weights;
using json = nlohmann::json;

struct Config {
    int H = 0, L = 0, nh = 0, kvh = 0, hd = 0, rot = 0;
    int Hk = 0, Hv = 0, Dk = 0, Dv = 0, convK = 0, sharedInter = 0;
    double eps = 1e-6, theta = 10000;
    std::vector<bool> linear; // per layer: Gated DeltaNet (else full attention)

    explicit Config(const std::string &text)
    {
        const json c = json::parse(text);
        H = c["hidden_size"];
        L = c["num_hidden_layers"];
        nh = c["num_attention_heads"];
        kvh = c["num_key_value_heads"];
        hd = c["head_dim"];
        rot = int(hd * c["partial_rotary_factor"].get<double>());
        Hk = c["linear_num_key_heads"];
        Hv = c["linear_num_value_heads"];
        Dk = c["linear_key_head_dim"];
        Dv = c["linear_value_head_dim"];
        convK = c["linear_conv_kernel_dim"];
        sharedInter = c["shared_expert_intermediate_size"];
        eps = c["rms_norm_eps"];
        theta = c["rope_theta"];
        for (int i = 0; i < L; ++i)
            linear.push_back(c["layer_types"][size_t(i)] == "linear_attention");
    }
};

// Plausible misreadings a test may switch on to show the engine's reading is no accident.
enum class Wrong {
    None,
    BlockedQkvz,     // q, k, v, z as four plain blocks instead of interleaved per key head
    TiledKeyHeads,   // value head h reads key head h mod Hk instead of h / (Hv/Hk)
    SigmoidNormGate, // KDA's sigmoid instead of SiLU(z) on the output norm
    NoConv,          // no short convolution (SiLU only)
    PlainNorms,      // norm weights applied as stored, not as 1 + w
    NoOutputGate,    // attention output not scaled by sigmoid(gate)
    FullRope,        // every dim of a head rotated
    NoSharedGate,    // shared expert added ungated
};

inline double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }
inline double silu(double z) { return z * sigmoid(z); }

class Reference {
public:
    Reference(const std::string &configText, Weights w)
        : m_c(configText), m_w(w), m_routed(gqaref::Config(configText), w)
    {
    }

    const Config &cfg() const { return m_c; }

    // A Gated DeltaNet layer's state: one Dk × Dv matrix per value head (row = key dim)
    // and the convolution's last K − 1 inputs (oldest first).
    struct DeltaState {
        std::vector<Vec> S;
        std::vector<Vec> history;
    };
    struct Cache {
        std::vector<Vec> k, v;
    };

    // A zero-centred norm's applied weight.
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
        const Vec y = mul(m_w(p + "in_proj_qkvz.weight"), a), e = mul(m_w(p + "in_proj_ba.weight"), a);
        Vec q(size_t(Hk * Dk)), k(size_t(Hk * Dk)), v(size_t(Hv * Dv)), z(size_t(Hv * Dv));
        Vec b(static_cast<size_t>(Hv)), al(static_cast<size_t>(Hv));
        for (int g = 0; g < Hk; ++g) {
            const size_t group = size_t(2 * Dk + 2 * r * Dv);
            for (int i = 0; i < Dk; ++i) {
                if (wrong == Wrong::BlockedQkvz) {
                    q[size_t(g * Dk + i)] = y[size_t(g * Dk + i)];
                    k[size_t(g * Dk + i)] = y[size_t(Hk * Dk + g * Dk + i)];
                } else {
                    q[size_t(g * Dk + i)] = y[g * group + size_t(i)];
                    k[size_t(g * Dk + i)] = y[g * group + size_t(Dk + i)];
                }
            }
            for (int i = 0; i < r * Dv; ++i) {
                const size_t o = size_t(g * r * Dv + i);
                if (wrong == Wrong::BlockedQkvz) {
                    v[o] = y[size_t(2 * Hk * Dk) + o];
                    z[o] = y[size_t(2 * Hk * Dk + Hv * Dv) + o];
                } else {
                    v[o] = y[g * group + size_t(2 * Dk + i)];
                    z[o] = y[g * group + size_t(2 * Dk + r * Dv + i)];
                }
            }
            for (int j = 0; j < r; ++j) {
                b[size_t(g * r + j)] = e[size_t(g * 2 * r + j)];
                al[size_t(g * r + j)] = e[size_t(g * 2 * r + r + j)];
            }
        }
        // Causal depthwise convolution over [q, k, v], then SiLU.
        Vec x = q;
        x.insert(x.end(), k.begin(), k.end());
        x.insert(x.end(), v.begin(), v.end());
        const Vec w = m_w(p + "conv1d.weight");
        if (st.history.empty())
            st.history.assign(size_t(K - 1), Vec(x.size(), 0.0));
        Vec c(x.size());
        for (size_t ch = 0; ch < x.size(); ++ch) {
            double s = x[ch] * w[ch * size_t(K) + size_t(K - 1)];
            for (int j = 0; j < K - 1; ++j)
                s += st.history[size_t(j)][ch] * w[ch * size_t(K) + size_t(j)];
            c[ch] = silu(wrong == Wrong::NoConv ? x[ch] : s);
        }
        st.history.erase(st.history.begin());
        st.history.push_back(x);
        std::copy(c.begin(), c.begin() + Hk * Dk, q.begin());
        std::copy(c.begin() + Hk * Dk, c.begin() + 2 * Hk * Dk, k.begin());
        std::copy(c.begin() + 2 * Hk * Dk, c.end(), v.begin());
        auto l2 = [](double *h, int n, double scale) {
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
            const int kh = wrong == Wrong::TiledKeyHeads ? h % Hk : h / r;
            const double *qh = q.data() + kh * Dk, *kk = k.data() + kh * Dk, *vh = v.data() + h * Dv;
            const double gate = -std::exp(A[size_t(h)]) * std::log1p(std::exp(al[size_t(h)] + dt[size_t(h)]));
            const double beta = sigmoid(b[size_t(h)]);
            Vec &S = st.S[size_t(h)];
            for (double &s : S)
                s *= std::exp(gate);
            for (int j = 0; j < Dv; ++j) {
                double mem = 0;
                for (int i = 0; i < Dk; ++i)
                    mem += S[size_t(i * Dv + j)] * kk[i];
                const double delta = (vh[j] - mem) * beta;
                for (int i = 0; i < Dk; ++i)
                    S[size_t(i * Dv + j)] += kk[i] * delta;
            }
            // Gated RMSNorm of the head's readout.
            Vec oh(static_cast<size_t>(Dv), 0.0);
            for (int j = 0; j < Dv; ++j)
                for (int i = 0; i < Dk; ++i)
                    oh[size_t(j)] += S[size_t(i * Dv + j)] * qh[i];
            oh = rmsnorm(oh, nw, m_c.eps);
            for (int j = 0; j < Dv; ++j) {
                const double zz = z[size_t(h * Dv + j)];
                o[size_t(h * Dv + j)] = oh[size_t(j)] * (wrong == Wrong::SigmoidNormGate ? sigmoid(zz) : silu(zz));
            }
        }
        return mul(m_w(p + "out_proj.weight"), o);
    }

    Vec attention(int layer, const Vec &a, int pos, Cache &cache, Wrong wrong = Wrong::None) const
    {
        const std::string p = "model.layers." + std::to_string(layer) + ".self_attn.";
        const int nh = m_c.nh, kvh = m_c.kvh, hd = m_c.hd;
        const Vec qg = mul(m_w(p + "q_proj.weight"), a);
        Vec k = mul(m_w(p + "k_proj.weight"), a), v = mul(m_w(p + "v_proj.weight"), a);
        Vec q(size_t(nh * hd)), gate(size_t(nh * hd));
        for (int h = 0; h < nh; ++h)
            for (int j = 0; j < hd; ++j) {
                q[size_t(h * hd + j)] = qg[size_t(2 * h * hd + j)];
                gate[size_t(h * hd + j)] = qg[size_t(2 * h * hd + hd + j)];
            }
        const Vec qn = norm(p + "q_norm.weight", wrong), kn = norm(p + "k_norm.weight", wrong);
        const int rot = wrong == Wrong::FullRope ? hd : m_c.rot, half = rot / 2;
        auto turn = [&](double *x) {
            for (int i = 0; i < half; ++i) {
                const double f = double(pos) * std::pow(m_c.theta, -2.0 * i / rot);
                const double x1 = x[i], x2 = x[i + half];
                x[i] = x1 * std::cos(f) - x2 * std::sin(f);
                x[i + half] = x2 * std::cos(f) + x1 * std::sin(f);
            }
        };
        for (int h = 0; h < nh; ++h) {
            const Vec x = rmsnorm(Vec(q.begin() + h * hd, q.begin() + (h + 1) * hd), qn, m_c.eps);
            std::copy(x.begin(), x.end(), q.begin() + h * hd);
            turn(q.data() + h * hd);
        }
        for (int h = 0; h < kvh; ++h) {
            const Vec x = rmsnorm(Vec(k.begin() + h * hd, k.begin() + (h + 1) * hd), kn, m_c.eps);
            std::copy(x.begin(), x.end(), k.begin() + h * hd);
            turn(k.data() + h * hd);
        }
        if (int(cache.k.size()) != pos)
            throw std::runtime_error("reference cache out of step");
        cache.k.push_back(k);
        cache.v.push_back(v);
        Vec o(size_t(nh * hd), 0.0);
        for (int h = 0; h < nh; ++h) {
            const int g = h / (nh / kvh);
            Vec s;
            double top = -INFINITY, sum = 0;
            for (int t = 0; t <= pos; ++t) {
                double d = 0;
                for (int j = 0; j < hd; ++j)
                    d += q[size_t(h * hd + j)] * cache.k[size_t(t)][size_t(g * hd + j)];
                s.push_back(d / std::sqrt(double(hd)));
                top = std::max(top, s.back());
            }
            for (double &x : s)
                sum += (x = std::exp(x - top));
            for (int t = 0; t <= pos; ++t)
                for (int j = 0; j < hd; ++j)
                    o[size_t(h * hd + j)] += s[size_t(t)] / sum * cache.v[size_t(t)][size_t(g * hd + j)];
        }
        if (wrong != Wrong::NoOutputGate)
            for (size_t i = 0; i < o.size(); ++i)
                o[i] *= sigmoid(gate[i]);
        return mul(m_w(p + "o_proj.weight"), o);
    }

    // The MoE sub-layer: Qwen3-MoE's routed experts plus the gated shared expert.
    Vec moe(int layer, const Vec &b, Wrong wrong = Wrong::None) const
    {
        const std::string p = "model.layers." + std::to_string(layer) + ".mlp.";
        Vec out = m_routed.moe(layer, b);
        const Vec g = mul(m_w(p + "shared_expert.gate_proj.weight"), b), u = mul(m_w(p + "shared_expert.up_proj.weight"), b);
        Vec act(g.size());
        for (size_t i = 0; i < g.size(); ++i)
            act[i] = silu(g[i]) * u[i];
        const Vec y = mul(m_w(p + "shared_expert.down_proj.weight"), act);
        const double s = wrong == Wrong::NoSharedGate ? 1.0 : sigmoid(mul(m_w(p + "shared_expert_gate.weight"), b)[0]);
        for (size_t i = 0; i < out.size(); ++i)
            out[i] += s * y[i];
        return out;
    }

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
    Config m_c;
    Weights m_w;
    gqaref::Reference m_routed;
};

} // namespace qnref
