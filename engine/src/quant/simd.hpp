// Run-time choice of SIMD kernels (AVX-512, AVX2 on x86-64; NEON on aarch64; scalar
// anywhere). The x86 sets are compiled with per-function target attributes, so the library
// runs on any x86-64 CPU; NEON is part of the aarch64 base ISA, so its set is compiled
// wherever the target is aarch64 and chosen like the others.
#pragma once

#include <cstdint>

namespace waste::quant {

enum class SimdLevel { Scalar, Avx2, Avx512, Neon };

struct Kernels {
    // Σ a[i]*b[i] over n floats.
    float (*dotF32)(const float *a, const float *b, int64_t n);
    // Grouped rows: Σ_k scale[k] * (Σ_{i in group k} q_i * x_i), n inputs, group size g.
    float (*rowQ8)(const uint8_t *q, const float *scale, const float *x, int64_t n, int64_t g);
    float (*rowQ4)(const uint8_t *q, const float *scale, const float *x, int64_t n, int64_t g);
    // Table row for one 8-input vector: out[c] = Σ_d x8[d] * Cb[c][d] for c < padded entries,
    // from the book transposed in blocks of 16 entries ([c/16][d][16]).
    void (*lutRow)(const float *x8, const float *bookT, int paddedEntries, float *out);
    // rowQ4 of one row for `count` inputs (x + j*xStride -> y[j*yStride]): each 4-bit weight
    // is decoded once for all of them (a batched step's trunk rows serve every sequence),
    // and each input's sum runs exactly as rowQ4's, so every result equals rowQ4's bit for
    // bit. nullptr where the set has none (callers then call rowQ4 per input).
    void (*rowQ4Many)(const uint8_t *q, const float *scale, const float *x, int64_t xStride, int64_t count, int64_t n,
                      int64_t g, float *y, int64_t yStride);
};

SimdLevel detectSimd();            // best level this CPU (and OS) supports
bool simdSupported(SimdLevel lvl); // whether this CPU runs that level (scalar: always)
SimdLevel activeSimd();            // level in use: the detected one, or what WASTE_BACKEND asks
// WASTE_BACKEND's value as a level on a CPU whose best is `best`: "cpu" the scalar kernels
// (bisecting numerics), "avx2" the AVX2 set on an AVX-512 CPU (its kernels and its
// calibration, as a machine without AVX-512 would run), "avx512" or unset the best. A level
// the CPU lacks, or a name it does not know, gives `best`.
SimdLevel backendLevel(const char *value, SimdLevel best);
// Tests and benchmarks. A level this CPU lacks falls back: AVX-512 to AVX2 where that runs,
// anything else to scalar.
void setActiveSimd(SimdLevel lvl);
const char *simdName(SimdLevel lvl);
const Kernels &kernels();                // active set
const Kernels &kernelsFor(SimdLevel lvl); // a specific set (must be supported)

// The per-ISA sets (defined in kernels_*.cpp).
const Kernels &scalarKernels();
const Kernels *avx2Kernels();   // nullptr where not compiled
const Kernels *avx512Kernels(); // nullptr where not compiled
const Kernels *neonKernels();   // nullptr where not compiled (any target but aarch64)

} // namespace waste::quant
