// 4-bit codes (packed two to a byte, low nibble first) spread to AVX-512 lanes, for the row
// kernels that look them up in a 16-entry table (native MXFP4 and INT4 rows, the trunk's
// 4-bit rows). Code i sits at bits 4(i mod 8) of the little-endian 32-bit word i / 8, so
// lane j takes word firstWord + j / 8 shifted right by 4 (j mod 8): one word permute and one
// per-lane shift per 16 codes, where unpacking bytes and widening took four to eight
// operations. The bits above each code are left in place: _mm512_permutexvar_ps, the lookup
// that follows, reads only the low 4 bits of each lane. x86-64 only; include it from files
// compiled with AVX-512F allowed for the calling functions.
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>

namespace waste::quant {

// Codes 8 * firstWord .. 8 * firstWord + 15 of the words in the low lanes of `words`.
__attribute__((target("avx512f"))) inline __m512i nibbleLanes(__m512i words, int firstWord)
{
    const __m512i word = _mm512_add_epi32(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),
                                          _mm512_set1_epi32(firstWord));
    const __m512i shifts = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28);
    return _mm512_srlv_epi32(_mm512_permutexvar_epi32(word, words), shifts);
}

} // namespace waste::quant
#endif
