// Portable reference row kernels for native expert records, in the 16-lane order the
// header states; the SIMD sets reproduce it operation for operation.
#include "quant/native_rows.hpp"

#include "format/bytes.hpp"
#include "format/native_record.hpp"
#include "format/native_values.hpp"

#include <algorithm>
#include <array>

namespace waste::quant {
namespace {

constexpr int L = kNativeLanes;

// The lane sums of a row and their fixed reduction tree (the order native_rows.hpp states).
struct Lanes {
    float acc[L] = {};
    float s[L] = {};

    void startGroup() { std::fill(s, s + L, 0.0f); }
    void add(int64_t i, float w, float x) { s[i % L] = s[i % L] + w * x; }
    void endGroup(float scale)
    {
        for (int j = 0; j < L; ++j)
            acc[j] = acc[j] + scale * s[j];
    }
    float reduce() const
    {
        float r8[8], r4[4], r2[2];
        for (int j = 0; j < 8; ++j)
            r8[j] = acc[j] + acc[j + 8];
        for (int j = 0; j < 4; ++j)
            r4[j] = r8[j] + r8[j + 4];
        for (int j = 0; j < 2; ++j)
            r2[j] = r4[j] + r4[j + 2];
        return r2[0] + r2[1];
    }
};

float mxfp4(const uint8_t *packed, const uint8_t *scales, const float *x, int64_t n)
{
    Lanes l;
    for (int64_t b = 0; b * format::kMxfp4Group < n; ++b) {
        l.startGroup();
        for (int64_t i = b * format::kMxfp4Group; i < (b + 1) * format::kMxfp4Group; ++i) {
            const uint8_t byte = packed[i >> 1];
            l.add(i, format::e2m1Value((i & 1) ? uint8_t(byte >> 4) : uint8_t(byte & 15)), x[i]);
        }
        l.endGroup(format::e8m0Scale(scales[b]));
    }
    return l.reduce();
}

float fp8b128(const uint8_t *q, const uint8_t *blockScales, const float *x, int64_t n)
{
    const std::array<float, 256> &e4m3 = format::e4m3Table();
    Lanes l;
    for (int64_t b = 0, i0 = 0; i0 < n; ++b, i0 += format::kFp8Block) {
        const int64_t i1 = i0 + format::kFp8Block < n ? i0 + format::kFp8Block : n;
        l.startGroup();
        for (int64_t i = i0; i < i1; ++i)
            l.add(i, e4m3[q[i]], x[i]);
        l.endGroup(format::loadF32(blockScales + 4 * b));
    }
    return l.reduce();
}

float int4g32(const uint8_t *packed, const uint8_t *scales, const float *x, int64_t n)
{
    Lanes l;
    for (int64_t g = 0; g * format::kInt4Group < n; ++g) {
        l.startGroup();
        for (int64_t i = g * format::kInt4Group; i < (g + 1) * format::kInt4Group; ++i) {
            const uint8_t byte = packed[i >> 1];
            l.add(i, float(((i & 1) ? (byte >> 4) : (byte & 15)) - 8), x[i]);
        }
        l.endGroup(format::bf16Value(scales + 2 * g));
    }
    return l.reduce();
}

float bf16(const uint8_t *w, const float *x, int64_t n)
{
    Lanes l;
    for (int64_t i = 0; i < n; ++i)
        l.acc[i % L] = l.acc[i % L] + format::bf16Value(w + 2 * i) * x[i];
    return l.reduce();
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
