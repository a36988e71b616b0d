// Every Kimi K3 component of the engine against a plain float64 implementation written
// here from reference/k3-math.md and kimi-linear-math.md, on the real weights of the
// tiny K3 container (`waste mktiny --k3`, MXFP4 experts converted to VQ3R):
//   KDA with the bounded decay gate and the full-rank output gate (state across tokens),
//   MLA with q_lora and the output gate (expanded, not absorbed, form),
//   the latent MoE with SiTU-GLU, the router and 2 shared experts, and the SiTU dense FFN,
//   the Attention-Residuals mixing function, and the whole forward pass (block history,
//   output aggregation) against Model::eval.
// The reference reads manifest.json, trunk.bin, codebooks.bin and the expert banks with
// its own decoders. Error = max |engine − reference| / max |reference| per output vector;
// each component must be within 1e-5. Each test also checks that a plausible wrong
// reading of its K3 switch is far from the engine, so none of them can pass by accident.
// Over 600 lines on purpose: the float64 reference's weight readers and forward pieces are
// shared by every component test, and splitting them would mean a second copy or a library
// used by this one suite.
#include "format/codebooks.hpp"
#include "format/expert_bank.hpp"
#include "format/manifest.hpp"
#include "format/trunk.hpp"
#include "model/attn_res.hpp"
#include "model/expert_source.hpp"
#include "model/forward.hpp"
#include "model/state.hpp"
#include "model/weights.hpp"

#include "test_files.hpp"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>

namespace fs = std::filesystem;
using json = nlohmann::json;
using Vec = std::vector<double>;

namespace {

constexpr double kTolerance = 1e-5;

// ---- Independent readers (kimi-linear-math §1.4–1.6) -------------------------------

double f16(uint16_t h, bool flushSubnormals)
{
    const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 0)
        v = flushSubnormals ? 0.0 : std::ldexp(double(m), -24);
    else
        v = std::ldexp(1.0 + m / 1024.0, e - 15); // e = 31 is an ordinary exponent here
    return s ? -v : v;
}

struct Mat {
    int64_t rows = 0, cols = 0;
    Vec w;
    Vec mul(const Vec &x) const
    {
        Vec y(static_cast<size_t>(rows), 0.0);
        for (int64_t r = 0; r < rows; ++r) {
            double s = 0;
            for (int64_t c = 0; c < cols; ++c)
                s += w[size_t(r * cols + c)] * x[size_t(c)];
            y[size_t(r)] = s;
        }
        return y;
    }
    Vec row(int64_t r) const { return Vec(w.begin() + r * cols, w.begin() + (r + 1) * cols); }
};

class Container {
public:
    explicit Container(const std::string &dir) : m_dir(dir)
    {
        m_manifest = json::parse(slurp(dir + "/manifest.json"));
        m_trunk = slurp(dir + "/trunk.bin");
        m_prefix = m_manifest["tensor_prefix"].get<std::string>();
        for (const auto &e : m_manifest["trunk"])
            m_entries[e["name"].get<std::string>()] = e;
        const std::string cb = slurp(dir + "/codebooks.bin");
        const size_t rec = 16 + 256 * 8 * 2;
        for (size_t b = 0; b + rec <= cb.size(); b += rec) {
            Vec book(256 * 8);
            for (size_t i = 0; i < book.size(); ++i) {
                uint16_t h;
                std::memcpy(&h, cb.data() + b + 16 + 2 * i, 2);
                book[i] = f16(h, true);
            }
            m_books.push_back(std::move(book));
        }
    }
    const json &config() const { return m_manifest["config"]; }
    const json &manifest() const { return m_manifest; }

    // A trunk tensor (name without the prefix) as a [rows, cols] matrix of exact values.
    Mat tensor(const std::string &name) const
    {
        const json &e = m_entries.at(m_prefix + name);
        Mat m;
        m.cols = e["shape"].back().get<int64_t>();
        m.rows = 1;
        for (const auto &d : e["shape"])
            m.rows *= d.get<int64_t>();
        m.rows /= m.cols;
        m.w.resize(size_t(m.rows * m.cols));
        const int fmt = e["fmt"];
        const auto *p = reinterpret_cast<const uint8_t *>(m_trunk.data()) + e["off"].get<int64_t>();
        if (fmt == 0) {
            for (size_t i = 0; i < m.w.size(); ++i) {
                float f;
                std::memcpy(&f, p + 4 * i, 4);
                m.w[i] = f;
            }
            return m;
        }
        const int64_t g = e.value("group", 128), ng = (m.cols + g - 1) / g, np = ng * g;
        const auto *sc = reinterpret_cast<const uint8_t *>(m_trunk.data()) + e["scale_off"].get<int64_t>();
        const int64_t rowBytes = fmt == 2 ? np : fmt == 3 ? np / 2 : (3 * np + 7) / 8 + 1;
        for (int64_t r = 0; r < m.rows; ++r) {
            const uint8_t *row = p + r * rowBytes;
            for (int64_t i = 0; i < m.cols; ++i) {
                int q;
                if (fmt == 2) {
                    q = int8_t(row[i]);
                } else if (fmt == 3) {
                    q = ((i & 1) ? (row[i / 2] >> 4) : (row[i / 2] & 15)) - 8;
                } else { // Q3G: 3-bit field at bit 3i, LSB first
                    const int64_t bit = 3 * i;
                    const unsigned two = row[bit / 8] | (unsigned(row[bit / 8 + 1]) << 8);
                    q = int((two >> (bit % 8)) & 7) - 4;
                }
                uint16_t h;
                std::memcpy(&h, sc + 2 * (r * ng + i / g), 2);
                m.w[size_t(r * m.cols + i)] = q * f16(h, false);
            }
        }
        return m;
    }
    Vec vec(const std::string &name) const { return tensor(name).w; }

