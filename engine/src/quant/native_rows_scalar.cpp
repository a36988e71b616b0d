// Portable reference row kernels for native expert records: the summation order the
// header states (an inner sum per scale group, then the scaled group sums in order).
#include "quant/native_rows.hpp"

#include "format/bytes.hpp"
#include "format/native_record.hpp"
#include "format/native_values.hpp"

namespace waste::quant {
namespace {

float mxfp4(const uint8_t *packed, const uint8_t *scales, const float *x, int64_t n)
{
    float acc = 0.0f;
    for (int64_t b = 0; b * format::kMxfp4Group < n; ++b) {
        float inner = 0.0f;
        for (int64_t i = b * format::kMxfp4Group; i < (b + 1) * format::kMxfp4Group; ++i) {
            const uint8_t byte = packed[i >> 1];
            inner += format::e2m1Value((i & 1) ? uint8_t(byte >> 4) : uint8_t(byte & 15)) * x[i];
        }
        acc += format::e8m0Scale(scales[b]) * inner;
    }
    return acc;
}

float fp8b128(const uint8_t *q, const uint8_t *blockScales, const float *x, int64_t n)
{
    float acc = 0.0f;
    for (int64_t b = 0, i0 = 0; i0 < n; ++b, i0 += format::kFp8Block) {
        const int64_t i1 = i0 + format::kFp8Block < n ? i0 + format::kFp8Block : n;
        float inner = 0.0f;
        for (int64_t i = i0; i < i1; ++i)
            inner += format::e4m3Value(q[i]) * x[i];
        acc += format::loadF32(blockScales + 4 * b) * inner;
    }
    return acc;
}

float int4g32(const uint8_t *packed, const uint8_t *scales, const float *x, int64_t n)
{
    float acc = 0.0f;
    for (int64_t g = 0; g * format::kInt4Group < n; ++g) {
        float inner = 0.0f;
        for (int64_t i = g * format::kInt4Group; i < (g + 1) * format::kInt4Group; ++i) {
            const uint8_t byte = packed[i >> 1];
            const int v = ((i & 1) ? (byte >> 4) : (byte & 15)) - 8;
            inner += float(v) * x[i];
        }
        acc += format::bf16Value(scales + 2 * g) * inner;
    }
    return acc;
}

float bf16(const uint8_t *w, const float *x, int64_t n)
{
    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i)
        s += format::bf16Value(w + 2 * i) * x[i];
    return s;
}

const NativeRowKernels kScalar{mxfp4, fp8b128, int4g32, bf16};

// A SIMD set may leave an entry empty until it has one; the scalar kernel serves then.
NativeRowKernels withFallback(const NativeRowKernels &k)
{
    return {k.mxfp4 ? k.mxfp4 : kScalar.mxfp4, k.fp8b128 ? k.fp8b128 : kScalar.fp8b128,
            k.int4g32 ? k.int4g32 : kScalar.int4g32, k.bf16 ? k.bf16 : kScalar.bf16};
}

} // namespace

const NativeRowKernels &scalarNativeRows() { return kScalar; }

const NativeRowKernels &nativeRowsFor(SimdLevel lvl)
{
    if (lvl == SimdLevel::Avx512 && avx512NativeRows()) {
        static const NativeRowKernels k = withFallback(*avx512NativeRows());
        return k;
    }
    if (lvl == SimdLevel::Avx2 && avx2NativeRows()) {
        static const NativeRowKernels k = withFallback(*avx2NativeRows());
        return k;
    }
    if (lvl == SimdLevel::Neon && neonNativeRows()) {
        static const NativeRowKernels k = withFallback(*neonNativeRows());
        return k;
    }
    return kScalar;
}

const NativeRowKernels &nativeRows() { return nativeRowsFor(activeSimd()); }

} // namespace waste::quant
