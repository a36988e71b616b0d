// A plain float64 forward pass of DeepSeek V4 Flash, written from DeepSeek's inference/model.py
// (and ds4.c where model.py leaves numerics to its kernels) as docs/architectures/deepseek-v4-flash.md
// gives it, in model.py's prefill form (a whole sequence from position 0, causal masks) rather
// than the engine's streaming one: its own config reading; RoPE on each vector's tail with the
// plain and the YaRN-blended tables; the window; the compressor's gated pooling with
// overlap_transform's two-block windows; the indexer; sinks; the grouped output projection;
// the sqrt-softplus router with tid2eid on the hash layers; the clamped SwiGLU; the
// hyper-connections with Sinkhorn; the head. Plain float by default, as HF's DeepseekV4
// computes; with `rounding` set, the trained rounding of model.py and ds4 (the kv rows through
// FP8 by nearest grid value, the indexer's queries and keys through a Hadamard transform, as a
// matrix, and FP4). The matrix and norm helpers are gqa_reference.hpp's; nothing is the engine's.
#pragma once

#include "gqa_reference.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <numeric>

namespace dsv4ref {

using gqaref::mul;
using gqaref::rmsnorm;
using gqaref::Vec;
using gqaref::Weights;
using json = nlohmann::json;

struct Config {
    int H = 0, L = 0, V = 0, nh = 0, D = 0, rd = 0, qLora = 0, G = 0, oLora = 0, window = 0;
    int Hi = 0, Di = 0, topkI = 0, E = 0, K = 0, Im = 0, hash = 0, hc = 0, iters = 0;
    double eps = 1e-6, hcEps = 1e-6, theta = 10000, ctheta = 10000, factor = 1, orig = 0, betaFast = 32, betaSlow = 1;
    double limit = 0, routeScale = 1;
    std::vector<int> ratios;