    // Routed expert e of `layer`: gate, up [Im, W] and down [W, Im] (k3-math §1.5).
    std::array<Mat, 3> expert(int layer, int e) const
    {
        const json &bank = m_manifest["layers"][std::to_string(layer)];
        const std::string file = slurp(m_dir + "/" + bank["file"].get<std::string>());
        const int64_t R = bank["bytes"].get<int64_t>() / bank["experts"].get<int64_t>();
        const auto *rec = reinterpret_cast<const uint8_t *>(file.data()) + e * R;
        uint32_t h[12];
        std::memcpy(h, rec, 48);
        uint16_t cb;
        std::memcpy(&cb, rec + 10, 2);
        const json &c = config();
        const int64_t Im = c["moe_intermediate_size"], W = c.value("routed_expert_hidden_size", c["hidden_size"].get<int64_t>());
        const int S = m_manifest["expert_quant"]["stages"];
        std::array<Mat, 3> out;
        const int64_t rowsOf[3] = {Im, Im, W}, colsOf[3] = {W, W, Im}, scaleAt[3] = {0, Im, 2 * Im};
        for (int k = 0; k < 3; ++k) {
            Mat &m = out[size_t(k)];
            m.rows = rowsOf[k];
            m.cols = colsOf[k];
            m.w.resize(size_t(m.rows * m.cols));
            const int64_t NV = m.cols / 8;
            const uint8_t *idx = rec + h[5 + k];
            for (int64_t r = 0; r < m.rows; ++r) {
                uint16_t sh;
                std::memcpy(&sh, rec + h[8] + 2 * (scaleAt[k] + r), 2);
                const double rho = f16(sh, false);
                for (int64_t v = 0; v < NV; ++v)
                    for (int s = 0; s < S; ++s) {
                        const uint8_t i = idx[((((r / 64) * NV) + v) * 64 + r % 64) * S + s];
                        const Vec &book = m_books[size_t(cb + k * S + s)];
                        for (int d = 0; d < 8; ++d)
                            m.w[size_t(r * m.cols + 8 * v + d)] += rho * book[size_t(i) * 8 + d];
                    }
            }
        }
        return out;
    }

private:
    std::string m_dir, m_prefix, m_trunk;
    json m_manifest;
    std::map<std::string, json> m_entries;
    std::vector<Vec> m_books;
};

// ---- Float64 reference components ------------------------------------------------------

double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }
double silu(double z) { return z * sigmoid(z); }

Vec rmsNorm(const Vec &x, const Vec &w, double eps)
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

struct Config {
    int64_t Hd, layers, firstDense, inter, Im, E, K, nS, Lt, B;
    int64_t Hk, D, Kc, nh, dn, dr, dv, dc, ql;
    double eps, beta, lambda, lb, rsf;
    bool renorm, latentNorm;
    std::vector<bool> kda;
    explicit Config(const json &c)
    {
        const json &lin = c["linear_attn_config"];
        Hd = c["hidden_size"], layers = c["num_hidden_layers"], firstDense = c["first_k_dense_replace"];
        inter = c["intermediate_size"], Im = c["moe_intermediate_size"], E = c["num_experts"];
        K = c["num_experts_per_token"], nS = c["num_shared_experts"], Lt = c["routed_expert_hidden_size"];
        B = c["attn_res_block_size"], Hk = lin["num_heads"], D = lin["head_dim"], Kc = lin["short_conv_kernel_size"];
        nh = c["num_attention_heads"], dn = c["qk_nope_head_dim"], dr = c["qk_rope_head_dim"], dv = c["v_head_dim"];
        dc = c["kv_lora_rank"], ql = c["q_lora_rank"];
        eps = c["rms_norm_eps"], beta = c["activation_situ_beta"], lambda = c["activation_situ_linear_beta"];
        lb = lin["gate_lower_bound"], rsf = c["routed_scaling_factor"];
        renorm = c.contains("moe_renormalize"), latentNorm = c.contains("latent_moe_use_norm");
        kda.assign(size_t(layers), false);
        for (const auto &l : lin["kda_layers"])
            kda[size_t(l.get<int>() - 1)] = true;
    }
};

