// AVX-512 (F/BW/VL) kernels, compiled per function and chosen at run time.
#include "quant/simd.hpp"

#if defined(__x86_64__)
// GCC 12 flags its own AVX-512 reduction intrinsics (_mm512_undefined_*) as uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "quant/nibble_lanes_avx512.hpp"

#define WASTE_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))

namespace waste::quant {
namespace {

WASTE_AVX512 float dotF32(const float *a, const float *b, int64_t n)
{
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
    }
    for (; i + 16 <= n; i += 16)
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
    if (i < n) {
        const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1u);
        s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), s1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

WASTE_AVX512 float rowQ8(const uint8_t *q, const float *scale, const float *x, int64_t n, int64_t g)
{
    float acc = 0.0f;
    for (int64_t k = 0, i0 = 0; i0 < n; ++k, i0 += g) {
        const int64_t i1 = i0 + g < n ? i0 + g : n;
        __m512 s = _mm512_setzero_ps();
        int64_t i = i0;
        for (; i + 16 <= i1; i += 16) {
            const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(q + i));
            s = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b)), _mm512_loadu_ps(x + i), s);
        }
        if (i < i1) {
            const __mmask16 m = static_cast<__mmask16>((1u << (i1 - i)) - 1u);
            const __m128i b = _mm_maskz_loadu_epi8(m, q + i);
            s = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b)), _mm512_maskz_loadu_ps(m, x + i), s);
        }
        acc += scale[k] * _mm512_reduce_add_ps(s);
    }
    return acc;
}

// 16 4-bit weights (8 bytes, low nibble first) as floats, each nibble minus 8: the codes in
// lanes (quant/nibble_lanes_avx512.hpp), then a lookup in a table of the 16 values, where
// unpacking the bytes and widening took eight operations. The same values in the same
// lanes, so every sum is what it was.
WASTE_AVX512 inline __m512 q4Weights16(const uint8_t *p)
{
    const __m512 values = _mm512_setr_ps(-8.0f, -7.0f, -6.0f, -5.0f, -4.0f, -3.0f, -2.0f, -1.0f, //
                                         0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f);
    const __m512i words = _mm512_castsi128_si512(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(p)));
    return _mm512_permutexvar_ps(nibbleLanes(words, 0), values);
}

WASTE_AVX512 float rowQ4(const uint8_t *q, const float *scale, const float *x, int64_t n, int64_t g)
{
    float acc = 0.0f;
    for (int64_t k = 0, i0 = 0; i0 < n; ++k, i0 += g) {
        const int64_t i1 = i0 + g < n ? i0 + g : n;
        __m512 s = _mm512_setzero_ps();
        int64_t i = i0;
        if ((i0 & 1) == 0) {
            for (; i + 16 <= i1; i += 16)
                s = _mm512_fmadd_ps(q4Weights16(q + (i >> 1)), _mm512_loadu_ps(x + i), s);
        }
        float inner = _mm512_reduce_add_ps(s);
        for (; i < i1; ++i) {
            const uint8_t b = q[i >> 1];
            inner += static_cast<float>(((i & 1) ? (b >> 4) : (b & 0x0f)) - 8) * x[i];
        }
        acc += scale[k] * inner;
    }
    return acc;
}

// rowQ4 for M inputs at once: the same instructions per input in the same order, with the
// nibbles unpacked once per 16 weights instead of once per input.
template <int M>
WASTE_AVX512 void rowQ4Block(const uint8_t *q, const float *scale, const float *const *x, int64_t n, int64_t g, float *acc)
{
    // The loops over the inputs are unrolled, so the accumulators stay in registers (not
    // unrolled, they went through the stack at every step).
    const float *xj[M];
#pragma GCC unroll 4
    for (int j = 0; j < M; ++j) {
        acc[j] = 0.0f;
        xj[j] = x[j];
    }
    for (int64_t k = 0, i0 = 0; i0 < n; ++k, i0 += g) {
        const int64_t i1 = i0 + g < n ? i0 + g : n;
        __m512 s[M];
#pragma GCC unroll 4
        for (int j = 0; j < M; ++j)
            s[j] = _mm512_setzero_ps();
        int64_t i = i0;
        if ((i0 & 1) == 0) {
            for (; i + 16 <= i1; i += 16) {
                const __m512 w = q4Weights16(q + (i >> 1));
#pragma GCC unroll 4
                for (int j = 0; j < M; ++j)
                    s[j] = _mm512_fmadd_ps(w, _mm512_loadu_ps(xj[j] + i), s[j]);
            }
        }
#pragma GCC unroll 4
        for (int j = 0; j < M; ++j) {
            float inner = _mm512_reduce_add_ps(s[j]);
            for (int64_t t = i; t < i1; ++t) {
                const uint8_t b = q[t >> 1];
                inner += static_cast<float>(((t & 1) ? (b >> 4) : (b & 0x0f)) - 8) * xj[j][t];
            }
            acc[j] += scale[k] * inner;
        }
    }
}

WASTE_AVX512 void rowQ4Many(const uint8_t *q, const float *scale, const float *x, int64_t xStride, int64_t count,
                            int64_t n, int64_t g, float *y, int64_t yStride)
{
    for (int64_t j0 = 0; j0 < count; j0 += 4) {
        const float *xs[4] = {};
        float acc[4] = {};
        const int m = count - j0 < 4 ? int(count - j0) : 4;
        for (int j = 0; j < m; ++j)
            xs[j] = x + (j0 + j) * xStride;
        switch (m) {
        case 4: rowQ4Block<4>(q, scale, xs, n, g, acc); break;
        case 3: rowQ4Block<3>(q, scale, xs, n, g, acc); break;
        case 2: rowQ4Block<2>(q, scale, xs, n, g, acc); break;
        default: rowQ4Block<1>(q, scale, xs, n, g, acc); break;
        }
        for (int j = 0; j < m; ++j)
            y[(j0 + j) * yStride] = acc[j];
    }
}

WASTE_AVX512 void lutRow(const float *x8, const float *bookT, int paddedEntries, float *out)
{
    __m512 xd[8];
    for (int d = 0; d < 8; ++d)
        xd[d] = _mm512_set1_ps(x8[d]);
    for (int c = 0; c < paddedEntries; c += 16) {
        const float *blk = bookT + (c / 16) * 128;
        __m512 a = _mm512_mul_ps(xd[0], _mm512_loadu_ps(blk));
        for (int d = 1; d < 8; ++d)
            a = _mm512_fmadd_ps(xd[d], _mm512_loadu_ps(blk + d * 16), a);
        _mm512_storeu_ps(out + c, a);
    }
}

const Kernels kAvx512{dotF32, rowQ8, rowQ4, lutRow, rowQ4Many};

} // namespace

const Kernels *avx512Kernels() { return &kAvx512; }

} // namespace waste::quant

#else
namespace waste::quant {
const Kernels *avx512Kernels() { return nullptr; }
} // namespace waste::quant
#endif