    explicit Config(const std::string &text)
    {
        const json c = json::parse(text);
        H = c["hidden_size"];
        L = c["num_hidden_layers"];
        V = c["vocab_size"];
        nh = c["num_attention_heads"];
        D = c["head_dim"];
        rd = c["qk_rope_head_dim"];
        qLora = c["q_lora_rank"];
        G = c["o_groups"];
        oLora = c["o_lora_rank"];
        window = c["sliding_window"];
        Hi = c["index_n_heads"];
        Di = c["index_head_dim"];
        topkI = c["index_topk"];
        E = c["n_routed_experts"];
        K = c["num_experts_per_tok"];
        Im = c["moe_intermediate_size"];
        hash = c["num_hash_layers"];
        hc = c["hc_mult"];
        iters = c["hc_sinkhorn_iters"];
        eps = c["rms_norm_eps"];
        hcEps = c["hc_eps"];
        theta = c["rope_theta"];
        ctheta = c["compress_rope_theta"];
        limit = c["swiglu_limit"];
        routeScale = c["routed_scaling_factor"];
        const json &r = c["rope_scaling"];
        factor = r["factor"];
        orig = r["original_max_position_embeddings"];
        betaFast = r["beta_fast"];
        betaSlow = r["beta_slow"];
        for (int l = 0; l < L; ++l)
            ratios.push_back(c["compress_ratios"][size_t(l)]);
    }
};

// Misreadings a test may switch on to show the engine's reading is no accident.
enum class Wrong {
    None,
    NoSink,         // the sink left out of the softmax
    NoCompressed,   // window rows only
    NoOverlap,      // ratio-4 rows pooled from their own block only
    AllRows,        // every compressed row, no indexer
    PlainRope,      // the compressed layers' table without YaRN's blend
    FlipRounding,   // the other rounding: trained where the reference is plain, plain where trained
    SoftmaxRouter,  // softmax scores instead of sqrt(softplus)
    NoHash,         // score routing on the hash layers too
    NoClamp,        // SwiGLU without the limit
    NoSinkhorn,     // the combination a plain row softmax
};

// Every non-negative e4m3fn value (2^-9 steps below 2^-6, three mantissa bits above, up to 448).
inline const std::vector<double> &e4m3Grid()
{
    static const std::vector<double> g = [] {
        std::vector<double> v;
        for (int m = 0; m < 8; ++m)
            v.push_back(std::ldexp(double(m), -9)); // subnormals 0 .. 7·2^-9
        for (int e = -6; e <= 8; ++e)
            for (int m = 0; m < 8; ++m) {
                const double x = std::ldexp(1.0 + m / 8.0, e);
                if (x <= 448.0)
                    v.push_back(x);
            }
        return v;
    }();
    return g;
}

inline const std::vector<double> &e2m1Grid()
{
    static const std::vector<double> g = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    return g;
}

// The nearest grid value, ties to the even index (the even code).
inline double nearest(const std::vector<double> &grid, double x)
{
    const double a = std::fabs(x);
    size_t best = 0;
    for (size_t i = 1; i < grid.size(); ++i) {
        const double d = std::fabs(grid[i] - a), b = std::fabs(grid[best] - a);
        if (d < b || (d == b && i % 2 == 0))
            best = i;
    }
    return std::copysign(grid[best], x);
}

// act_quant / fp4_act_quant with ue8m0 scales, simulated in place on x[0 .. n) by blocks.
inline void roundTrip(double *x, int n, int block, double qmax, double floor, const std::vector<double> &grid)
{
    for (int b0 = 0; b0 < n; b0 += block) {
        const int b1 = std::min(n, b0 + block);
        double amax = 0;
        for (int i = b0; i < b1; ++i)
            amax = std::max(amax, std::fabs(x[i]));
        const double scale = std::exp2(std::ceil(std::log2(std::max(amax, floor) / qmax)));
        for (int i = b0; i < b1; ++i)
            x[i] = nearest(grid, std::clamp(x[i] / scale, -qmax, qmax)) * scale;
    }
}
inline void fp8Qat(double *x, int n) { roundTrip(x, n, 64, 448.0, 1e-4, e4m3Grid()); }
inline void fp4Qat(double *x, int n) { roundTrip(x, n, 32, 6.0, 6.0 * std::ldexp(1.0, -126), e2m1Grid()); }

// rotate_activation: x · H / sqrt(n), H the Sylvester Hadamard matrix (H_ij = (-1)^popcount(i & j)).
inline void hadamard(double *x, int n)
{
    Vec y(size_t(n), 0.0);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            y[size_t(i)] += (__builtin_popcount(unsigned(i & j)) % 2 ? -1.0 : 1.0) * x[j];
    for (int i = 0; i < n; ++i)
        x[i] = y[size_t(i)] / std::sqrt(double(n));
}

class Reference {
public:
    Reference(const std::string &configText, Weights w) : m_c(configText), m_w(std::move(w)) {}
    const Config &cfg() const { return m_c; }
    bool rounding = false; // the trained rounding (OpenOptions::trainedRounding)

    // precompute_freqs_cis's frequencies for a layer (compressed: compress_rope_theta + YaRN).
    Vec freqs(bool compressed, Wrong wrong = Wrong::None) const
    {
        const int dim = m_c.rd;
        const double base = compressed ? m_c.ctheta : m_c.theta;
        Vec f(size_t(dim / 2));
        for (int i = 0; i < dim / 2; ++i)
            f[size_t(i)] = 1.0 / std::pow(base, 2.0 * i / dim);
        if (!compressed || wrong == Wrong::PlainRope)
            return f;
        const auto corr = [&](double rot) { return dim * std::log(m_c.orig / (rot * 2 * std::numbers::pi)) / (2 * std::log(base)); };
        const double low = std::max(std::floor(corr(m_c.betaFast)), 0.0);
        double high = std::min(std::ceil(corr(m_c.betaSlow)), double(dim - 1));
        if (low == high)
            high += 0.001;
        for (int i = 0; i < dim / 2; ++i) {
            const double smooth = 1.0 - std::clamp((i - low) / (high - low), 0.0, 1.0);
            f[size_t(i)] = f[size_t(i)] / m_c.factor * (1 - smooth) + f[size_t(i)] * smooth;
        }
        return f;
    }