// Ways to read a K3 switch wrongly; each must move the result far from the engine's.
enum class Wrong { None, SoftplusGate, NoOutputGate, Silu, NormalisedAverage };

double situ(double g, double u, const Config &c, Wrong wrong)
{
    if (wrong == Wrong::Silu)
        return silu(g) * u;
    return c.beta * std::tanh(g / c.beta) * sigmoid(g) * c.lambda * std::tanh(u / c.lambda);
}

class Reference {
public:
    Reference(const Container &ct) : m_ct(ct), m_c(ct.config()) {}
    const Config &cfg() const { return m_c; }

    struct KdaState {
        Vec S, ring[3];
    };
    KdaState kdaState() const
    {
        KdaState s;
        s.S.assign(size_t(m_c.Hk * m_c.D * m_c.D), 0.0);
        for (auto &r : s.ring)
            r.assign(size_t(m_c.Hk * m_c.D * (m_c.Kc - 1)), 0.0);
        return s;
    }

    Vec kda(int L, const Vec &a, KdaState &st, Wrong wrong = Wrong::None) const
    {
        const std::string p = "model.layers." + std::to_string(L) + ".self_attn.";
        const int64_t H = m_c.Hk, D = m_c.D, C = H * D, Kc = m_c.Kc;
        Vec x[3] = {t(p + "q_proj.weight").mul(a), t(p + "k_proj.weight").mul(a), t(p + "v_proj.weight").mul(a)};
        const char *conv[3] = {"q_conv1d.weight", "k_conv1d.weight", "v_conv1d.weight"};
        for (int j = 0; j < 3; ++j) { // causal depthwise conv + SiLU; the ring keeps pre-conv inputs
            const Vec w = m_ct.vec(p + conv[j]);
            Vec &ring = st.ring[j];
            for (int64_t c = 0; c < C; ++c) {
                double y = x[j][size_t(c)] * w[size_t(c * Kc + Kc - 1)];
                for (int64_t i = 0; i < Kc - 1; ++i)
                    y += ring[size_t(c * (Kc - 1) + i)] * w[size_t(c * Kc + i)];
                for (int64_t i = 0; i + 1 < Kc - 1; ++i)
                    ring[size_t(c * (Kc - 1) + i)] = ring[size_t(c * (Kc - 1) + i + 1)];
                ring[size_t(c * (Kc - 1) + Kc - 2)] = x[j][size_t(c)];
                x[j][size_t(c)] = silu(y);
            }
        }
        const Vec f = t(p + "f_b_proj.weight").mul(t(p + "f_a_proj.weight").mul(a));
        const Vec aLog = m_ct.vec(p + "A_log"), dt = m_ct.vec(p + "dt_bias");
        Vec g(static_cast<size_t>(C));
        for (int64_t h = 0; h < H; ++h)
            for (int64_t j = 0; j < D; ++j) {
                const size_t i = size_t(h * D + j);
                const double A = std::exp(aLog[size_t(h)]), z = f[i] + dt[i];
                g[i] = wrong == Wrong::SoftplusGate ? -A * std::log1p(std::exp(z)) : m_c.lb * sigmoid(A * z);
            }
        const Vec bl = t(p + "b_proj.weight").mul(a);
        const Vec gamma = t(p + "g_proj.weight").mul(a); // full rank
        const Vec oNorm = m_ct.vec(p + "o_norm.weight");
        Vec o(static_cast<size_t>(C));
        for (int64_t h = 0; h < H; ++h) {
            Vec q(x[0].begin() + h * D, x[0].begin() + (h + 1) * D), k(x[1].begin() + h * D, x[1].begin() + (h + 1) * D);
            const Vec v(x[2].begin() + h * D, x[2].begin() + (h + 1) * D);
            double qs = 0, ks = 0;
            for (int64_t i = 0; i < D; ++i)
                qs += q[size_t(i)] * q[size_t(i)], ks += k[size_t(i)] * k[size_t(i)];
            for (int64_t i = 0; i < D; ++i) {
                q[size_t(i)] /= std::sqrt(qs + 1e-12) * std::sqrt(double(D));
                k[size_t(i)] /= std::sqrt(ks + 1e-12);
            }
            double *S = st.S.data() + h * D * D; // S[i][j], i = key dim
            for (int64_t i = 0; i < D; ++i)
                for (int64_t j = 0; j < D; ++j)
                    S[i * D + j] *= std::exp(g[size_t(h * D + i)]);
            const double b = sigmoid(bl[size_t(h)]);
            Vec delta(static_cast<size_t>(D));
            for (int64_t j = 0; j < D; ++j) {
                double u = 0;
                for (int64_t i = 0; i < D; ++i)
                    u += S[i * D + j] * k[size_t(i)];
                delta[size_t(j)] = b * (v[size_t(j)] - u);
            }
            Vec oh(static_cast<size_t>(D), 0.0);
            for (int64_t i = 0; i < D; ++i)
                for (int64_t j = 0; j < D; ++j) {
                    S[i * D + j] += k[size_t(i)] * delta[size_t(j)];
                    oh[size_t(j)] += S[i * D + j] * q[size_t(i)];
                }
            oh = rmsNorm(oh, oNorm, m_c.eps);
            for (int64_t j = 0; j < D; ++j)
                o[size_t(h * D + j)] = oh[size_t(j)] * sigmoid(gamma[size_t(h * D + j)]);
        }
        return t(p + "o_proj.weight").mul(o);
    }

