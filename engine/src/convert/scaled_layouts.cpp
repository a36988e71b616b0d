#include "convert/scaled_layouts.hpp"

#include "format/bytes.hpp"
#include "format/f16.hpp"
#include "format/native_record.hpp"
#include "format/native_values.hpp"

#include <waste/waste.hpp>

#include <cstring>

namespace waste::convert {

namespace {

const int64_t kRecordBlock = format::kFp8Block;

// Every record block [k*R, (k+1)*R) of a dimension lies inside one source block of b.
bool blocksNest(int64_t dim, int64_t b, int64_t R) { return b % R == 0 || b >= dim; }

void requireExact(const SourceTensor &t) {
    std::string why;
    if (!exactNativeFormat(t, &why))
        throw Error(ErrorCode::Unsupported, "'" + t.name + "' is " + scaledLayoutText(t) + ": " + why);
}

} // namespace

std::string scaledLayoutText(const SourceTensor &t) {
    const int64_t rows = t.rows(), cols = t.rowLength();
    if (t.dtype == DType::INT4Grouped)
        return "INT4 with one scale per " + std::to_string(t.blockCols) + " inputs";
    if (t.dtype != DType::FP8Scaled) return dtypeName(t.dtype);
    if (t.blockRows >= rows && t.blockCols >= cols) return "FP8 e4m3 with one scale per tensor";
    if (t.blockRows == 1 && t.blockCols >= cols) return "FP8 e4m3 with one scale per row";
    return "FP8 e4m3 with one scale per " + std::to_string(t.blockRows) + "x" + std::to_string(t.blockCols) + " block";
}

uint8_t exactNativeFormat(const SourceTensor &t, std::string *why) {
    const int64_t rows = t.rows(), cols = t.rowLength();
    if (t.dtype == DType::FP8Scaled) {
        if (blocksNest(rows, t.blockRows, kRecordBlock) && blocksNest(cols, t.blockCols, kRecordBlock)) return format::kFmtFP8B128;
        if (why)
            *why = "FP8B128 records keep one scale per 128x128 block, and this tensor's blocks change scale inside one, "
                   "so its values cannot be kept exactly";
        return 0;
    }
    if (t.dtype == DType::INT4Grouped) {
        if (cols % format::kInt4Group == 0 && blocksNest(cols, t.blockCols, format::kInt4Group)) return format::kFmtINT4G32;
        if (why)
            *why = "INT4G32 records keep one scale per 32 inputs, and groups of " + std::to_string(t.blockCols) +
                   " do not tile them, so its values cannot be kept exactly";
        return 0;
    }
    if (why) *why = "not a scaled FP8 or grouped INT4 layout";
    return 0;
}

void scalesToF32(DType stored, const uint8_t *b, int64_t n, float *out) {
    for (int64_t i = 0; i < n; ++i) {
        if (stored == DType::F32) out[i] = format::loadF32(b + 4 * i);
        else if (stored == DType::F8E8M0) out[i] = format::e8m0Scale(b[i]); // 2^(e-127), DeepSeek V4's ue8m0
        else if (stored == DType::BF16) out[i] = format::bf16Value(b + 2 * i);
        else out[i] = format::f16ToFloat(format::loadU16(b + 2 * i));
    }
}

void decodeFp8ScaledRows(const SourceTensor &t, const uint8_t *qRows, const float *scales, int64_t row0, int64_t n,
                         float *out) {
    const int64_t cols = t.rowLength(), gridCols = blocksAlong(cols, t.blockCols);
    for (int64_t r = row0; r < row0 + n; ++r) {
        const float *rowScales = scales + (r / t.blockRows) * gridCols;
        for (int64_t c = 0; c < cols; ++c)
            out[(r - row0) * cols + c] = format::e4m3Value(qRows[(r - row0) * cols + c]) * rowScales[c / t.blockCols];
    }
}

void decodeInt4GroupedRow(const uint8_t *packed, const uint8_t *scales, int64_t cols, int64_t group, float *out) {
    for (int64_t i = 0; i < cols; ++i) {
        const uint8_t byte = packed[i >> 1];
        const int v = ((i & 1) ? (byte >> 4) : (byte & 15)) - 8;
        out[i] = float(v) * format::bf16Value(scales + 2 * (i / group));
    }
}

void fp8ScalesToBlock128(const SourceTensor &t, const float *scales, uint8_t *out) {
    requireExact(t);
    const int64_t rows = t.rows(), cols = t.rowLength();
    const int64_t gridCols = blocksAlong(cols, t.blockCols), outCols = blocksAlong(cols, kRecordBlock);
    for (int64_t i = 0; i < blocksAlong(rows, kRecordBlock); ++i)
        for (int64_t j = 0; j < outCols; ++j) {
            // The source block holding this record block's first weight holds all of it.
            const float s = scales[(i * kRecordBlock / t.blockRows) * gridCols + j * kRecordBlock / t.blockCols];
            uint32_t bits;
            std::memcpy(&bits, &s, 4);
            format::storeU32(out + (i * outCols + j) * 4, bits);
        }
}

void int4ScalesToGroup32(const SourceTensor &t, const uint8_t *scales, uint8_t *out) {
    requireExact(t);
    const int64_t rows = t.rows(), cols = t.rowLength(), G = format::kInt4Group;
    const int64_t inGroups = blocksAlong(cols, t.blockCols), outGroups = cols / G;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t g = 0; g < outGroups; ++g)
            std::memcpy(out + (r * outGroups + g) * 2, scales + (r * inGroups + g * G / t.blockCols) * 2, 2);
}

} // namespace waste::convert