    // apply_rotary_emb on x[0 .. rd): pairs (2i, 2i+1) as complex numbers times e^{i·pos·f_i}.
    static void rope(double *x, const Vec &f, double pos, bool inverse = false)
    {
        for (size_t i = 0; i < f.size(); ++i) {
            const double a = (inverse ? -pos : pos) * f[i];
            const double re = x[2 * i], im = x[2 * i + 1];
            x[2 * i] = re * std::cos(a) - im * std::sin(a);
            x[2 * i + 1] = re * std::sin(a) + im * std::cos(a);
        }
    }

    // Compressor.forward at start_pos 0 over the whole sequence: the rows of every complete block.
    std::vector<Vec> compress(const std::string &p, int ratio, int d, const std::vector<Vec> &x, const Vec &f, bool indexer,
                              Wrong wrong) const
    {
        const int T = int(x.size()), c = ratio == 4 ? 2 : 1;
        const Vec wkv = m_w(p + "wkv.weight"), wg = m_w(p + "wgate.weight"), ape = m_w(p + "ape"), norm = m_w(p + "norm.weight");
        std::vector<Vec> kv, sc;
        for (int t = 0; t < T; ++t) {
            kv.push_back(mul(wkv, x[size_t(t)]));
            Vec s = mul(wg, x[size_t(t)]);
            for (int j = 0; j < c * d; ++j)
                s[size_t(j)] += ape[size_t((t % ratio) * c * d + j)];
            sc.push_back(s);
        }
        std::vector<Vec> rows;
        for (int b = 0; (b + 1) * ratio <= T; ++b) {
            Vec row(size_t(d), 0.0);
            for (int j = 0; j < d; ++j) {
                std::vector<std::pair<double, double>> e; // (score, value)
                if (ratio == 4 && wrong != Wrong::NoOverlap) { // overlap_transform: block b−1's first half, b's second
                    if (b > 0)
                        for (int t = (b - 1) * ratio; t < b * ratio; ++t)
                            e.push_back({sc[size_t(t)][size_t(j)], kv[size_t(t)][size_t(j)]});
                    for (int t = b * ratio; t < (b + 1) * ratio; ++t)
                        e.push_back({sc[size_t(t)][size_t(d + j)], kv[size_t(t)][size_t(d + j)]});
                } else {
                    for (int t = b * ratio; t < (b + 1) * ratio; ++t)
                        e.push_back({sc[size_t(t)][size_t(j)], kv[size_t(t)][size_t(j)]});
                }
                double mx = -INFINITY, z = 0, acc = 0;
                for (auto &[s, v] : e)
                    mx = std::max(mx, s);
                for (auto &[s, v] : e) {
                    z += std::exp(s - mx);
                    acc += std::exp(s - mx) * v;
                }
                row[size_t(j)] = acc / z;
            }
            row = rmsnorm(row, norm, m_c.eps);
            rope(row.data() + d - m_c.rd, f, double(b * ratio));
            if (rounds(wrong)) {
                if (indexer) {
                    hadamard(row.data(), d);
                    fp4Qat(row.data(), d);
                } else {
                    fp8Qat(row.data(), d - m_c.rd);
                }
            }
            rows.push_back(row);
        }
        return rows;
    }