    // MLA in the expanded form: keys and values rebuilt from the cached latent per head.
    struct MlaCache {
        std::vector<Vec> latent, rope;
    };
    Vec mla(int L, const Vec &a, MlaCache &cache, Wrong wrong = Wrong::None) const
    {
        const std::string p = "model.layers." + std::to_string(L) + ".self_attn.";
        const int64_t nh = m_c.nh, dn = m_c.dn, dr = m_c.dr, dv = m_c.dv, dc = m_c.dc, dq = dn + dr;
        const Vec q = t(p + "q_b_proj.weight").mul(rmsNorm(t(p + "q_a_proj.weight").mul(a), m_ct.vec(p + "q_a_layernorm.weight"), m_c.eps));
        const Vec kv = t(p + "kv_a_proj_with_mqa.weight").mul(a);
        cache.latent.push_back(rmsNorm(Vec(kv.begin(), kv.begin() + dc), m_ct.vec(p + "kv_a_layernorm.weight"), m_c.eps));
        cache.rope.emplace_back(kv.begin() + dc, kv.end());
        const Mat kvb = t(p + "kv_b_proj.weight");
        const size_t n = cache.latent.size();
        Vec o(static_cast<size_t>(nh * dv));
        for (int64_t h = 0; h < nh; ++h) {
            Vec z(n);
            std::vector<Vec> values(n);
            for (size_t s = 0; s < n; ++s) {
                const Vec kvs = kvb.mul(cache.latent[s]); // [nh·(dn+dv)]
                double d = 0;
                for (int64_t i = 0; i < dn; ++i)
                    d += q[size_t(h * dq + i)] * kvs[size_t(h * (dn + dv) + i)];
                for (int64_t i = 0; i < dr; ++i)
                    d += q[size_t(h * dq + dn + i)] * cache.rope[s][size_t(i)];
                z[s] = d / std::sqrt(double(dq));
                values[s] = Vec(kvs.begin() + h * (dn + dv) + dn, kvs.begin() + (h + 1) * (dn + dv));
            }
            const double zmax = *std::max_element(z.begin(), z.end());
            double sum = 0;
            for (double &v : z)
                sum += (v = std::exp(v - zmax));
            for (size_t s = 0; s < n; ++s)
                for (int64_t i = 0; i < dv; ++i)
                    o[size_t(h * dv + i)] += z[s] / sum * values[s][size_t(i)];
        }
        if (wrong != Wrong::NoOutputGate) {
            const Vec g = t(p + "g_proj.weight").mul(a);
            for (size_t i = 0; i < o.size(); ++i)
                o[i] *= sigmoid(g[i]);
        }
        return t(p + "o_proj.weight").mul(o);
    }

    Vec glu(const Mat &gate, const Mat &up, const Mat &down, const Vec &x, Wrong wrong) const
    {
        const Vec g = gate.mul(x), u = up.mul(x);
        Vec h(g.size());
        for (size_t i = 0; i < g.size(); ++i)
            h[i] = situ(g[i], u[i], m_c, wrong);
        return down.mul(h);
    }

    Vec denseFfn(int L, const Vec &b, Wrong wrong = Wrong::None) const
    {
        const std::string p = "model.layers." + std::to_string(L) + ".mlp.";
        return glu(t(p + "gate_proj.weight"), t(p + "up_proj.weight"), t(p + "down_proj.weight"), b, wrong);
    }

