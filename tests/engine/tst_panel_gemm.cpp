// The prompt pass's kernels (quant/panel_gemm.hpp, quant/panel_decode.hpp,
// quant/panel_product.hpp): every SIMD level computes each output with the scalar
// reference's fused multiply-adds in its order (bit for bit, for every tile shape and row
// tail), the product agrees with float64, the decoders write exactly the weights their
// formats define, and a product does not depend on the thread count or on how many inputs
// it takes at once.
#include <gtest/gtest.h>

#include "compute/thread_pool.hpp"
#include "format/bytes.hpp"
#include "format/codebooks.hpp"
#include "format/f16.hpp"
#include "format/trunk.hpp"
#include "format/native_record.hpp"
#include "format/native_values.hpp"
#include "quant/lut.hpp"
#include "quant/native_matvec.hpp"
#include "quant/panel_decode.hpp"
#include "quant/panel_gemm.hpp"
#include "quant/panel_product.hpp"
#include "quant/simd.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <vector>

using namespace waste;
using namespace waste::quant;

namespace {

std::vector<SimdLevel> levels()
{
    std::vector<SimdLevel> out;
    for (SimdLevel l : {SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512, SimdLevel::Neon})
        if (simdSupported(l))
            out.push_back(l);
    return out;
}

std::vector<float> randoms(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (float &x : v)
        x = d(rng);
    return v;
}

bool sameBits(const float *a, const float *b, size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

} // namespace

TEST(PanelGemm, EveryLevelIsTheScalarReferenceBitForBit)
{
    const PanelGemm ref = scalarPanelGemm();
    int compared = 0;
    for (int64_t cols : {1, 7, 64, 513}) {
        const std::vector<float> panel = randoms(size_t(cols) * kPanelRows, uint32_t(cols));
        for (int64_t T : {1, 2, 3, 4, 5, 6, 7, 11, 13, 64, 100}) {
            const int64_t xStride = cols + 3; // inputs need not be packed
            const std::vector<float> X = randoms(size_t(T * xStride), uint32_t(T * 31 + cols));
            for (int64_t valid : {64, 37, 16, 1}) {
                const int64_t yStride = 70;
                std::vector<float> want(size_t(T * yStride), -7.0f);
                ref(panel.data(), cols, X.data(), xStride, T, want.data(), yStride, valid);
                for (SimdLevel lvl : levels()) {
                    std::vector<float> got(size_t(T * yStride), -7.0f);
                    panelGemmFor(lvl)(panel.data(), cols, X.data(), xStride, T, got.data(), yStride, valid);
                    ASSERT_TRUE(sameBits(got.data(), want.data(), got.size()))
                        << simdName(lvl) << " cols " << cols << " T " << T << " valid " << valid;
                    ++compared;
                }
                // Exactly `valid` outputs written; the float64 sum within rounding.
                for (int64_t t = 0; t < T; ++t) {
                    EXPECT_EQ(want[size_t(t * yStride + valid)], valid < 64 ? -7.0f : want[size_t(t * yStride + valid)]);
                    for (int64_t j = 0; j < valid; ++j) {
                        double exact = 0, magnitude = 0;
                        for (int64_t k = 0; k < cols; ++k) {
                            exact += double(X[size_t(t * xStride + k)]) * panel[size_t(k * kPanelRows + j)];
                            magnitude += std::fabs(double(X[size_t(t * xStride + k)]) * panel[size_t(k * kPanelRows + j)]);
                        }
                        EXPECT_NEAR(want[size_t(t * yStride + j)], exact, 1e-6 * magnitude + 1e-30);
                    }
                }
            }
        }
    }
    EXPECT_GE(compared, 4 * 11 * 4);
}

TEST(PanelDecode, VqPanelsHoldTheRecordsWeights)
{
    // Books of 256 entries, 3 stages (VQ3R), 2 (VQ2R) and 4 packed 6-bit (VQ4P).
    for (auto [S, packed6] : {std::pair{3, false}, std::pair{2, false}, std::pair{4, true}}) {
        std::mt19937 rng(uint32_t(S * 7 + packed6));
        const int E = packed6 ? 64 : 256;
        const std::string path = std::string(WASTE_TEST_OUTPUT_DIR) + "/panel-books-" + std::to_string(S) + ".bin";
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
        format::ExpertQuant q;
        q.stages = S;
        q.entries = E;
        q.indexBits = packed6 ? 6 : 8;
        const format::Codebooks books(path, q);
        const int64_t M = 150, N = 96; // a tail block of 22 rows
        const int64_t perRow = packed6 ? 3 : S;
        std::vector<uint8_t> idx(size_t((M + 63) / 64 * (N / 8) * 64 * perRow));
        for (uint8_t &b : idx)
            b = uint8_t(packed6 ? rng() : rng() % unsigned(E));
        std::vector<uint8_t> scales(size_t(M) * 2);
        for (int64_t r = 0; r < M; ++r) {
            const uint16_t h = uint16_t(0x3800 + (rng() & 0x3ff));
            scales[size_t(r) * 2] = uint8_t(h & 0xff);
            scales[size_t(r) * 2 + 1] = uint8_t(h >> 8);
        }
        const VqMatrix m{idx.data(), scales.data(), &books, 0, S, packed6, M, N};
        for (SimdLevel lvl : levels()) {
            setActiveSimd(lvl);
            for (int64_t r0 = 0; r0 < M; r0 += 64) {
                std::vector<float> panel(size_t(N) * kPanelRows, 123.0f);
                decodeVqPanel(m, r0, panel.data());
                for (int64_t j = 0; j < kPanelRows; ++j)
                    for (int64_t v = 0; v < N / 8; ++v) {
                        const int64_t r = r0 + j;
                        float want[8] = {};
                        if (r < M) {
                            const uint8_t *p = idx.data() + ((r / 64) * (N / 8) + v) * 64 * perRow + (r % 64) * perRow;
                            unsigned ix[4] = {p[0], S > 1 ? p[1] : 0u, S > 2 ? p[2] : 0u, 0u};
                            if (packed6) {
                                ix[0] = p[0] & 63u;
                                ix[1] = ((p[0] >> 6) | (unsigned(p[1]) << 2)) & 63u;
                                ix[2] = ((p[1] >> 4) | (unsigned(p[2]) << 4)) & 63u;
                                ix[3] = unsigned(p[2]) >> 2;
                            }
                            const float rho = format::f16ToFloat(format::loadU16(scales.data() + 2 * r));
                            for (int d = 0; d < 8; ++d) {
                                float w = books.entry(0, ix[0])[d];
                                for (int s = 1; s < S; ++s)
                                    w = w + books.entry(s, ix[s])[d];
                                want[d] = rho * w;
                            }
                        }
                        for (int d = 0; d < 8; ++d)
                            ASSERT_EQ(panel[size_t((8 * v + d) * kPanelRows + j)], want[d])
                                << simdName(lvl) << " S " << S << " row " << r << " col " << 8 * v + d;
                    }
            }
        }
        setActiveSimd(detectSimd());
        // The product agrees with the table path (quant/lut.hpp) within rounding; VQ4P's tables
        // are rounded to int8 per 32 positions (lut.hpp), so it agrees within that rounding.
        const std::vector<float> x = randoms(size_t(N), 5);
        Lut lut;
        buildLut(lut, x.data(), N, books, 0, S, packed6);
        std::vector<float> viaTables(static_cast<size_t>(M)), viaPanels(static_cast<size_t>(M));
        if (packed6)
            applyLut4p(lut, idx.data(), scales.data(), M, viaTables.data());
        else
            applyLut8(lut, idx.data(), scales.data(), M, viaTables.data());
        compute::ThreadPool pool(2);
        panelProduct(vqPanels(m), 1, x.data(), N, viaPanels.data(), M, pool);
        for (int64_t r = 0; r < M; ++r)
            EXPECT_NEAR(viaPanels[size_t(r)], viaTables[size_t(r)], packed6 ? 6e-2 : 1e-4) << "S " << S << " row " << r;
    }
}

TEST(PanelDecode, TrunkPanelsHoldTheTensorsWeights)
{
    // Q4G and Q8G rows as q * s: groups of 128 with a last group that ends inside a vector
    // (200 columns), groups of 32, and groups of 24 (not a multiple of 16: the scalar rows).
    for (auto format : {format::TrunkFormat::Q4G, format::TrunkFormat::Q8G})
        for (auto [N, group] : {std::pair<int64_t, int64_t>{200, 128}, {256, 32}, {96, 24}}) {
            const bool four = format == format::TrunkFormat::Q4G;
            std::mt19937 rng(uint32_t(N * 3 + group + four));
            format::TrunkTensor w;
            w.format = format;
            w.rows = 150; // a tail block of 22 rows
            w.cols = N;
            w.group = group;
            w.groups = (N + group - 1) / group;
            w.rowBytes = four ? (N + 1) / 2 : N;
            w.payload.resize(size_t(w.rows * w.rowBytes));
            for (uint8_t &b : w.payload)
                b = uint8_t(rng());
            const std::vector<float> sc = randoms(size_t(w.rows * w.groups), uint32_t(N + group), 1e-3f, 2e-2f);
            w.scales = sc;
            for (SimdLevel lvl : levels()) {
                setActiveSimd(lvl);
                for (int64_t r0 = 0; r0 < w.rows; r0 += kPanelRows) {
                    std::vector<float> panel(size_t(N) * kPanelRows, 123.0f);
                    decodeTrunkPanel(w, r0, panel.data());
                    for (int64_t j = 0; j < kPanelRows; ++j)
                        for (int64_t i = 0; i < N; ++i) {
                            const int64_t r = r0 + j;
                            float want = 0.0f;
                            if (r < w.rows) {
                                const uint8_t *q = w.payload.data() + r * w.rowBytes;
                                const int value = four ? ((i & 1) ? q[i / 2] >> 4 : q[i / 2] & 15) - 8 : int(int8_t(q[i]));
                                want = float(value) * sc[size_t(r * w.groups + i / group)];
                            }
                            ASSERT_EQ(panel[size_t(i * kPanelRows + j)], want)
                                << simdName(lvl) << (four ? " Q4G" : " Q8G") << " group " << group << " row " << r
                                << " col " << i;
                        }
                }
                // A row alone (MLA's kv_b rows in a pass): the tensor's own readRow, bit for bit.
                std::vector<float> row(static_cast<size_t>(N)), ref(static_cast<size_t>(N));
                for (int64_t r = 0; r < w.rows; ++r) {
                    decodeTrunkRow(w, r, row.data());
                    w.readRow(r, ref.data());
                    ASSERT_TRUE(sameBits(row.data(), ref.data(), size_t(N)))
                        << simdName(lvl) << (four ? " Q4G" : " Q8G") << " group " << group << " row " << r;
                }
            }
            setActiveSimd(detectSimd());
        }
}

TEST(PanelDecode, NativePanelsHoldTheReleasesWeights)
{
    const int64_t rows = 70, cols = 256;
    std::mt19937 rng(9);
    for (uint8_t fmt : {format::kFmtMXFP4, format::kFmtFP8B128, format::kFmtINT4G32, format::kFmtBF16}) {
        std::vector<uint8_t> payload(size_t(format::nativePayloadBytes(fmt, rows, cols)));
        std::vector<uint8_t> scales(size_t(format::nativeScaleBytes(fmt, rows, cols)) + 4);
        for (uint8_t &b : payload)
            b = uint8_t(rng());
        if (fmt == format::kFmtFP8B128) {
            for (uint8_t &b : payload) // no NaN codes
                if ((b & 0x7f) == 0x7f)
                    b = 0x10;
            for (size_t i = 0; i + 4 <= scales.size(); i += 4) {
                const float v = 0.001f * float(1 + rng() % 100);
                std::memcpy(scales.data() + i, &v, 4); // little-endian f32, as the records store it
            }
        } else if (fmt == format::kFmtMXFP4) {
            for (uint8_t &b : scales)
                b = uint8_t(120 + rng() % 10);
        } else if (fmt == format::kFmtINT4G32) {
            for (size_t i = 0; i + 2 <= scales.size(); i += 2) {
                scales[i] = 0;
                scales[i + 1] = uint8_t(0x3c + rng() % 3);
            }
        } else {
            for (size_t i = 1; i < payload.size(); i += 2)
                payload[i] = uint8_t(0x3c + rng() % 4 + (rng() & 0x80));
        }
        const NativeMatrix m{fmt, payload.data(), scales.data(), rows, cols};
        const std::vector<float> x = randoms(size_t(cols), 3);
        std::vector<float> viaRows(static_cast<size_t>(rows)), viaPanels(static_cast<size_t>(rows));
        nativeMatRows(m, x.data(), 0, rows, viaRows.data());
        compute::ThreadPool pool(2);
        panelProduct(nativePanels(m), 1, x.data(), cols, viaPanels.data(), rows, pool);
        for (int64_t r = 0; r < rows; ++r) {
            double magnitude = 0; // the row's weights times x, in float64, from the row kernel's own decode
            std::vector<float> panel(size_t(cols) * kPanelRows);
            decodeNativePanel(m, r / 64 * 64, panel.data());
            for (int64_t k = 0; k < cols; ++k)
                magnitude += std::fabs(double(panel[size_t(k * kPanelRows + r % 64)]) * x[size_t(k)]);
            EXPECT_NEAR(viaPanels[size_t(r)], viaRows[size_t(r)], 1e-5 * magnitude + 1e-20)
                << format::nativeFmtName(fmt) << " row " << r;
        }
    }
}

TEST(PanelDecode, NativePanelsAreTheSameAtEveryLevel)
{
    // Every byte value as a weight and as a scale, E8M0's 0 (a subnormal) and 255 (NaN)
    // included; 70 rows (a tail block) of 96 columns (three groups of 32).
    const int64_t rows = 70, cols = 96;
    std::mt19937 rng(17);
    for (uint8_t fmt : {format::kFmtMXFP4, format::kFmtFP8B128, format::kFmtINT4G32, format::kFmtBF16}) {
        std::vector<uint8_t> payload(size_t(format::nativePayloadBytes(fmt, rows, cols)));
        std::vector<uint8_t> scales(size_t(format::nativeScaleBytes(fmt, rows, cols)) + 4);
        for (size_t i = 0; i < payload.size(); ++i)
            payload[i] = uint8_t(i < 256 ? i : rng());
        for (size_t i = 0; i < scales.size(); ++i)
            scales[i] = uint8_t(i < 256 ? i : rng());
        const NativeMatrix m{fmt, payload.data(), scales.data(), rows, cols};
        std::vector<float> ref(size_t(cols) * kPanelRows), got(size_t(cols) * kPanelRows);
        for (int64_t r0 = 0; r0 < rows; r0 += kPanelRows) {
            setActiveSimd(SimdLevel::Scalar);
            decodeNativePanel(m, r0, ref.data());
            for (SimdLevel lvl : levels()) {
                setActiveSimd(lvl);
                std::fill(got.begin(), got.end(), 123.0f);
                decodeNativePanel(m, r0, got.data());
                ASSERT_TRUE(sameBits(got.data(), ref.data(), got.size()))
                    << format::nativeFmtName(fmt) << " " << simdName(lvl) << " rows from " << r0;
            }
        }
        setActiveSimd(detectSimd());
    }
}

TEST(PanelProduct, NoThreadCountOrInputCountChangesAnOutput)
{
    // A trunk Q4G tensor: the same outputs for 1 and 3 threads, and for its inputs taken all
    // at once or in two calls.
    format::TrunkTensor w;
    w.name = "w";
    w.format = format::TrunkFormat::Q4G;
    w.rows = 200;
    w.cols = 256;
    w.group = 32;
    w.groups = 8;
    w.rowBytes = 128;
    std::mt19937 rng(4);
    w.payload.resize(size_t(w.rows * w.rowBytes));
    for (uint8_t &b : w.payload)
        b = uint8_t(rng());
    w.scales = randoms(size_t(w.rows * w.groups), 8, 0.01f, 0.1f);
    const int64_t n = 37;
    const std::vector<float> x = randoms(size_t(n * w.cols), 12);
    const PanelMatrix m = trunkPanels(w);
    compute::ThreadPool one(1), three(3);
    three.setMinWork(1);
    std::vector<float> a(size_t(n * w.rows)), b(a.size()), c(a.size());
    panelProduct(m, n, x.data(), w.cols, a.data(), w.rows, one);
    panelProduct(m, n, x.data(), w.cols, b.data(), w.rows, three);
    panelProduct(m, 10, x.data(), w.cols, c.data(), w.rows, three);
    panelProduct(m, n - 10, x.data() + 10 * w.cols, w.cols, c.data() + 10 * w.rows, w.rows, one);
    EXPECT_TRUE(sameBits(a.data(), b.data(), a.size()));
    EXPECT_TRUE(sameBits(a.data(), c.data(), a.size()));
    EXPECT_GT(three.splitLoops(), 0);
    // And each output is the row's weights (q * scale) times the input, within rounding.
    for (int64_t t = 0; t < n; t += 9)
        for (int64_t r = 0; r < w.rows; r += 13) {
            std::vector<float> row(size_t(w.cols));
            w.readRow(r, row.data());
            double exact = 0, magnitude = 0;
            for (int64_t k = 0; k < w.cols; ++k) {
                exact += double(row[size_t(k)]) * x[size_t(t * w.cols + k)];
                magnitude += std::fabs(double(row[size_t(k)]) * x[size_t(t * w.cols + k)]);
            }
            EXPECT_NEAR(a[size_t(t * w.rows + r)], exact, 1e-6 * magnitude);
        }
}