    // Attention.forward(x, 0) for a whole sequence x (attn_norm outputs), one output per token.
    std::vector<Vec> attention(int layer, const std::vector<Vec> &x, Wrong wrong = Wrong::None) const
    {
        const Config &c = m_c;
        const std::string p = "layers." + std::to_string(layer) + ".attn.";
        const int T = int(x.size()), D = c.D, rd = c.rd, ratio = c.ratios[size_t(layer)];
        const Vec f = freqs(ratio > 0, wrong);
        const Vec wqa = m_w(p + "wq_a.weight"), qn = m_w(p + "q_norm.weight"), wqb = m_w(p + "wq_b.weight");
        const Vec wkv = m_w(p + "wkv.weight"), kvn = m_w(p + "kv_norm.weight"), sink = m_w(p + "attn_sink");
        std::vector<Vec> qr(static_cast<size_t>(T)), q(static_cast<size_t>(T)), kv(static_cast<size_t>(T));
        for (int t = 0; t < T; ++t) {
            qr[size_t(t)] = rmsnorm(mul(wqa, x[size_t(t)]), qn, c.eps);
            q[size_t(t)] = mul(wqb, qr[size_t(t)]);
            for (int h = 0; h < c.nh; ++h) {
                double *qh = q[size_t(t)].data() + h * D, ss = 0;
                for (int i = 0; i < D; ++i)
                    ss += qh[i] * qh[i];
                for (int i = 0; i < D; ++i)
                    qh[i] /= std::sqrt(ss / D + c.eps);
                rope(qh + D - rd, f, t);
            }
            kv[size_t(t)] = rmsnorm(mul(wkv, x[size_t(t)]), kvn, c.eps);
            rope(kv[size_t(t)].data() + D - rd, f, t);
            if (rounds(wrong))
                fp8Qat(kv[size_t(t)].data(), D - rd);
        }
        std::vector<Vec> rows, keys;
        if (ratio > 0 && wrong != Wrong::NoCompressed)
            rows = compress(p + "compressor.", ratio, D, x, f, false, wrong);
        const bool indexed = ratio == 4 && wrong != Wrong::AllRows && wrong != Wrong::NoCompressed;
        if (indexed)
            keys = compress(p + "indexer.compressor.", 4, c.Di, x, f, true, wrong);
        const Vec iwq = indexed ? m_w(p + "indexer.wq_b.weight") : Vec(), iwp = indexed ? m_w(p + "indexer.weights_proj.weight") : Vec();
        std::vector<Vec> o(size_t(T), Vec(size_t(c.nh * D), 0.0));
        for (int t = 0; t < T; ++t) {
            std::vector<const Vec *> seen;
            for (int s = std::max(0, t - c.window + 1); s <= t; ++s)
                seen.push_back(&kv[size_t(s)]);
            const int n = ratio > 0 && wrong != Wrong::NoCompressed ? (t + 1) / ratio : 0;
            std::vector<int> chosen(static_cast<size_t>(n));
            std::iota(chosen.begin(), chosen.end(), 0);
            if (indexed && n > c.topkI) { // Indexer.forward: relu scores weighted per head, topk
                Vec qi = mul(iwq, qr[size_t(t)]);
                for (int h = 0; h < c.Hi; ++h) {
                    double *qh = qi.data() + h * c.Di;
                    rope(qh + c.Di - rd, f, t);
                    if (rounds(wrong)) {
                        hadamard(qh, c.Di);
                        fp4Qat(qh, c.Di);
                    }
                }
                const Vec wt = mul(iwp, x[size_t(t)]);
                Vec score(size_t(n), 0.0);
                for (int b = 0; b < n; ++b)
                    for (int h = 0; h < c.Hi; ++h) {
                        double d = 0;
                        for (int i = 0; i < c.Di; ++i)
                            d += qi[size_t(h * c.Di + i)] * keys[size_t(b)][size_t(i)];
                        score[size_t(b)] += std::max(d, 0.0) * wt[size_t(h)] / std::sqrt(double(c.Di)) / std::sqrt(double(c.Hi));
                    }
                std::stable_sort(chosen.begin(), chosen.end(), [&](int a, int b) { return score[size_t(a)] > score[size_t(b)]; });
                chosen.resize(size_t(c.topkI));
            }
            for (int b : chosen)
                seen.push_back(&rows[size_t(b)]);
            for (int h = 0; h < c.nh; ++h) {
                const double *qh = q[size_t(t)].data() + h * D;
                Vec s;
                double mx = wrong == Wrong::NoSink ? -INFINITY : sink[size_t(h)];
                for (const Vec *r : seen) {
                    double d = 0;
                    for (int i = 0; i < D; ++i)
                        d += qh[i] * (*r)[size_t(i)];
                    s.push_back(d / std::sqrt(double(D)));
                    mx = std::max(mx, s.back());
                }
                double z = wrong == Wrong::NoSink ? 0.0 : std::exp(sink[size_t(h)] - mx);
                double *oh = o[size_t(t)].data() + h * D;
                for (size_t r = 0; r < seen.size(); ++r) {
                    const double e = std::exp(s[r] - mx);
                    z += e;
                    for (int i = 0; i < D; ++i)
                        oh[i] += e * (*seen[r])[size_t(i)];
                }
                for (int i = 0; i < D; ++i)
                    oh[i] /= z;
                rope(oh + D - rd, f, t, /*inverse=*/true);
            }
        }
        const Vec woa = m_w(p + "wo_a.weight"), wob = m_w(p + "wo_b.weight");
        const int gin = c.nh * D / c.G;
        std::vector<Vec> out;
        for (int t = 0; t < T; ++t) { // einsum("bsgd,grd->bsgr") then wo_b
            Vec z(size_t(c.G * c.oLora), 0.0);
            for (int g = 0; g < c.G; ++g)
                for (int r = 0; r < c.oLora; ++r) {
                    double acc = 0;
                    for (int i = 0; i < gin; ++i)
                        acc += woa[size_t((g * c.oLora + r) * gin + i)] * o[size_t(t)][size_t(g * gin + i)];
                    z[size_t(g * c.oLora + r)] = acc;
                }
            out.push_back(mul(wob, z));
        }
        return out;
    }