    // The latent MoE layer; `chosen` receives the selected experts in selection order.
    Vec moe(int L, const Vec &b, std::vector<int> *chosen = nullptr, Wrong wrong = Wrong::None) const
    {
        const std::string p = "model.layers." + std::to_string(L) + ".block_sparse_moe.";
        const Vec logits = t(p + "gate.weight").mul(b);
        const Vec bias = m_ct.vec(p + "gate.e_score_correction_bias");
        std::vector<int> order(static_cast<size_t>(m_c.E));
        for (int e = 0; e < m_c.E; ++e)
            order[size_t(e)] = e;
        std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
            return sigmoid(logits[size_t(x)]) + bias[size_t(x)] > sigmoid(logits[size_t(y)]) + bias[size_t(y)];
        });
        order.resize(size_t(m_c.K));
        if (chosen)
            *chosen = order;
        Vec w(static_cast<size_t>(m_c.K));
        double sum = 0;
        for (int64_t j = 0; j < m_c.K; ++j)
            sum += (w[size_t(j)] = sigmoid(logits[size_t(order[size_t(j)])]));
        for (double &v : w)
            v = (m_c.renorm ? v / (sum + 1e-20) : v) * m_c.rsf;
        const Vec u = t(p + "routed_expert_down_proj.weight").mul(b);
        Vec Y(static_cast<size_t>(m_c.Lt), 0.0);
        for (int64_t j = 0; j < m_c.K; ++j) {
            const auto ex = expert(L, order[size_t(j)]);
            const Vec y = glu(ex[0], ex[1], ex[2], u, wrong);
            for (size_t i = 0; i < Y.size(); ++i)
                Y[i] += w[size_t(j)] * y[i];
        }
        if (m_c.latentNorm)
            Y = rmsNorm(Y, m_ct.vec(p + "routed_expert_norm.weight"), m_c.eps);
        Vec out = t(p + "routed_expert_up_proj.weight").mul(Y);
        const Vec s = glu(t(p + "shared_experts.gate_proj.weight"), t(p + "shared_experts.up_proj.weight"),
                          t(p + "shared_experts.down_proj.weight"), b, wrong);
        for (size_t i = 0; i < out.size(); ++i)
            out[i] += s[i];
        return out;
    }

    // AR(R; c; wn, wp), k3-math §2.1.
    Vec attnRes(const std::vector<Vec> &R, const Vec &c, const Vec &wn, const Vec &wp, Wrong wrong = Wrong::None) const
    {
        std::vector<const Vec *> cand;
        for (const Vec &r : R)
            cand.push_back(&r);
        cand.push_back(&c);
        Vec s(cand.size());
        std::vector<Vec> normed(cand.size());
        for (size_t i = 0; i < cand.size(); ++i) {
            double ss = 0;
            for (double v : *cand[i])
                ss += v * v;
            const double rho = 1.0 / std::sqrt(ss / double(m_c.Hd) + m_c.eps);
            normed[i] = *cand[i];
            for (size_t j = 0; j < normed[i].size(); ++j) {
                normed[i][j] *= rho;
                s[i] += normed[i][j] * wn[j] * wp[j];
            }
        }
        const double mx = *std::max_element(s.begin(), s.end());
        double sum = 0;
        for (double &v : s)
            sum += (v = std::exp(v - mx));
        Vec out(static_cast<size_t>(m_c.Hd), 0.0);
        for (size_t i = 0; i < cand.size(); ++i) {
            const Vec &v = wrong == Wrong::NormalisedAverage ? normed[i] : *cand[i];
            for (size_t j = 0; j < out.size(); ++j)
                out[j] += s[i] / sum * v[j];
        }
        return out;
    }

    // The whole forward pass of k3-math §2.2 for a token sequence; the last token's logits.
    Vec logits(const std::vector<int32_t> &tokens) const
    {
        std::vector<KdaState> kdaSt(size_t(m_c.layers));
        std::vector<MlaCache> mlaSt(size_t(m_c.layers));
        for (auto &s : kdaSt)
            s = kdaState();
        const Mat embed = t("model.embed_tokens.weight");
        Vec x;
        for (int32_t tok : tokens) {
            x = embed.row(tok);
            std::vector<Vec> R;
            Vec P = x;
            for (int L = 0; L < m_c.layers; ++L) {
                const std::string p = "model.layers." + std::to_string(L) + ".";
                P = x;
                if (!R.empty())
                    x = attnRes(R, P, m_ct.vec(p + "self_attention_res_norm.weight"), m_ct.vec(p + "self_attention_res_proj.weight"));
                bool empty = false;
                if (L % m_c.B == 0) {
                    R.push_back(P);
                    empty = true;
                }
                const Vec a = rmsNorm(x, m_ct.vec(p + "input_layernorm.weight"), m_c.eps);
                const Vec r = m_c.kda[size_t(L)] ? kda(L, a, kdaSt[size_t(L)]) : mla(L, a, mlaSt[size_t(L)]);
                for (size_t i = 0; i < P.size(); ++i)
                    P[i] = empty ? r[i] : P[i] + r[i];
                x = attnRes(R, P, m_ct.vec(p + "mlp_res_norm.weight"), m_ct.vec(p + "mlp_res_proj.weight"));
                const Vec b = rmsNorm(x, m_ct.vec(p + "post_attention_layernorm.weight"), m_c.eps);
                const Vec f = L < m_c.firstDense ? denseFfn(L, b) : moe(L, b);
                for (size_t i = 0; i < P.size(); ++i)
                    P[i] += f[i];
                x = P;
            }
            x = attnRes(R, x, m_ct.vec("model.output_attn_res_norm.weight"), m_ct.vec("model.output_attn_res_proj.weight"));
        }
        return t("lm_head.weight").mul(rmsNorm(x, m_ct.vec("model.norm.weight"), m_c.eps));
    }

    std::array<Mat, 3> expert(int L, int e) const
    {
        const auto key = std::make_pair(L, e);
        auto it = m_experts.find(key);
        if (it == m_experts.end())
            it = m_experts.emplace(key, m_ct.expert(L, e)).first;
        return it->second;
    }

