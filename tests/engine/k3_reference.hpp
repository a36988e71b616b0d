// A plain float64 Kimi K3 forward pass written from reference/k3-math.md and
// kimi-linear-math.md, with its own readers of a container (manifest.json, trunk.bin in
// every trunk format, codebooks.bin, VQ and native expert records). Shared by the
// component tests (tst_k3_components) and the native-expert tests (tst_native_experts).
// Over 600 lines on purpose: the readers and forward pieces belong together, and
// splitting them would only scatter one reference over several files.
#pragma once

#include "test_files.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace k3ref {

using json = nlohmann::json;
using Vec = std::vector<double>;

// ---- Independent readers (kimi-linear-math §1.4–1.6) -------------------------------

inline double f16(uint16_t h, bool flushSubnormals)
{
    const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 0)
        v = flushSubnormals ? 0.0 : std::ldexp(double(m), -24);
    else
        v = std::ldexp(1.0 + m / 1024.0, e - 15); // e = 31 is an ordinary exponent here
    return s ? -v : v;
}

inline double bf16(uint16_t h)
{
    const uint32_t bits = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

// OCP MX: E2M1 = (-1)^s 2^(e-1) (1 + m/2) for e > 0, (-1)^s m/2 for e = 0.
inline double e2m1(unsigned code)
{
    const unsigned sg = code >> 3, e = (code >> 1) & 3, m = code & 1;
    const double mag = e == 0 ? m * 0.5 : std::ldexp(1.0 + m * 0.5, int(e) - 1);
    return sg ? -mag : mag;
}

// OCP FP8 E4M3 (bias 7, no infinities): (-1)^s 2^(e-7) (1 + m/8), subnormal (-1)^s 2^-6 m/8.
inline double e4m3(uint8_t b)
{
    const int sg = b >> 7, e = (b >> 3) & 15, m = b & 7;
    const double mag = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
    return sg ? -mag : mag;
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
        if (fmt == 1 && e.contains("encoding")) { // real half precision (--trunk-bits 16)
            const bool isBf16 = e["encoding"] == "bf16";
            for (size_t i = 0; i < m.w.size(); ++i) {
                uint16_t h;
                std::memcpy(&h, p + 2 * i, 2);
                m.w[i] = isBf16 ? bf16(h) : f16(h, false);
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
        const std::string fmtName = m_manifest["expert_quant"].value("fmt", std::string("VQ3R"));
        if (fmtName == "MXFP4" || fmtName == "FP8B128" || fmtName == "INT4G32" || fmtName == "BF16")
            return nativeExpert(rec, fmtName, Im, W);
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

    // A native record (the release's own encoding): gate, up, down payloads at the header's
    // offsets, their scales from the header's scale offset on, each part 64-byte aligned.
    static std::array<Mat, 3> nativeExpert(const uint8_t *rec, const std::string &fmt, int64_t Im, int64_t W)
    {
        uint32_t h[12];
        std::memcpy(h, rec, 48);
        const int64_t rowsOf[3] = {Im, Im, W}, colsOf[3] = {W, W, Im};
        auto scaleBytes = [&](int k) -> int64_t {
            const int64_t r = rowsOf[k], c = colsOf[k];
            if (fmt == "MXFP4")
                return r * c / 32;
            if (fmt == "INT4G32")
                return r * c / 32 * 2;
            if (fmt == "FP8B128")
                return 4 * ((r + 127) / 128) * ((c + 127) / 128);
            return 0;
        };
        int64_t scaleAt = h[8];
        std::array<Mat, 3> out;
        for (int k = 0; k < 3; ++k) {
            Mat &m = out[size_t(k)];
            m.rows = rowsOf[k];
            m.cols = colsOf[k];
            m.w.resize(size_t(m.rows * m.cols));
            const uint8_t *pay = rec + h[5 + k], *sc = rec + scaleAt;
            for (int64_t r = 0; r < m.rows; ++r)
                for (int64_t i = 0; i < m.cols; ++i) {
                    const int64_t at = r * m.cols + i;
                    double v;
                    if (fmt == "MXFP4") {
                        const uint8_t b = pay[at / 2];
                        v = e2m1((at & 1) ? b >> 4 : b & 15) * std::ldexp(1.0, int(sc[at / 32]) - 127);
                    } else if (fmt == "INT4G32") {
                        const uint8_t b = pay[at / 2];
                        uint16_t s16;
                        std::memcpy(&s16, sc + 2 * (at / 32), 2);
                        v = (int((at & 1) ? b >> 4 : b & 15) - 8) * bf16(s16);
                    } else if (fmt == "FP8B128") {
                        float s32;
                        std::memcpy(&s32, sc + 4 * ((r / 128) * ((m.cols + 127) / 128) + i / 128), 4);
                        v = e4m3(pay[at]) * s32;
                    } else {
                        uint16_t b16;
                        std::memcpy(&b16, pay + 2 * at, 2);
                        v = bf16(b16);
                    }
                    m.w[size_t(at)] = v;
                }
            scaleAt = (scaleAt + scaleBytes(k) + 63) / 64 * 64;
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

inline double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }
inline double silu(double z) { return z * sigmoid(z); }

inline Vec rmsNorm(const Vec &x, const Vec &w, double eps)
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

inline double situ(double g, double u, const Config &c, Wrong wrong)
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
    // `each`, when given, receives the logits after every token (one pass, for quality
    // measurements over many positions).
    Vec logits(const std::vector<int32_t> &tokens, std::vector<Vec> *each = nullptr) const
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
            if (each)
                each->push_back(t("lm_head.weight").mul(rmsNorm(x, m_ct.vec("model.norm.weight"), m_c.eps)));
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

} // namespace k3ref