    // Expert.forward: w2(silu(min(w1 x, limit)) · clamp(w3 x, ±limit)).
    Vec expert(const std::string &p, const Vec &x, Wrong wrong) const
    {
        const Vec g = mul(m_w(p + "w1.weight"), x), u = mul(m_w(p + "w3.weight"), x);
        Vec a(g.size());
        for (size_t i = 0; i < g.size(); ++i) {
            double gi = g[i], ui = u[i];
            if (m_c.limit > 0 && wrong != Wrong::NoClamp) {
                ui = std::clamp(ui, -m_c.limit, m_c.limit);
                gi = std::min(gi, m_c.limit);
            }
            a[i] = gi / (1 + std::exp(-gi)) * ui;
        }
        return mul(m_w(p + "w2.weight"), a);
    }

    // MoE.forward for one token: Gate (scores, bias or tid2eid, weights), experts, shared expert.
    Vec ffn(int layer, const Vec &x, int token, Wrong wrong = Wrong::None) const
    {
        const Config &c = m_c;
        const std::string p = "layers." + std::to_string(layer) + ".ffn.";
        Vec s = mul(m_w(p + "gate.weight"), x);
        if (wrong == Wrong::SoftmaxRouter) {
            const double mx = *std::max_element(s.begin(), s.end());
            double z = 0;
            for (double &v : s)
                z += (v = std::exp(v - mx));
            for (double &v : s)
                v /= z;
        } else {
            for (double &v : s)
                v = std::sqrt(v > 20 ? v : std::log1p(std::exp(v)));
        }
        std::vector<int> idx;
        if (layer < c.hash && wrong != Wrong::NoHash) {
            const Vec table = m_w(p + "gate.tid2eid");
            for (int j = 0; j < c.K; ++j)
                idx.push_back(int(table[size_t(token * c.K + j)]));
        } else {
            const Vec bias = layer < c.hash ? Vec(size_t(c.E), 0.0) : m_w(p + "gate.bias");
            std::vector<int> all(static_cast<size_t>(c.E));
            std::iota(all.begin(), all.end(), 0);
            std::stable_sort(all.begin(), all.end(), [&](int a, int b) { return s[size_t(a)] + bias[size_t(a)] > s[size_t(b)] + bias[size_t(b)]; });
            idx.assign(all.begin(), all.begin() + c.K);
        }
        double sum = 0;
        for (int e : idx)
            sum += s[size_t(e)];
        Vec y = expert(p + "shared_experts.", x, wrong);
        for (int e : idx) {
            const double w = s[size_t(e)] / sum * c.routeScale;
            const Vec ye = expert(p + "experts." + std::to_string(e) + ".", x, wrong);
            for (size_t i = 0; i < y.size(); ++i)
                y[i] += w * ye[i];
        }
        return y;
    }

