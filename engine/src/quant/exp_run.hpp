// e^x over a run of floats, bit for bit what std::exp(float) gives each value here, several
// values at a time where this CPU and its C library allow it. The linear attentions' gates,
// their short convolutions' SiLU and every SwiGLU call exp once or more per channel and
// token: in a prompt's pass that was 200 million calls of the C library's expf on the
// mid-size container, each paying a call and blocking the loop around it from vectorising.
//
// The vector paths (quant/exp_run_x86.cpp, AVX2 and AVX-512) are glibc's expf (sysdeps/ieee754/flt-32/e_expf.c:
// a 2^(k/32) table and a cubic, in double, rounded once to float) with the fused
// multiply-adds its x86-64 FMA build uses; glibc runs that build wherever AVX2 and FMA are
// usable, which is every CPU our AVX2 and AVX-512 levels run on. Whether this C library's
// expf is that one is checked once, at first use, on values where the algorithm's rounding
// differs from a correctly rounded exp or from a build without fused multiply-adds; where it
// is not (another C library, another build), every value goes through std::exp, so the
// results never depend on the path. tst_exp_run compares every float.
#pragma once

#include <cstdint>

namespace waste::quant {

// y[i] = std::exp(x[i]) for i < n; y may be x.
void expRun(const float *x, float *y, int64_t n);

// The vector paths themselves (nullptr where not compiled), without the check: for tests.
using ExpRun = void (*)(const float *x, float *y, int64_t n);
ExpRun avx2ExpRun();
ExpRun avx512ExpRun();

// Whether expRun takes the vector path on this machine (the CPU, the active SIMD level
// and the check above).
bool expRunVectorised();

} // namespace waste::quant
