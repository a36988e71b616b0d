// An independent float64 implementation of the vision tower and projector (k3-vision-math
// §6-§7), written here from the spec, against the engine on small containers this test writes
// with every storage the tower accepts: F32 (4-D patch kernel, 3-D position grid), Q8G, Q4G and
// Q3G with various groups, and f16 scales including subnormals. Agreement within 1e-5 relative.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "f32_file.hpp"
#include "image/image_preprocess.hpp"
#include "model/vision_config.hpp"
#include "model/vision_tower.hpp"
#include "model/vision_weights.hpp"

using namespace waste;

namespace {

using Mat = std::vector<double>; // row-major

enum Fmt { F32 = 0, Q8G = 2, Q4G = 3, Q3G = 7 };

double halfToDouble(uint16_t h)
{
    const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    const double v = e == 0 ? m * std::pow(2.0, -24) : std::pow(2.0, e - 15) * (1.0 + m / 1024.0);
    return s ? -v : v;
}

struct Writer {
    std::mt19937 rng;
    std::vector<uint8_t> trunk;
    nlohmann::json entries = nlohmann::json::array();

    explicit Writer(unsigned seed) : rng(seed) {}

    void put(const void *p, size_t n)
    {
        const auto *b = static_cast<const uint8_t *>(p);
        trunk.insert(trunk.end(), b, b + n);
    }

