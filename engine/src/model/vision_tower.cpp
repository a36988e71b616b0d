#include "model/vision_tower.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include "waste/waste.hpp"

namespace waste::vision {
namespace {

constexpr float kTowerEps = 1.1920928955078125e-07f; // 2^-23, PyTorch RMSNorm's default
constexpr float kProjectorEps = 1e-5f;

// Splits [0, n) over up to `threads` workers; small jobs run inline (thread start costs more).
template <typename F> void parallelFor(int n, int threads, double workPerItem, F &&fn)
{
    const int want = int(std::min<double>(threads, std::max(1.0, double(n) * workPerItem / 2.0e5)));
    const int t = std::max(1, std::min(want, n));
    if (t == 1) {
        fn(0, n);
        return;
    }
    std::vector<std::thread> pool;
    pool.reserve(size_t(t - 1));
    const int per = (n + t - 1) / t;
    for (int k = 1; k < t; ++k) {
        const int b = k * per, e = std::min(n, b + per);
        if (b < e) pool.emplace_back([&fn, b, e] { fn(b, e); });
    }
    fn(0, std::min(n, per));
    for (auto &th : pool) th.join();
}

float dot(const float *a, const float *b, int n)
{
    // Eight independent partial sums: lets the compiler use vector lanes without -ffast-math.
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; ++l) acc[l] += a[i + l] * b[i + l];
    float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}

// Y[r][o] = sum_i W[o][i] * X[r][i] for r < n: each weight row is dequantized once.
void matmul(const WeightMatrix &w, const float *x, int n, float *y, int threads)
{
    const int in = w.cols, out = w.rows;
    parallelFor(out, threads, double(n) * in, [&](int ob, int oe) {
        std::vector<float> row(static_cast<size_t>(in));
        for (int o = ob; o < oe; ++o) {
            w.row(o, row.data());
            for (int r = 0; r < n; ++r) y[size_t(r) * size_t(out) + size_t(o)] = dot(row.data(), x + size_t(r) * size_t(in), in);
        }
    });
}

void rmsNorm(const float *x, const float *weight, int n, float eps, float *y)
{
    float ss = 0;
    for (int i = 0; i < n; ++i) ss += x[i] * x[i];
    const float r = 1.0f / std::sqrt(ss / float(n) + eps);
    for (int i = 0; i < n; ++i) y[i] = x[i] * r * weight[i];
}

float geluTanh(float z)
{
    return 0.5f * z * (1.0f + std::tanh(0.7978845608028654f * (z + 0.044715f * z * z * z)));
}

float geluErf(float z) { return 0.5f * z * (1.0f + std::erf(z * 0.70710678118654752f)); }

// Position grid resized to gh x gw (half-pixel bilinear, height first), added to X.
void addPositions(const VisionWeights &w, int gh, int gw, float *x)
{
    const int D = w.cfg.hidden, PH = w.cfg.posHeight, PW = w.cfg.posWidth;
    const float *G = w.posGrid.data();
    auto cell = [&](int y, int xx) { return G + (size_t(y) * size_t(PW) + size_t(xx)) * size_t(D); };
    const float sy = float(PH) / float(gh), sx = float(PW) / float(gw);
    for (int y = 0; y < gh; ++y) {
        const float fy = (float(y) + 0.5f) * sy - 0.5f;
        const float fly = std::floor(fy);
        const float wy = fy - fly;
        const int y0 = std::clamp(int(fly), 0, PH - 1), y1 = std::clamp(int(fly) + 1, 0, PH - 1);
        for (int xx = 0; xx < gw; ++xx) {
            float *dst = x + (size_t(y) * size_t(gw) + size_t(xx)) * size_t(D);
            if (gh == PH && gw == PW) {
                const float *g = cell(y, xx);
                for (int d = 0; d < D; ++d) dst[d] += g[d];
                continue;
            }
            const float fx = (float(xx) + 0.5f) * sx - 0.5f;
            const float flx = std::floor(fx);
            const float wx = fx - flx;
            const int x0 = std::clamp(int(flx), 0, PW - 1), x1 = std::clamp(int(flx) + 1, 0, PW - 1);
            const float *a = cell(y0, x0), *b = cell(y0, x1), *c = cell(y1, x0), *e = cell(y1, x1);
            const float wa = (1 - wy) * (1 - wx), wb = (1 - wy) * wx, wc = wy * (1 - wx), we = wy * wx;
            for (int d = 0; d < D; ++d) dst[d] += wa * a[d] + wb * b[d] + wc * c[d] + we * e[d];
        }
    }
}

// 2D rotary on one head: pairs (2j, 2j+1); even pairs turn by column, odd pairs by row.
struct Rotary {
    std::vector<float> cosT, sinT; // [patches][hd/2]
    int half = 0;

