// Products with the matrices of a native expert record (format/native_record.hpp): where
// row r of each format lies in the record, and rows [r0, r1) of y = W x through the
// active level's row kernels (native_rows.hpp). A row's value depends on that row alone,
// so any split of the rows over threads gives the same y bit for bit.
#pragma once

#include "format/native_record.hpp"

#include <cstdint>

namespace waste::quant {

// One [rows, cols] matrix of a record: its payload and scales as the release stores them.
struct NativeMatrix {
    uint8_t fmt = 0;
    const uint8_t *payload = nullptr;
    const uint8_t *scales = nullptr;
    int64_t rows = 0, cols = 0;
};

// Matrix `which` (0 gate [inter, width], 1 up [inter, width], 2 down [width, inter]) of
// `record`, laid out as `l` (nativeRecordLayout(fmt, inter, width)).
NativeMatrix nativeMatrix(uint8_t fmt, const uint8_t *record, const format::NativeLayout &l, int which, int64_t inter,
                          int64_t width);

// y[r] = row r of m times x (m.cols inputs), for r in [r0, r1).
void nativeMatRows(const NativeMatrix &m, const float *x, int64_t r0, int64_t r1, float *y);

// The same for an MXFP4 matrix with its input quantised by quantizeQ8 (mxfp4_q8.hpp):
// q (m.cols codes) and d (m.cols / 32 steps).
void nativeMatRowsQ8(const NativeMatrix &m, const int8_t *q, const float *d, int64_t r0, int64_t r1, float *y);

} // namespace waste::quant
