// log(1 + x) over a run of floats, bit for bit what std::log1p(float) gives each value here,
// sixteen (AVX-512) or eight (AVX2) values at a time where this C library's log1pf is the one
// the vector path follows. Softplus takes it once per channel and token of every KDA layer's
// decay gate (log1p(e^z)): in a prompt's pass that was a third of the heads' own work, each
// value a call of the C library.
//
// The vector paths (quant/log1p_run_x86.cpp) are glibc's log1pf (sysdeps/ieee754/flt-32/
// s_log1pf.c, fdlibm's: a reduction to f in [√2/2 − 1, √2 − 1] and k·ln 2, then a degree-7
// polynomial in s = f / (2 + f)), every branch computed for every value and the right one kept,
// all in float with no fused multiply-add, as glibc's x86-64 build computes it. Values off its
// main paths (x ≤ −1, x ≥ 2^53, not finite) go to std::log1p one by one. Whether this C
// library's log1pf is that one is checked once, at first use (the telling inputs: where the
// algorithm differs from a correctly rounded log1p); where it is not, every value goes through
// std::log1p, so the results never depend on the path. tst_exp_run compares a seventh of all
// floats.
#pragma once

#include <cstdint>

namespace waste::quant {

// y[i] = std::log1p(x[i]) for i < n; y may be x.
void log1pRun(const float *x, float *y, int64_t n);

// The vector paths themselves (nullptr where not compiled), without the check: for tests.
using Log1pRun = void (*)(const float *x, float *y, int64_t n);
Log1pRun avx2Log1pRun();
Log1pRun avx512Log1pRun();

// Whether log1pRun takes the vector path on this machine.
bool log1pRunVectorised();

} // namespace waste::quant