    // hc_pre: (input, post, comb) of the streams X (hc × H) for one sublayer.
    struct Pre {
        Vec x, post, comb;
    };
    Pre hcPre(const std::vector<Vec> &X, const std::string &fn, const std::string &scale, const std::string &base,
              Wrong wrong = Wrong::None) const
    {
        const int hc = m_c.hc, H = m_c.H;
        Vec flat;
        for (const Vec &s : X)
            flat.insert(flat.end(), s.begin(), s.end());
        double ss = 0;
        for (double v : flat)
            ss += v * v;
        Vec mix = mul(m_w(fn), flat);
        for (double &v : mix)
            v /= std::sqrt(ss / double(flat.size()) + m_c.eps);
        const Vec sc = m_w(scale), b = m_w(base);
        Pre out{Vec(size_t(H), 0.0), Vec(size_t(hc)), Vec(size_t(hc * hc))};
        Vec pre(static_cast<size_t>(hc));
        for (int i = 0; i < hc; ++i) {
            pre[size_t(i)] = 1 / (1 + std::exp(-(mix[size_t(i)] * sc[0] + b[size_t(i)]))) + m_c.hcEps;
            out.post[size_t(i)] = 2 / (1 + std::exp(-(mix[size_t(hc + i)] * sc[1] + b[size_t(hc + i)])));
        }
        Vec &C = out.comb; // C[i·hc + j]: old stream i into new stream j
        for (int i = 0; i < hc; ++i) {
            double mx = -INFINITY, z = 0;
            for (int j = 0; j < hc; ++j) {
                C[size_t(i * hc + j)] = mix[size_t(2 * hc + i * hc + j)] * sc[2] + b[size_t(2 * hc + i * hc + j)];
                mx = std::max(mx, C[size_t(i * hc + j)]);
            }
            for (int j = 0; j < hc; ++j)
                z += (C[size_t(i * hc + j)] = std::exp(C[size_t(i * hc + j)] - mx));
            for (int j = 0; j < hc; ++j)
                C[size_t(i * hc + j)] = C[size_t(i * hc + j)] / z + m_c.hcEps;
        }
        if (wrong != Wrong::NoSinkhorn)
            for (int it = 0; it < m_c.iters; ++it) { // columns; then (rows, columns) iters − 1 times
                if (it > 0)
                    for (int i = 0; i < hc; ++i) {
                        double z = 0;
                        for (int j = 0; j < hc; ++j)
                            z += C[size_t(i * hc + j)];
                        for (int j = 0; j < hc; ++j)
                            C[size_t(i * hc + j)] /= z + m_c.hcEps;
                    }
                for (int j = 0; j < hc; ++j) {
                    double z = 0;
                    for (int i = 0; i < hc; ++i)
                        z += C[size_t(i * hc + j)];
                    for (int i = 0; i < hc; ++i)
                        C[size_t(i * hc + j)] /= z + m_c.hcEps;
                }
            }
        for (int i = 0; i < hc; ++i)
            for (int d = 0; d < H; ++d)
                out.x[size_t(d)] += pre[size_t(i)] * X[size_t(i)][size_t(d)];
        return out;
    }