    Rotary(int hd, int gh, int gw) : half(hd / 2)
    {
        const int L = gh * gw;
        cosT.resize(size_t(L) * size_t(half));
        sinT.resize(size_t(L) * size_t(half));
        for (int i = 0; i < L; ++i) {
            const int xi = i % gw, yi = i / gw;
            for (int j = 0; j < half; ++j) {
                const double theta = 1.0 / std::pow(10000.0, double(4 * (j / 2)) / double(hd));
                const double phi = double(j % 2 == 0 ? xi : yi) * theta;
                cosT[size_t(i) * size_t(half) + size_t(j)] = float(std::cos(phi));
                sinT[size_t(i) * size_t(half) + size_t(j)] = float(std::sin(phi));
            }
        }
    }

    void apply(float *v, int i) const
    {
        const float *c = &cosT[size_t(i) * size_t(half)], *s = &sinT[size_t(i) * size_t(half)];
        for (int j = 0; j < half; ++j) {
            const float a = v[2 * j], b = v[2 * j + 1];
            v[2 * j] = a * c[j] - b * s[j];
            v[2 * j + 1] = a * s[j] + b * c[j];
        }
    }
};

} // namespace

int64_t towerWorkingBytes(const VisionConfig &c, int patches)
{
    const int64_t L = patches, D = c.hidden, Q = c.qkv, I = c.intermediate, T = c.textHidden;
    const int64_t N = (L + 3) / 4;
    // x, y, packed qkv, attention out, MLP hidden, rotary tables, merge + projector buffers.
    return 4 * (2 * L * D + 3 * L * Q + L * Q + L * I + L * (Q / std::max<int64_t>(c.heads, 1)) +
                L * L + N * 4 * D * 2 + N * T);
}