private:
    const Mat &t(const std::string &name) const
    {
        auto it = m_mats.find(name);
        if (it == m_mats.end())
            it = m_mats.emplace(name, m_ct.tensor(name)).first;
        return it->second;
    }
    const Container &m_ct;
    Config m_c;
    mutable std::map<std::string, Mat> m_mats;
    mutable std::map<std::pair<int, int>, std::array<Mat, 3>> m_experts;
};

// ---- The engine's side -----------------------------------------------------------------

struct Engine {
    std::string dir;
    waste::format::Manifest manifest;
    std::unique_ptr<waste::format::Trunk> trunk;
    waste::format::Codebooks books;
    waste::model::Weights weights;
    std::unique_ptr<waste::model::PreadExpertSource> experts;
    std::unique_ptr<waste::model::Forward> forward;

    explicit Engine(const std::string &d) : dir(d)
    {
        using namespace waste::format;
        manifest = parseManifest(slurp(dir + "/manifest.json"), dir + "/manifest.json");
        trunk = std::make_unique<Trunk>(dir + "/trunk.bin", manifest);
        books = Codebooks(dir + "/codebooks.bin", manifest.quant);
        std::map<int, std::shared_ptr<ExpertBank>> banks;
        for (const auto &[layer, entry] : manifest.banks) {
            RecordShape shape;
            shape.layer = layer;
            shape.recordBytes = entry.recordBytes;
            shape.inter = manifest.config.moeInter;
            shape.width = manifest.config.expertWidth();
            shape.stages = manifest.quant.stages;
            shape.indexBits = manifest.quant.indexBits;
            shape.codebooks = books.count();
            banks[layer] = std::make_shared<ExpertBank>(dir, entry, shape);
        }
        weights = waste::model::loadWeights(manifest, *trunk);
        experts = std::make_unique<waste::model::PreadExpertSource>(std::move(banks), true);
        forward = std::make_unique<waste::model::Forward>(manifest, weights, books);
    }
};

struct Fixture {
    std::string dir;
    std::unique_ptr<Container> container;
    std::unique_ptr<Reference> ref;
    std::unique_ptr<Engine> engine;
    Fixture()
    {
        dir = std::string(WASTE_TEST_OUTPUT_DIR) + "/k3-components/tiny-k3";
        fs::remove_all(dir);
        waste::TinyModelOptions o;
        o.k3 = true;
        o.seed = 3;
        waste::makeTinyContainer(dir, o);
        container = std::make_unique<Container>(dir);
        ref = std::make_unique<Reference>(*container);
        engine = std::make_unique<Engine>(dir);
    }
};
const Fixture &fixture()
{
    static Fixture f;
    return f;
}

// max |engine − reference| / max |reference|.
double relErr(const float *got, const Vec &want)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        num = std::max(num, std::fabs(double(got[i]) - want[i]));
        den = std::max(den, std::fabs(want[i]));
    }
    return num / den;
}

// Deterministic normed-looking inputs: unit-RMS Gaussian vectors.
std::vector<Vec> inputs(int n, int64_t width, unsigned seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<double> g(0.0, 1.0);
    std::vector<Vec> v(static_cast<size_t>(n), Vec(static_cast<size_t>(width)));
    for (auto &x : v)
        for (auto &e : x)
            e = float(g(rng)); // exactly representable in f32: both sides see the same input
    return v;
}

std::vector<float> toFloat(const std::vector<Vec> &v)
{
    std::vector<float> out;
    for (const auto &x : v)
        out.insert(out.end(), x.begin(), x.end());
    return out;
}

void report(const char *what, double err, double wrong = 0)
{
    std::printf("[k3-component] %-58s max rel err %.2e (limit %.0e)", what, err, kTolerance);
    if (wrong > 0)
        std::printf("; wrong reading %.2e", wrong);
    std::printf("\n");
}

} // namespace

TEST(K3Components, TheTinyModelHasEveryK3SwitchOn)
{
    const auto &c = fixture().engine->manifest.config;
    EXPECT_EQ(c.arch, "kimi-k3");
    EXPECT_EQ(fixture().engine->manifest.prefix, "language_model.");
    EXPECT_GT(c.latentMoe, 0);
    EXPECT_TRUE(c.latentNorm);
    EXPECT_TRUE(c.situ);
    EXPECT_TRUE(c.fullRankGate);
    EXPECT_LT(c.gateLowerBound, 0.0f);
    EXPECT_GT(c.qLora, 0);
    EXPECT_TRUE(c.mlaOutputGate);
    EXPECT_GT(c.attnResBlock, 0);
    EXPECT_EQ(c.sharedExperts, 2);
    EXPECT_EQ(c.experts, 16);
    EXPECT_EQ(c.topK, 4);
}

