#include "quant/native_matvec.hpp"

#include "quant/mxfp4_q8.hpp"
#include "quant/native_rows.hpp"
#include "waste/waste.hpp"

namespace waste::quant {

NativeMatrix nativeMatrix(uint8_t fmt, const uint8_t *record, const format::NativeLayout &l, int which, int64_t inter,
                          int64_t width)
{
    NativeMatrix m;
    m.fmt = fmt;
    m.payload = record + l.payloadOff[which];
    m.scales = record + l.scaleOff[which];
    m.rows = which < 2 ? inter : width;
    m.cols = which < 2 ? width : inter;
    return m;
}

void nativeMatRows(const NativeMatrix &m, const float *x, int64_t r0, int64_t r1, float *y)
{
    const NativeRowKernels &k = nativeRows();
    const int64_t n = m.cols;
    switch (m.fmt) {
    case format::kFmtMXFP4:
        for (int64_t r = r0; r < r1; ++r)
            y[r] = k.mxfp4(m.payload + r * (n / 2), m.scales + r * (n / format::kMxfp4Group), x, n);
        return;
    case format::kFmtFP8B128: {
        // One f32 per 128x128 block, row-major over [ceil(rows/128), ceil(cols/128)]:
        // a row uses the block row it falls in.
        const int64_t blocksPerRow = (n + format::kFp8Block - 1) / format::kFp8Block;
        for (int64_t r = r0; r < r1; ++r)
            y[r] = k.fp8b128(m.payload + r * n, m.scales + (r / format::kFp8Block) * blocksPerRow * 4, x, n);
        return;
    }
    case format::kFmtINT4G32:
        for (int64_t r = r0; r < r1; ++r)
            y[r] = k.int4g32(m.payload + r * (n / 2), m.scales + r * (n / format::kInt4Group) * 2, x, n);
        return;
    case format::kFmtBF16:
        for (int64_t r = r0; r < r1; ++r)
            y[r] = k.bf16(m.payload + r * n * 2, x, n);
        return;
    }
    throw Error(ErrorCode::Unsupported, "expert format id " + std::to_string(m.fmt) + " is not a native format");
}

void nativeMatRowsQ8(const NativeMatrix &m, const int8_t *q, const float *d, int64_t r0, int64_t r1, float *y)
{
    if (m.fmt != format::kFmtMXFP4)
        throw Error(ErrorCode::Unsupported, "int8 activations are for MXFP4 experts only");
    const Mxfp4Q8Row row = mxfp4Q8();
    const int64_t n = m.cols;
    for (int64_t r = r0; r < r1; ++r)
        y[r] = row(m.payload + r * (n / 2), m.scales + r * (n / format::kMxfp4Group), q, d, n);
}

} // namespace waste::quant