ImageRows encodeImage(const VisionWeights &w, const image::PatchTensor &p, TowerTrace *trace, int threads)
{
    const VisionConfig &c = w.cfg;
    const int gh = p.grid.gh, gw = p.grid.gw, L = gh * gw;
    if (gh < 2 || gw < 2 || gh % 2 || gw % 2 || int64_t(p.values.size()) != int64_t(L) * image::kPatchValues)
        throw Error(ErrorCode::Argument, "vision tower: the patch grid must be even on both sides");
    if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
    const int D = c.hidden, Q = c.qkv, I = c.intermediate, T = c.textHidden, nH = c.heads, hd = c.headDim();
    const size_t sL = size_t(L), sD = size_t(D);

    // 6.1-6.2 patch embedding plus the resized position grid.
    std::vector<float> x(sL * sD), y(sL * sD);
    matmul(w.patchEmbed, p.values.data(), L, x.data(), threads);
    addPositions(w, gh, gw, x.data());
    if (trace) trace->embed = x;

    std::vector<float> qkv(sL * size_t(3 * Q)), att(sL * size_t(Q)), hid(sL * size_t(I));
    const Rotary rope(hd, gh, gw);
    const float invSqrt = 1.0f / std::sqrt(float(hd));
    for (size_t b = 0; b < w.blocks.size(); ++b) {
        const VisionBlockWeights &bl = w.blocks[b];
        for (int i = 0; i < L; ++i) rmsNorm(&x[size_t(i) * sD], bl.norm0.data(), D, kTowerEps, &y[size_t(i) * sD]);
        matmul(bl.wqkv, y.data(), L, qkv.data(), threads);
        // Rotary on q and k of every head.
        for (int i = 0; i < L; ++i) {
            float *r = &qkv[size_t(i) * size_t(3 * Q)];
            for (int h = 0; h < nH; ++h) {
                rope.apply(r + size_t(h) * size_t(hd), i);
                rope.apply(r + size_t(Q) + size_t(h) * size_t(hd), i);
            }
        }
        // Full attention within the image, one softmax row per (patch, head).
        parallelFor(L, threads, double(L) * Q * 2, [&](int ib, int ie) {
            std::vector<float> s(sL);
            for (int i = ib; i < ie; ++i) {
                for (int h = 0; h < nH; ++h) {
                    const float *q = &qkv[size_t(i) * size_t(3 * Q) + size_t(h) * size_t(hd)];
                    float mx = -INFINITY;
                    for (int r = 0; r < L; ++r) {
                        const float *k = &qkv[size_t(r) * size_t(3 * Q) + size_t(Q) + size_t(h) * size_t(hd)];
                        s[size_t(r)] = dot(q, k, hd) * invSqrt;
                        mx = std::max(mx, s[size_t(r)]);
                    }
                    float sum = 0;
                    for (int r = 0; r < L; ++r) {
                        s[size_t(r)] = std::exp(s[size_t(r)] - mx);
                        sum += s[size_t(r)];
                    }
                    float *o = &att[size_t(i) * size_t(Q) + size_t(h) * size_t(hd)];
                    std::fill(o, o + hd, 0.0f);
                    for (int r = 0; r < L; ++r) {
                        const float a = s[size_t(r)] / sum;
                        const float *v = &qkv[size_t(r) * size_t(3 * Q) + size_t(2 * Q) + size_t(h) * size_t(hd)];
                        for (int d = 0; d < hd; ++d) o[d] += a * v[d];
                    }
                }
            }
        });
        matmul(bl.wo, att.data(), L, y.data(), threads);
        for (size_t k = 0; k < sL * sD; ++k) x[k] += y[k];
        for (int i = 0; i < L; ++i) rmsNorm(&x[size_t(i) * sD], bl.norm1.data(), D, kTowerEps, &y[size_t(i) * sD]);
        matmul(bl.fc0, y.data(), L, hid.data(), threads);
        for (float &v : hid) v = geluTanh(v);
        matmul(bl.fc1, hid.data(), L, y.data(), threads);
        for (size_t k = 0; k < sL * sD; ++k) x[k] += y[k];
        if (trace) trace->blocks.push_back(x);
    }
    for (int i = 0; i < L; ++i) rmsNorm(&x[size_t(i) * sD], w.finalNorm.data(), D, kTowerEps, &y[size_t(i) * sD]);
    if (trace) trace->encoder = y;

    // 7. 2x2 merge (TL, TR, BL, BR) over the half-resolution grid, then the projector.
    const int nh = gh / 2, nw = gw / 2, N = nh * nw;
    std::vector<float> merged(size_t(N) * 4 * sD);
    for (int a = 0; a < nh; ++a) {
        for (int cc = 0; cc < nw; ++cc) {
            float *m = &merged[(size_t(a) * size_t(nw) + size_t(cc)) * 4 * sD];
            const int src[4] = {2 * a * gw + 2 * cc, 2 * a * gw + 2 * cc + 1, (2 * a + 1) * gw + 2 * cc,
                                (2 * a + 1) * gw + 2 * cc + 1};
            for (int k = 0; k < 4; ++k) std::copy_n(&y[size_t(src[k]) * sD], sD, m + size_t(k) * sD);
        }
    }
    std::vector<float> u(size_t(N) * 4 * sD), e(size_t(N) * size_t(T));
    matmul(w.proj0, merged.data(), N, u.data(), threads);
    for (float &v : u) v = geluErf(v);
    matmul(w.proj2, u.data(), N, e.data(), threads);
    ImageRows out;
    out.grid = p.grid;
    out.positions = N;
    out.rows.resize(size_t(N) * size_t(T));
    for (int m = 0; m < N; ++m)
        rmsNorm(&e[size_t(m) * size_t(T)], w.postNorm.data(), T, kProjectorEps, &out.rows[size_t(m) * size_t(T)]);
    return out;
}

} // namespace waste::vision