    static void hcPost(std::vector<Vec> &X, const Vec &f, const Pre &p)
    {
        const int hc = int(X.size());
        const std::vector<Vec> old = X;
        for (int j = 0; j < hc; ++j)
            for (size_t d = 0; d < f.size(); ++d) {
                double acc = p.post[size_t(j)] * f[d];
                for (int i = 0; i < hc; ++i)
                    acc += p.comb[size_t(i * hc + j)] * old[size_t(i)][d];
                X[size_t(j)][d] = acc;
            }
    }

    // Transformer.forward: the logits of every position of `tokens` (from position 0).
    std::vector<Vec> logits(const std::vector<int32_t> &tokens, Wrong wrong = Wrong::None) const
    {
        const Config &c = m_c;
        const int T = int(tokens.size());
        const Vec embed = m_w("embed.weight");
        std::vector<std::vector<Vec>> X(static_cast<size_t>(T));
        for (int t = 0; t < T; ++t)
            X[size_t(t)].assign(size_t(c.hc), Vec(embed.begin() + tokens[size_t(t)] * c.H, embed.begin() + (tokens[size_t(t)] + 1) * c.H));
        for (int l = 0; l < c.L; ++l) {
            const std::string p = "layers." + std::to_string(l) + ".";
            std::vector<Pre> pre;
            std::vector<Vec> a;
            for (int t = 0; t < T; ++t) {
                pre.push_back(hcPre(X[size_t(t)], p + "hc_attn_fn", p + "hc_attn_scale", p + "hc_attn_base", wrong));
                a.push_back(rmsnorm(pre.back().x, m_w(p + "attn_norm.weight"), c.eps));
            }
            const std::vector<Vec> o = attention(l, a, wrong);
            for (int t = 0; t < T; ++t) {
                hcPost(X[size_t(t)], o[size_t(t)], pre[size_t(t)]);
                const Pre f = hcPre(X[size_t(t)], p + "hc_ffn_fn", p + "hc_ffn_scale", p + "hc_ffn_base", wrong);
                hcPost(X[size_t(t)], ffn(l, rmsnorm(f.x, m_w(p + "ffn_norm.weight"), c.eps), tokens[size_t(t)], wrong), f);
            }
        }
        std::vector<Vec> out;
        const Vec fn = m_w("hc_head_fn"), sc = m_w("hc_head_scale"), b = m_w("hc_head_base"), head = m_w("head.weight");
        for (int t = 0; t < T; ++t) { // ParallelHead.hc_head, then norm and head
            Vec flat;
            for (const Vec &s : X[size_t(t)])
                flat.insert(flat.end(), s.begin(), s.end());
            double ss = 0;
            for (double v : flat)
                ss += v * v;
            const Vec mix = mul(fn, flat);
            Vec y(size_t(c.H), 0.0);
            for (int i = 0; i < c.hc; ++i) {
                const double w = 1 / (1 + std::exp(-(mix[size_t(i)] / std::sqrt(ss / double(flat.size()) + c.eps) * sc[0] + b[size_t(i)]))) + c.hcEps;
                for (int d = 0; d < c.H; ++d)
                    y[size_t(d)] += w * X[size_t(t)][size_t(i)][size_t(d)];
            }
            out.push_back(mul(head, rmsnorm(y, m_w("norm.weight"), c.eps)));
        }
        return out;
    }

private:
    bool rounds(Wrong wrong) const { return rounding != (wrong == Wrong::FlipRounding); }

    Config m_c;
    Weights m_w;
};

} // namespace dsv4ref
