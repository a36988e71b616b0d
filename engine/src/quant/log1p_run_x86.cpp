// glibc's log1pf (quant/log1p_run.hpp) L values at a time over GCC's generic vectors: 16 with
// AVX-512, 8 with AVX2. Every path of the scalar function is computed in every lane and each
// lane keeps its own; each operation is the scalar one's, in float, in its order (this file is
// compiled without contraction into fused multiply-adds).
#include "quant/log1p_run.hpp"

#if defined(__x86_64__)
#include <cmath>
#include <cstring>

namespace waste::quant {
namespace {

constexpr float kLn2Hi = 6.9313812256e-01f, kLn2Lo = 9.0580006145e-06f;
constexpr float kLp1 = 6.6666668653e-01f, kLp2 = 4.0000000596e-01f, kLp3 = 2.8571429849e-01f,
                kLp4 = 2.2222198546e-01f, kLp5 = 1.8183572590e-01f, kLp6 = 1.5313838422e-01f,
                kLp7 = 1.4798198640e-01f;

#pragma GCC push_options
#pragma GCC target("avx2")
namespace avx2 {
#include "quant/log1p_lanes.inc"
} // namespace avx2
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512bw")
namespace avx512 {
#include "quant/log1p_lanes.inc"
} // namespace avx512
#pragma GCC pop_options

__attribute__((target("avx2"))) void log1pRunAvx2(const float *x, float *y, int64_t n)
{
    avx2::log1pRunLanes<8>(x, y, n);
}

__attribute__((target("avx512f,avx512vl,avx512bw"))) void log1pRunAvx512(const float *x, float *y, int64_t n)
{
    avx512::log1pRunLanes<16>(x, y, n);
}
} // namespace

Log1pRun avx2Log1pRun() { return log1pRunAvx2; }
Log1pRun avx512Log1pRun() { return log1pRunAvx512; }

} // namespace waste::quant

#else
namespace waste::quant {
Log1pRun avx2Log1pRun() { return nullptr; }
Log1pRun avx512Log1pRun() { return nullptr; }
} // namespace waste::quant
#endif
