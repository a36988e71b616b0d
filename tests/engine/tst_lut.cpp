// The LUT kernels compute W x for the weights the VQ records describe (reconstructed
// explicitly here in double), without ever expanding W; VQ4P adds its int8 table step.
#include <gtest/gtest.h>

#include "format/codebooks.hpp"
#include "format/bytes.hpp"
#include "format/f16.hpp"
#include "quant/lut.hpp"

#include <cmath>
#include <fstream>
#include <random>

namespace {

struct Fixture {
    int M, N, S, E;
    std::vector<float> x;
    std::vector<uint8_t> idx, scales;
    waste::format::Codebooks books;
};

Fixture make(int M, int N, int S, int E, bool packed6, uint32_t seed)
{
    std::mt19937 rng(seed);
    const std::string path = std::string(WASTE_TEST_OUTPUT_DIR) + "/lut-books-" + std::to_string(seed) + ".bin";
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        for (int b = 0; b < S; ++b) {
            char hdr[16] = {};
            out.write(hdr, 16);
            for (int i = 0; i < E * 8; ++i) {
                const uint16_t h = static_cast<uint16_t>((rng() & 0x8000) | (0x2c00 + (rng() & 0x7ff)));
                out.write(reinterpret_cast<const char *>(&h), 2);
            }
        }
    }
    waste::format::ExpertQuant q;
    q.stages = S;
    q.entries = E;
    q.indexBits = packed6 ? 6 : 8;
    Fixture f{M, N, S, E, {}, {}, {}, waste::format::Codebooks(path, q)};
    const int blocks = (M + 63) / 64;
    f.idx.assign(size_t(blocks) * (N / 8) * 64 * (packed6 ? 3 : S), 0);
    for (auto &b : f.idx)
        b = static_cast<uint8_t>(packed6 ? rng() : rng() % E);
    f.scales.resize(size_t(M) * 2);
    for (int r = 0; r < M; ++r) {
        const uint16_t h = static_cast<uint16_t>(0x3800 + (rng() & 0x3ff));
        f.scales[size_t(r) * 2] = h & 0xff;
        f.scales[size_t(r) * 2 + 1] = h >> 8;
    }
    f.x.resize(N);
    for (auto &v : f.x)
        v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
    return f;
}

int stageIndex(const Fixture &f, bool packed6, int r, int v, int s)
{
    const size_t at = ((size_t(r / 64) * (f.N / 8) + v) * 64 + r % 64) * (packed6 ? 3 : f.S);
    if (!packed6)
        return f.idx[at + s];
    const unsigned b0 = f.idx[at], b1 = f.idx[at + 1], b2 = f.idx[at + 2];
    const unsigned i[4] = {b0 & 63u, ((b0 >> 6) | (b1 << 2)) & 63u, ((b1 >> 4) | (b2 << 4)) & 63u, b2 >> 2};
    return static_cast<int>(i[s]);
}

// y[r] = ρ_r Σ_v Σ_d x[8v+d] Σ_s Cb[s][i_s][d], in double.
std::vector<double> dense(const Fixture &f, bool packed6)
{
    std::vector<double> y(f.M);
    for (int r = 0; r < f.M; ++r) {
        double acc = 0;
        for (int v = 0; v < f.N / 8; ++v)
            for (int d = 0; d < 8; ++d) {
                double w = 0;
                for (int s = 0; s < f.S; ++s)
                    w += f.books.entry(s, stageIndex(f, packed6, r, v, s))[d];
                acc += w * f.x[8 * v + d];
            }
        y[r] = acc * waste::format::f16ToFloat(waste::format::loadU16(&f.scales[size_t(r) * 2]));
    }
    return y;
}

} // namespace

TEST(Lut, Vq8MatchesReconstructedWeights)
{
    for (auto [M, N, S] : {std::tuple{64, 128, 3}, std::tuple{40, 64, 3}, std::tuple{130, 328, 2}, std::tuple{96, 200, 3}}) {
        Fixture f = make(M, N, S, 256, false, 11u + unsigned(M));
        waste::quant::Lut lut;
        waste::quant::buildLut(lut, f.x.data(), N, f.books, 0, S, false);
        std::vector<float> y(M);
        waste::quant::applyLut8(lut, f.idx.data(), f.scales.data(), M, y.data());
        const std::vector<double> ref = dense(f, false);
        double scale = 0;
        for (double v : ref)
            scale = std::max(scale, std::fabs(v));
        for (int r = 0; r < M; ++r)
            EXPECT_NEAR(y[r], ref[r], 1e-5 * scale + 1e-6) << "row " << r << " of " << M << "x" << N;
    }
}

TEST(Lut, Vq4pIsTheInt8TableApproximation)
{
    Fixture f = make(70, 256, 4, 64, true, 5);
    waste::quant::Lut lut;
    waste::quant::buildLut(lut, f.x.data(), 256, f.books, 0, 4, true);
    std::vector<float> y(70);
    waste::quant::applyLut4p(lut, f.idx.data(), f.scales.data(), 70, y.data());
    const std::vector<double> ref = dense(f, true);
    // Each table entry is off by at most half a step (σ/2); 4 stages x NV positions per row.
    double bound = 0;
    for (float s : lut.blockScale)
        bound = std::max(bound, double(s));
    bound *= 0.5 * 4 * (256 / 8) * 1.001;
    for (int r = 0; r < 70; ++r) {
        const double rho = waste::format::f16ToFloat(waste::format::loadU16(&f.scales[size_t(r) * 2]));
        EXPECT_NEAR(y[r], ref[r], bound * rho + 1e-5) << "row " << r;
    }
    // And the int8 table really is the rounded f32 one.
    for (int c = 0; c < 64; ++c) {
        const float t = lut.table[c];
        EXPECT_EQ(int(lut.q8[c]), int(std::nearbyint(t * (127.0f / (lut.blockScale[0] * 127.0f)))) ) << c;
    }
}