    // Random weights in [-a, a] stored as `fmt`; returns the exact values the file holds.
    Mat tensor(const std::string &name, std::vector<int64_t> shape, Fmt fmt, int group, double a,
               bool subnormalScales = false)
    {
        int64_t n = 1;
        for (auto d : shape) n *= d;
        const int64_t cols = shape.back(), rows = n / cols;
        Mat w(static_cast<size_t>(n));
        nlohmann::json e = {{"name", name}, {"fmt", int(fmt)}, {"shape", shape}, {"off", trunk.size()}};
        std::uniform_real_distribution<double> u(-a, a);
        if (fmt == F32) {
            for (auto &v : w) {
                const float f = float(u(rng));
                v = f;
                put(&f, 4);
            }
        } else {
            const int64_t ng = (cols + group - 1) / group, np = ng * group;
            const int qmax = fmt == Q8G ? 127 : fmt == Q4G ? 7 : 3;
            const int qmin = fmt == Q8G ? -127 : fmt == Q4G ? -8 : -4;
            std::vector<uint16_t> scales(static_cast<size_t>(rows * ng));
            // Scales: f16 values near a / qmax, or tiny subnormals when asked for.
            std::uniform_int_distribution<int> mant(1, 1023);
            const int expo = std::max(1, int(std::floor(std::log2(a / qmax))) + 15);
            for (auto &s : scales)
                s = subnormalScales ? uint16_t(mant(rng)) : uint16_t((expo << 10) | mant(rng));
            std::uniform_int_distribution<int> qd(qmin, qmax);
            std::vector<int> q(static_cast<size_t>(rows * np), 0);
            for (int64_t r = 0; r < rows; ++r)
                for (int64_t i = 0; i < cols; ++i) {
                    q[static_cast<size_t>(r * np + i)] = qd(rng);
                    w[static_cast<size_t>(r * cols + i)] = q[static_cast<size_t>(r * np + i)] * halfToDouble(scales[static_cast<size_t>(r * ng + i / group)]);
                }
            for (int64_t r = 0; r < rows; ++r) {
                if (fmt == Q8G) {
                    for (int64_t i = 0; i < np; ++i) {
                        const int8_t b = int8_t(q[static_cast<size_t>(r * np + i)]);
                        put(&b, 1);
                    }
                } else if (fmt == Q4G) {
                    for (int64_t i = 0; i < np; i += 2) {
                        const uint8_t b = uint8_t((q[static_cast<size_t>(r * np + i)] + 8) | (q[static_cast<size_t>(r * np + i + 1)] + 8) << 4);
                        put(&b, 1);
                    }
                } else {
                    std::vector<uint8_t> row(static_cast<size_t>((3 * np + 7) / 8 + 1), 0);
                    for (int64_t i = 0; i < np; ++i) {
                        const unsigned v = unsigned(q[static_cast<size_t>(r * np + i)] + 4);
                        for (int bit = 0; bit < 3; ++bit)
                            if (v >> bit & 1) row[static_cast<size_t>((3 * i + bit) / 8)] |= uint8_t(1 << ((3 * i + bit) % 8));
                    }
                    put(row.data(), row.size());
                }
            }
            e["group"] = group;
            e["scale_off"] = trunk.size();
            put(scales.data(), scales.size() * 2);
        }
        e["bytes"] = int64_t(trunk.size()) - e["off"].get<int64_t>();
        entries.push_back(e);
        return w;
    }
};

struct Spec {
    int D, heads, Q, I, layers, PH, PW, T, MP;
    Fmt kernelFmt, gridFmt, matFmt;
    int group;
    bool fourDimKernel, threeDimGrid, subnormal;
};

struct RefWeights {
    Mat patch, grid, finalNorm, proj0, proj2, postNorm;
    struct Block {
        Mat norm0, wqkv, wo, norm1, fc0, fc1;
    };
    std::vector<Block> blocks;
};

std::string writeContainer(const Spec &s, unsigned seed, RefWeights &ref)
{
    Writer w(seed);
    const int D = s.D;
    ref.patch = s.fourDimKernel ? w.tensor("vision_tower.patch_embed.proj.weight", {D, 3, 14, 14}, F32, 0, 0.05)
                                : w.tensor("vision_tower.patch_embed.proj.weight", {D, 588}, s.kernelFmt, s.group, 0.05,
                                           s.subnormal);
    ref.grid = s.threeDimGrid ? w.tensor("vision_tower.patch_embed.pos_emb.weight", {s.PH, s.PW, D}, F32, 0, 0.5)
                              : w.tensor("vision_tower.patch_embed.pos_emb.weight", {s.PH * s.PW, D}, s.gridFmt,
                                         s.group, 0.5);
    for (int b = 0; b < s.layers; ++b) {
        const std::string p = "vision_tower.encoder.blocks." + std::to_string(b) + ".";
        RefWeights::Block bl;
        bl.norm0 = w.tensor(p + "norm0.weight", {D}, F32, 0, 1.5);
        bl.wqkv = w.tensor(p + "wqkv.weight", {3 * s.Q, D}, s.matFmt, s.group, 0.4);
        bl.wo = w.tensor(p + "wo.weight", {D, s.Q}, s.matFmt, s.group, 0.3);
        bl.norm1 = w.tensor(p + "norm1.weight", {D}, F32, 0, 1.5);
        bl.fc0 = w.tensor(p + "mlp.fc0.weight", {s.I, D}, s.matFmt, s.group, 0.3);
        bl.fc1 = w.tensor(p + "mlp.fc1.weight", {D, s.I}, s.matFmt, s.group, 0.3);
        ref.blocks.push_back(bl);
    }
    ref.finalNorm = w.tensor("vision_tower.encoder.final_layernorm.weight", {D}, F32, 0, 1.5);
    ref.proj0 = w.tensor("mm_projector.proj.0.weight", {4 * D, 4 * D}, s.matFmt, s.group, 0.2);
    ref.proj2 = w.tensor("mm_projector.proj.2.weight", {s.T, 4 * D}, s.matFmt, s.group, 0.2, s.subnormal);
    ref.postNorm = w.tensor("mm_projector.post_norm.weight", {s.T}, F32, 0, 1.5);

    const std::string dir = std::string(WASTE_TEST_OUTPUT_DIR) + "/vision-ref-" + std::to_string(seed) + ".waste";
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/trunk.bin", std::ios::binary)
        .write(reinterpret_cast<const char *>(w.trunk.data()), std::streamsize(w.trunk.size()));
    const nlohmann::json manifest = {{"format_version", 0},
                                     {"arch", "kimi_linear"},
                                     {"tensor_prefix", "language_model."},
                                     {"config", {{"hidden_size", s.T}, {"vocab_size", 400}}},
                                     {"trunk", w.entries}};
    std::ofstream(dir + "/manifest.json") << manifest.dump(1);
    const nlohmann::json vj = {{"vt_hidden_size", s.D},       {"vt_num_attention_heads", s.heads},
                               {"qkv_hidden_size", s.Q},      {"vt_intermediate_size", s.I},
                               {"vt_num_hidden_layers", s.layers}, {"init_pos_emb_height", s.PH},
                               {"init_pos_emb_width", s.PW},  {"text_hidden_size", s.T},
                               {"patch_size", 14},            {"media_placeholder_token_id", 399},
                               {"max_patches", s.MP}};
    std::ofstream(dir + "/vision.json") << vj.dump(1);
    return dir;
}

// ---- the float64 reference, straight from the spec ----

void matvec(const Mat &W, int out, int in, const double *x, double *y)
{
    for (int o = 0; o < out; ++o) {
        double s = 0;
        for (int i = 0; i < in; ++i) s += W[static_cast<size_t>(o) * static_cast<size_t>(in) + static_cast<size_t>(i)] * x[i];
        y[o] = s;
    }
}

void rms(double *x, const Mat &w, int n, double eps)
{
    double ss = 0;
    for (int i = 0; i < n; ++i) ss += x[i] * x[i];
    const double r = 1.0 / std::sqrt(ss / n + eps);
    for (int i = 0; i < n; ++i) x[i] = x[i] * r * w[static_cast<size_t>(i)];
}

std::vector<double> reference(const Spec &s, const RefWeights &W, const std::vector<float> &pix, int gh, int gw)
{
    const int D = s.D, Q = s.Q, nH = s.heads, hd = Q / nH, L = gh * gw;
    std::vector<std::vector<double>> X(static_cast<size_t>(L), std::vector<double>(static_cast<size_t>(D)));
    for (int i = 0; i < L; ++i) {
        std::vector<double> p(pix.begin() + long(i) * 588, pix.begin() + long(i + 1) * 588);
        matvec(W.patch, D, 588, p.data(), X[static_cast<size_t>(i)].data());
    }
    auto G = [&](int y, int x, int d) { return W.grid[(static_cast<size_t>(y) * static_cast<size_t>(s.PW) + static_cast<size_t>(x)) * static_cast<size_t>(D) + static_cast<size_t>(d)]; };
    for (int i = 0; i < L; ++i) {
        const int yi = i / gw, xi = i % gw;
        const double fy = (yi + 0.5) * s.PH / gh - 0.5, fx = (xi + 0.5) * s.PW / gw - 0.5;
        const int y0 = int(std::floor(fy)), x0 = int(std::floor(fx));
        const double wy = fy - y0, wx = fx - x0;
        const int ya = std::clamp(y0, 0, s.PH - 1), yb = std::clamp(y0 + 1, 0, s.PH - 1);
        const int xa = std::clamp(x0, 0, s.PW - 1), xb = std::clamp(x0 + 1, 0, s.PW - 1);
        for (int d = 0; d < D; ++d)
            X[static_cast<size_t>(i)][static_cast<size_t>(d)] += (1 - wy) * (1 - wx) * G(ya, xa, d) + (1 - wy) * wx * G(ya, xb, d) +
                                       wy * (1 - wx) * G(yb, xa, d) + wy * wx * G(yb, xb, d);
    }
    const double eps = std::pow(2.0, -23);
    for (const auto &bl : W.blocks) {
        std::vector<std::vector<double>> q(static_cast<size_t>(L)), k(static_cast<size_t>(L)), v(static_cast<size_t>(L));
        for (int i = 0; i < L; ++i) {
            std::vector<double> y = X[static_cast<size_t>(i)], r(static_cast<size_t>(3 * Q));
            rms(y.data(), bl.norm0, D, eps);
            matvec(bl.wqkv, 3 * Q, D, y.data(), r.data());
            q[static_cast<size_t>(i)].assign(r.begin(), r.begin() + Q);
            k[static_cast<size_t>(i)].assign(r.begin() + Q, r.begin() + 2 * Q);
            v[static_cast<size_t>(i)].assign(r.begin() + 2 * Q, r.end());
            for (auto *t : {&q[static_cast<size_t>(i)], &k[static_cast<size_t>(i)]})
                for (int h = 0; h < nH; ++h)
                    for (int j = 0; j < hd / 2; ++j) {
                        const double theta = std::pow(10000.0, -4.0 * (j / 2) / hd);
                        const double phi = (j % 2 == 0 ? i % gw : i / gw) * theta;
                        double &a = (*t)[static_cast<size_t>(h * hd + 2 * j)], &b = (*t)[static_cast<size_t>(h * hd + 2 * j + 1)];
                        const double na = a * std::cos(phi) - b * std::sin(phi), nb = a * std::sin(phi) + b * std::cos(phi);
                        a = na;
                        b = nb;
                    }
        }
        for (int i = 0; i < L; ++i) {
            std::vector<double> o(static_cast<size_t>(Q), 0.0), y(static_cast<size_t>(D));
            for (int h = 0; h < nH; ++h) {
                std::vector<double> sc(static_cast<size_t>(L));
                double mx = -1e300, sum = 0;
                for (int r = 0; r < L; ++r) {
                    double d = 0;
                    for (int e = 0; e < hd; ++e) d += q[static_cast<size_t>(i)][static_cast<size_t>(h * hd + e)] * k[static_cast<size_t>(r)][static_cast<size_t>(h * hd + e)];
                    sc[static_cast<size_t>(r)] = d / std::sqrt(double(hd));
                    mx = std::max(mx, sc[static_cast<size_t>(r)]);
                }
                for (auto &x : sc) sum += (x = std::exp(x - mx));
                for (int r = 0; r < L; ++r)
                    for (int e = 0; e < hd; ++e) o[static_cast<size_t>(h * hd + e)] += sc[static_cast<size_t>(r)] / sum * v[static_cast<size_t>(r)][static_cast<size_t>(h * hd + e)];
            }
            matvec(bl.wo, D, Q, o.data(), y.data());
            X[static_cast<size_t>(i)] = [&] { auto t = X[static_cast<size_t>(i)]; for (int d = 0; d < D; ++d) t[static_cast<size_t>(d)] += y[static_cast<size_t>(d)]; return t; }();
        }
        for (int i = 0; i < L; ++i) {
            std::vector<double> y = X[static_cast<size_t>(i)], hdn(static_cast<size_t>(s.I)), z(static_cast<size_t>(D));
            rms(y.data(), bl.norm1, D, eps);
            matvec(bl.fc0, s.I, D, y.data(), hdn.data());
            for (auto &t : hdn) t = 0.5 * t * (1 + std::tanh(0.7978845608028654 * (t + 0.044715 * t * t * t)));
            matvec(bl.fc1, D, s.I, hdn.data(), z.data());
            for (int d = 0; d < D; ++d) X[static_cast<size_t>(i)][static_cast<size_t>(d)] += z[static_cast<size_t>(d)];
        }
    }
    for (auto &x : X) rms(x.data(), W.finalNorm, D, eps);
    std::vector<double> out;
    for (int a = 0; a < gh / 2; ++a)
        for (int c = 0; c < gw / 2; ++c) {
            std::vector<double> m;
            for (int idx : {2 * a * gw + 2 * c, 2 * a * gw + 2 * c + 1, (2 * a + 1) * gw + 2 * c, (2 * a + 1) * gw + 2 * c + 1})
                m.insert(m.end(), X[static_cast<size_t>(idx)].begin(), X[static_cast<size_t>(idx)].end());
            std::vector<double> u(static_cast<size_t>(4 * D)), e(static_cast<size_t>(s.T));
            matvec(W.proj0, 4 * D, 4 * D, m.data(), u.data());
            for (auto &t : u) t = 0.5 * t * (1 + std::erf(t / std::sqrt(2.0)));
            matvec(W.proj2, s.T, 4 * D, u.data(), e.data());
            rms(e.data(), W.postNorm, s.T, 1e-5);
            out.insert(out.end(), e.begin(), e.end());
        }
    return out;
}

void checkAgainstEngine(const Spec &s, unsigned seed, std::vector<std::pair<int, int>> grids)
{
    RefWeights ref;
    const std::string dir = writeContainer(s, seed, ref);
    auto src = vision::openContainerTensors(dir);
    vision::VisionConfig cfg;
    ASSERT_TRUE(vision::readVisionConfig(dir, cfg));
    vision::validateVisionConfig(cfg, src->textHidden(), src->vocabSize(), dir);
    const auto w = vision::loadVisionWeights(*src, cfg);
    std::mt19937 rng(seed + 100);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (auto [gh, gw] : grids) {
        image::PatchTensor p;
        p.grid = {gh, gw};
        p.values.resize(static_cast<size_t>(gh * gw) * 588);
        for (auto &v : p.values) v = u(rng);
        const auto got = vision::encodeImage(*w, p, nullptr, 2);
        const auto want = reference(s, ref, p.values, gh, gw);
        ASSERT_EQ(got.rows.size(), want.size());
        const double rel = maxRelativeDiff(got.rows, want);
        EXPECT_LT(rel, 1e-5) << "grid " << gh << "x" << gw;
        std::cout << "grid " << gh << "x" << gw << ": max relative difference " << rel << "\n";
    }
}

} // namespace

TEST(VisionReference, F32Weights4DKernel3DGrid)
{
    const Spec s{24, 3, 24, 40, 2, 5, 7, 48, 64, F32, F32, F32, 128, true, true, false};
    checkAgainstEngine(s, 11, {{4, 6}, {2, 2}, {6, 8}});
}

TEST(VisionReference, Q8GWithSubnormalScales)
{
    const Spec s{32, 2, 32, 64, 2, 8, 8, 64, 64, Q8G, Q8G, Q8G, 128, false, false, true};
    checkAgainstEngine(s, 12, {{8, 8} /* copy path */, {6, 8}});
}

TEST(VisionReference, Q4GAndQ3GSmallGroups)
{
    const Spec s{40, 2, 64, 72, 2, 12, 12, 40, 144, Q3G, Q8G, Q4G, 32, false, false, false};
    checkAgainstEngine(s, 13, {{4, 10}, {12, 12}});
}
