// Panel decoders (quant/panel_decode.hpp). Each weight is computed elementwise by the same
// rounded operations at every level (this file and panel_decode_avx512.cpp are compiled
// without contraction into fused multiply-adds), so a panel does not depend on the level.
#include "quant/panel_decode.hpp"

#include "format/expert_record.hpp"

#include "quant/panel_decode_levels.hpp"

#include "format/bytes.hpp"
#include "format/f16.hpp"
#include "format/native_record.hpp"
#include "format/native_values.hpp"
#include "quant/panel_gemm.hpp"
#include "quant/simd.hpp"
#include "waste/waste.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

namespace waste::quant {

namespace {

constexpr int P = kPanelRows;

// The active level's pieces, or nullptr where it has none: an AVX-512 machine runs the AVX2
// piece where its own level has none.
template <typename Piece> Piece forLevel(Piece (*avx512)(), Piece (*avx2)(), Piece (*neon)())
{
    const SimdLevel lvl = activeSimd();
    if (lvl == SimdLevel::Neon)
        return neon ? neon() : nullptr;
    Piece piece = lvl == SimdLevel::Avx512 && avx512 ? avx512() : nullptr;
    if (!piece && (lvl == SimdLevel::Avx512 || lvl == SimdLevel::Avx2) && avx2)
        piece = avx2();
    return piece;
}

// Rows [r0, r0 + 64) of the matrix as f32 rows, written transposed into the panel, sixteen
// rows at a time (per block of columns a 16 x 8 transpose with AVX-512, two 8 x 8 with AVX2,
// 4 x 4 ones with NEON, else element by element); rows past the matrix are 0.
template <typename RowFn> void transposeRows(int64_t rows, int64_t cols, int64_t r0, float *panel, RowFn &&row)
{
    thread_local std::vector<float> buf;
    const int64_t nr = std::min<int64_t>(P, rows - r0);
    const PanelTranspose16 fast = panelTranspose16();
    constexpr int64_t step = 16;
    buf.resize(size_t(step * cols));
    for (int64_t j0 = 0; j0 < P; j0 += step) {
        for (int64_t i = 0; i < step; ++i) {
            float *out = buf.data() + i * cols;
            if (j0 + i < nr)
                row(r0 + j0 + i, out);
            else
                std::fill(out, out + cols, 0.0f);
        }
        const int64_t k8 = fast ? cols / 8 * 8 : 0;
        if (fast)
            fast(buf.data(), cols, k8, panel + j0);
        for (int64_t k = k8; k < cols; ++k)
            for (int64_t i = 0; i < step; ++i)
                panel[k * P + j0 + i] = buf[size_t(i * cols + k)];
    }
}

void vqScalar(const VqMatrix &m, int64_t r0, const float *scale, float *panel)
{
    const int64_t nv = m.cols / 8;
    const int S = m.stages;
    const int64_t perRow = m.packed6 ? 3 : S;
    const uint8_t *blk = m.indices + (r0 / P) * nv * P * perRow;
    const int64_t nr = std::min<int64_t>(P, m.rows - r0);
    for (int64_t v = 0; v < nv; ++v) {
        const uint8_t *ix = blk + v * P * perRow;
        float *out = panel + 8 * v * P;
        for (int64_t r = 0; r < P; ++r) {
            if (r >= nr) {
                for (int d = 0; d < 8; ++d)
                    out[d * P + r] = 0.0f;
                continue;
            }
            const uint8_t *p = ix + r * perRow;
            unsigned idx[4] = {0, 0, 0, 0};
            if (m.packed6) {
                format::unpackVq4p(p, idx);
            } else {
                for (int s = 0; s < S; ++s)
                    idx[s] = p[s];
            }
            for (int d = 0; d < 8; ++d) {
                float w = m.books->entry(m.base, idx[0])[d];
                for (int s = 1; s < S; ++s)
                    w = w + m.books->entry(m.base + s, idx[s])[d];
                out[d * P + r] = scale[r] * w;
            }
        }
    }
}

// The active level's decoder of a resident Q4G or Q8G tensor's rows; nullptr for other
// tensors, levels and group sizes.
GroupedRowDecoder groupedRowDecoder(const format::TrunkTensor &w)
{
    const bool four = w.format == format::TrunkFormat::Q4G;
    if (w.onDisk || !(four || w.format == format::TrunkFormat::Q8G) || w.group % 16 != 0)
        return nullptr;
    return four ? forLevel(avx512Q4gRow, avx2Q4gRow, neonQ4gRow) : forLevel(avx512Q8gRow, avx2Q8gRow, neonQ8gRow);
}

} // namespace

PanelTranspose16 panelTranspose16()
{
    return forLevel(avx512PanelTranspose16, avx2PanelTranspose16, neonPanelTranspose16);
}

void decodeTrunkRow(const format::TrunkTensor &w, int64_t r, float *out)
{
    if (const GroupedRowDecoder simd = groupedRowDecoder(w))
        simd(w.payload.data() + r * w.rowBytes, w.scales.data() + r * w.groups, w.cols, w.group, out);
    else
        w.readRow(r, out);
}

void decodeVqPanel(const VqMatrix &m, int64_t r0, float *panel)
{
    if (m.cols % 8 != 0 || r0 % P != 0 || m.stages < 1 || m.stages > 4 || (m.packed6 && m.stages != 4))
        throw Error(ErrorCode::Format, "a VQ matrix of " + std::to_string(m.cols) + " columns and " +
                                           std::to_string(m.stages) + " stages cannot be decoded");
    float scale[P];
    const int64_t nr = std::min<int64_t>(P, m.rows - r0);
    for (int64_t r = 0; r < P; ++r)
        scale[r] = r < nr ? format::f16ToFloat(format::loadU16(m.rowScalesF16 + 2 * (r0 + r))) : 0.0f;
    const VqPanelDecoder simd = forLevel(avx512VqPanelDecoder, avx2VqPanelDecoder, neonVqPanelDecoder);
    // VQ2R, VQ3R and VQ4P (four packed 6-bit stages): the vector level's forms.
    const bool vectorForm = m.packed6 ? m.stages == 4 : m.stages == 2 || m.stages == 3;
    if (simd && vectorForm && nr == P)
        simd(m, r0, scale, panel);
    else
        vqScalar(m, r0, scale, panel);
}

void decodeNativePanel(const NativeMatrix &m, int64_t r0, float *panel)
{
    const int64_t n = m.cols;
    // The vector levels' rows hold the same values (format/native_values.hpp), 8 or 16 at a time.
    if (n % 32 == 0) {
        NativeRowDecoder simd = nullptr;
        int64_t rowBytes = 0, scaleBytes = 0;
        if (m.fmt == format::kFmtMXFP4)
            simd = forLevel(avx512Mxfp4Row, avx2Mxfp4Row, neonMxfp4Row), rowBytes = n / 2,
            scaleBytes = n / format::kMxfp4Group;
        else if (m.fmt == format::kFmtINT4G32)
            simd = forLevel(avx512Int4g32Row, avx2Int4g32Row, neonInt4g32Row), rowBytes = n / 2,
            scaleBytes = n / format::kInt4Group * 2;
        else if (m.fmt == format::kFmtBF16)
            simd = forLevel(avx512Bf16Row, avx2Bf16Row, neonBf16Row), rowBytes = n * 2;
        else if (m.fmt == format::kFmtFP8B128)
            simd = forLevel(avx512Fp8b128Row, avx2Fp8b128Row, neonFp8b128Row), rowBytes = n;
        if (simd) {
            // FP8B128's scales are per 128 x 128 block: a row's are its row block's.
            const int64_t fp8ScaleRow = (n + format::kFp8Block - 1) / format::kFp8Block * 4;
            transposeRows(m.rows, n, r0, panel, [&](int64_t r, float *out) {
                const uint8_t *sc = !m.scales                        ? nullptr
                                    : m.fmt == format::kFmtFP8B128 ? m.scales + (r / format::kFp8Block) * fp8ScaleRow
                                                                     : m.scales + r * scaleBytes;
                simd(m.payload + r * rowBytes, sc, n, out);
            });
            return;
        }
    }
    switch (m.fmt) {
    case format::kFmtMXFP4:
        transposeRows(m.rows, n, r0, panel, [&](int64_t r, float *out) {
            const uint8_t *q = m.payload + r * (n / 2);
            const uint8_t *sc = m.scales + r * (n / format::kMxfp4Group);
            for (int64_t i = 0; i < n; ++i) {
                const uint8_t byte = q[i >> 1];
                out[i] = format::e2m1Value((i & 1) ? uint8_t(byte >> 4) : uint8_t(byte & 15)) *
                         format::e8m0Scale(sc[i / format::kMxfp4Group]);
            }
        });
        return;
    case format::kFmtFP8B128: {
        const std::array<float, 256> &e4m3 = format::e4m3Table();
        const int64_t blocksPerRow = (n + format::kFp8Block - 1) / format::kFp8Block;
        transposeRows(m.rows, n, r0, panel, [&](int64_t r, float *out) {
            const uint8_t *q = m.payload + r * n;
            const uint8_t *sc = m.scales + (r / format::kFp8Block) * blocksPerRow * 4;
            for (int64_t i = 0; i < n; ++i)
                out[i] = e4m3[q[i]] * format::loadF32(sc + 4 * (i / format::kFp8Block));
        });
        return;
    }
    case format::kFmtINT4G32:
        transposeRows(m.rows, n, r0, panel, [&](int64_t r, float *out) {
            const uint8_t *q = m.payload + r * (n / 2);
            const uint8_t *sc = m.scales + r * (n / format::kInt4Group) * 2;
            for (int64_t i = 0; i < n; ++i) {
                const uint8_t byte = q[i >> 1];
                out[i] = float(((i & 1) ? (byte >> 4) : (byte & 15)) - 8) *
                         format::bf16Value(sc + 2 * (i / format::kInt4Group));
            }
        });
        return;
    case format::kFmtBF16:
        transposeRows(m.rows, n, r0, panel, [&](int64_t r, float *out) {
            const uint8_t *w = m.payload + r * n * 2;
            for (int64_t i = 0; i < n; ++i)
                out[i] = format::bf16Value(w + 2 * i);
        });
        return;
    }
    throw Error(ErrorCode::Unsupported, "expert format id " + std::to_string(m.fmt) + " is not a native format");
}

void decodeTrunkPanel(const format::TrunkTensor &w, int64_t r0, float *panel)
{
    using format::TrunkFormat;
    const int64_t n = w.cols;
    if (!w.f32.empty()) {
        transposeRows(w.rows, n, r0, panel,
                      [&](int64_t r, float *out) { std::memcpy(out, w.f32.data() + r * n, size_t(n) * 4); });
        return;
    }
    // Grouped rows: each value times its group's scale; `value(q, i)` reads weight i of a row.
    // The vector levels compute the same products, 8 or 16 at a time.
    if (const GroupedRowDecoder simd = groupedRowDecoder(w)) {
        transposeRows(w.rows, n, r0, panel, [&](int64_t r, float *out) {
            simd(w.payload.data() + r * w.rowBytes, w.scales.data() + r * w.groups, n, w.group, out);
        });
        return;
    }
    const auto grouped = [&](auto value) {
        transposeRows(w.rows, n, r0, panel, [&](int64_t r, float *out) {
            const uint8_t *q = w.payload.data() + r * w.rowBytes;
            const float *sc = w.scales.data() + r * w.groups;
            for (int64_t g = 0, i0 = 0; i0 < n; ++g, i0 += w.group) {
                const int64_t i1 = std::min(n, i0 + w.group);
                const float s = sc[g];
                for (int64_t i = i0; i < i1; ++i)
                    out[i] = value(q, i) * s;
            }
        });
    };
    if (!w.onDisk && w.format == TrunkFormat::Q4G) {
        grouped([](const uint8_t *q, int64_t i) {
            return float(((i & 1) ? (q[i >> 1] >> 4) : (q[i >> 1] & 0x0f)) - 8);
        });
        return;
    }
    if (!w.onDisk && w.format == TrunkFormat::Q8G) {
        grouped([](const uint8_t *q, int64_t i) { return float(int8_t(q[i])); });
        return;
    }
    // Q3G, rows on disk: the tensor's own row decoder (q * scale in f32).
    transposeRows(w.rows, n, r0, panel, [&](int64_t r, float *out) { w.readRow(r, out); });
}

} // namespace waste::quant