TEST(K3Components, KdaWithBoundedDecayGateAndFullRankOutputGate)
{
    const auto &f = fixture();
    const Config &c = f.ref->cfg();
    const int T = 24;
    double worst = 0, wrongGate = INFINITY;
    int layers = 0;
    for (int L = 0; L < c.layers; ++L) {
        if (!c.kda[size_t(L)])
            continue;
        ++layers;
        const auto a = inputs(T, c.Hd, 100 + L);
        waste::model::State st;
        st.allocate(f.engine->manifest.config, T);
        auto rs = f.ref->kdaState(), wrongState = f.ref->kdaState();
        // Tokens 0..15 one at a time, 16..23 as one chunk: both keep the state.
        std::vector<float> out(static_cast<size_t>(T * c.Hd));
        const auto in = toFloat(a);
        for (int t = 0; t < 16; ++t)
            f.engine->forward->attention(L, 1, in.data() + t * c.Hd, out.data() + t * c.Hd, st.layers[size_t(L)], t);
        f.engine->forward->attention(L, 8, in.data() + 16 * c.Hd, out.data() + 16 * c.Hd, st.layers[size_t(L)], 16);
        for (int t = 0; t < T; ++t) {
            worst = std::max(worst, relErr(out.data() + t * c.Hd, f.ref->kda(L, a[size_t(t)], rs)));
            const Vec w = f.ref->kda(L, a[size_t(t)], wrongState, Wrong::SoftplusGate);
            if (t > 0) // token 0 sees an empty state, where the decay gate does not matter
                wrongGate = std::min(wrongGate, relErr(out.data() + t * c.Hd, w));
        }
        // The state itself, after 24 tokens.
        const auto &S = st.layers[size_t(L)].S;
        double num = 0, den = 0;
        for (size_t i = 0; i < S.size(); ++i)
            num = std::max(num, std::fabs(double(S[i]) - rs.S[i])), den = std::max(den, std::fabs(rs.S[i]));
        worst = std::max(worst, num / den);
    }
    EXPECT_EQ(layers, 4);
    report("KDA (bounded decay gate, full-rank output gate; 4 layers x 24)", worst, wrongGate);
    EXPECT_LE(worst, kTolerance);
    EXPECT_GT(wrongGate, 1e-3) << "the Kimi-Linear softplus gate would pass too";
}

TEST(K3Components, MlaWithQLoraAndOutputGate)
{
    const auto &f = fixture();
    const Config &c = f.ref->cfg();
    const int T = 20;
    double worst = 0, wrongGate = INFINITY;
    int layers = 0;
    for (int L = 0; L < c.layers; ++L) {
        if (c.kda[size_t(L)])
            continue;
        ++layers;
        const auto a = inputs(T, c.Hd, 200 + L);
        waste::model::State st;
        st.allocate(f.engine->manifest.config, T);
        Reference::MlaCache cache, wrongCache;
        std::vector<float> out(static_cast<size_t>(T * c.Hd));
        const auto in = toFloat(a);
        f.engine->forward->attention(L, 12, in.data(), out.data(), st.layers[size_t(L)], 0);
        for (int t = 12; t < T; ++t)
            f.engine->forward->attention(L, 1, in.data() + t * c.Hd, out.data() + t * c.Hd, st.layers[size_t(L)], t);
        for (int t = 0; t < T; ++t) {
            worst = std::max(worst, relErr(out.data() + t * c.Hd, f.ref->mla(L, a[size_t(t)], cache)));
            wrongGate = std::min(wrongGate, relErr(out.data() + t * c.Hd, f.ref->mla(L, a[size_t(t)], wrongCache, Wrong::NoOutputGate)));
        }
    }
    EXPECT_EQ(layers, 2);
    report("MLA (q_lora + q_a_layernorm, sigmoid output gate; 2 layers x 20)", worst, wrongGate);
    EXPECT_LE(worst, kTolerance);
    EXPECT_GT(wrongGate, 1e-3) << "an MLA without its output gate would pass too";
}

TEST(K3Components, LatentMoeWithSituGluAndTwoSharedExperts)
{
    const auto &f = fixture();
    const Config &c = f.ref->cfg();
    const int T = 12;
    double worst = 0, wrongAct = INFINITY;
    std::map<int, int> used;
    for (int L = int(c.firstDense); L < c.layers; ++L) {
        const auto b = inputs(T, c.Hd, 300 + L);
        const auto in = toFloat(b);
        std::vector<float> chunk(static_cast<size_t>(T * c.Hd)), single(static_cast<size_t>(c.Hd));
        f.engine->forward->feedForward(L, T, in.data(), chunk.data(), *f.engine->experts); // one chunk
        for (int t = 0; t < T; ++t) {
            std::vector<int> chosen;
            const Vec want = f.ref->moe(L, b[size_t(t)], &chosen);
            for (int e : chosen)
                ++used[e];
            worst = std::max(worst, relErr(chunk.data() + t * c.Hd, want));
            f.engine->forward->feedForward(L, 1, in.data() + t * c.Hd, single.data(), *f.engine->experts);
            worst = std::max(worst, relErr(single.data(), want));
            wrongAct = std::min(wrongAct, relErr(single.data(), f.ref->moe(L, b[size_t(t)], nullptr, Wrong::Silu)));
        }
    }
    EXPECT_GE(used.size(), 12u) << "the inputs should route to most of the 16 experts";
    report("latent MoE (router, SiTU-GLU, latent norm, 2 shared; 5 layers x 12)", worst, wrongAct);
    EXPECT_LE(worst, kTolerance);
    EXPECT_GT(wrongAct, 1e-3) << "SiLU-GLU would pass too";
}

TEST(K3Components, DenseFfnWithSituGlu)
{
    const auto &f = fixture();
    const Config &c = f.ref->cfg();
    const auto b = inputs(8, c.Hd, 400);
    const auto in = toFloat(b);
    std::vector<float> out(in.size());
    f.engine->forward->feedForward(0, 8, in.data(), out.data(), *f.engine->experts);
    double worst = 0, wrongAct = INFINITY;
    for (int t = 0; t < 8; ++t) {
        worst = std::max(worst, relErr(out.data() + t * c.Hd, f.ref->denseFfn(0, b[size_t(t)])));
        wrongAct = std::min(wrongAct, relErr(out.data() + t * c.Hd, f.ref->denseFfn(0, b[size_t(t)], Wrong::Silu)));
    }
    report("dense FFN (SiTU-GLU, layer 0; 8 tokens)", worst, wrongAct);
    EXPECT_LE(worst, kTolerance);
    EXPECT_GT(wrongAct, 1e-3);
}

TEST(K3Components, AttentionResidualsMixing)
{
    const auto &f = fixture();
    const Config &c = f.ref->cfg();
    const auto &w = f.engine->weights;
    // Every (norm, score) pair of the model, with histories of 1..4 blocks of different
    // scales (the embedding is O(1), layer outputs smaller).
    std::vector<std::pair<const float *, const float *>> pairs;
    std::vector<std::pair<std::string, std::string>> names;
    for (int L = 0; L < c.layers; ++L) {
        const auto &lw = w.layers[size_t(L)];
        const std::string p = "model.layers." + std::to_string(L) + ".";
        pairs.push_back({lw.attnResNorm->f32.data(), lw.attnResProj->f32.data()});
        names.push_back({p + "self_attention_res_norm.weight", p + "self_attention_res_proj.weight"});
        pairs.push_back({lw.mlpResNorm->f32.data(), lw.mlpResProj->f32.data()});
        names.push_back({p + "mlp_res_norm.weight", p + "mlp_res_proj.weight"});
    }
    pairs.push_back({w.outResNorm->f32.data(), w.outResProj->f32.data()});
    names.push_back({"model.output_attn_res_norm.weight", "model.output_attn_res_proj.weight"});
    double worst = 0, wrongAvg = INFINITY;
    for (size_t k = 0; k < pairs.size(); ++k)
        for (int n = 1; n <= 4; ++n) {
            auto v = inputs(n + 1, c.Hd, unsigned(500 + 10 * k + n));
            for (int i = 1; i <= n; ++i)
                for (double &x : v[size_t(i)])
                    x = float(x * std::ldexp(1.0, -i)); // later blocks smaller
            std::vector<std::vector<float>> R;
            std::vector<Vec> Rd(v.begin(), v.begin() + n);
            for (const Vec &r : Rd)
                R.emplace_back(r.begin(), r.end());
            const std::vector<float> cur(v[size_t(n)].begin(), v[size_t(n)].end());
            std::vector<float> out(static_cast<size_t>(c.Hd));
            waste::model::attnResMix(R, cur.data(), pairs[k].first, pairs[k].second, out.data(), c.Hd,
                                     f.engine->manifest.config.eps);
            const Vec wn = f.container->vec(names[k].first), wp = f.container->vec(names[k].second);
            worst = std::max(worst, relErr(out.data(), f.ref->attnRes(Rd, v[size_t(n)], wn, wp)));
            wrongAvg = std::min(wrongAvg, relErr(out.data(), f.ref->attnRes(Rd, v[size_t(n)], wn, wp, Wrong::NormalisedAverage)));
        }
    report("Attention Residuals mixing (13 weight pairs, 1-4 blocks)", worst, wrongAvg);
    EXPECT_LE(worst, kTolerance);
    EXPECT_GT(wrongAvg, 1e-3) << "averaging the normalised candidates would pass too";
}

TEST(K3Components, WholeForwardWithBlockHistoryAndOutputAggregation)
{
    // Everything together: the block history closing at layers 0, 2, 4, the partial sums,
    // the output aggregation, the final norm and the head, against Model::eval.
    const auto &f = fixture();
    auto model = waste::Model::open(f.dir);
    const std::vector<int32_t> prompt = model->tokenize("The quick brown fox jumps over the lazy dog.", true);
    ASSERT_GE(prompt.size(), 8u);
    const std::vector<float> got = model->eval(prompt);
    const Vec want = f.ref->logits(prompt);
    ASSERT_EQ(got.size(), want.size());
    const double err = relErr(got.data(), want);
    report("whole forward pass (AttnRes block history + output aggregation)", err);
    EXPECT_LE(err, kTolerance);
}
