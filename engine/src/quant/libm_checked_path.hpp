// A vector path that copies one C library function (quant/exp_run, quant/log1p_run) is used
// only where it gives this C library's bits: checked once per level, at first use, on the
// inputs that tell the copied algorithm and build from others, then on every 65,537th bit
// pattern (65,536 of them: every sign, exponent and NaN).
#pragma once

#include "quant/simd.hpp"

#include <bit>
#include <cstdint>
#include <span>

namespace waste::quant {

using FloatRun = void (*)(const float *x, float *y, int64_t n);

template <typename Libm>
bool runMatchesLibm(FloatRun run, std::span<const uint32_t> telling, Libm libm)
{
    float x[64], y[64];
    int n = 0;
    auto flush = [&]() {
        run(x, y, n);
        for (int i = 0; i < n; ++i)
            if (std::bit_cast<uint32_t>(y[i]) != std::bit_cast<uint32_t>(libm(x[i])))
                return false;
        n = 0;
        return true;
    };
    for (uint32_t b : telling) {
        x[n++] = std::bit_cast<float>(b);
        if (n == 64 && !flush())
            return false;
    }
    if (!flush())
        return false;
    for (uint64_t b = 0; b < (uint64_t(1) << 32); b += 65537) {
        x[n++] = std::bit_cast<float>(uint32_t(b));
        if (n == 64 && !flush())
            return false;
    }
    return flush();
}

// `run` where it is compiled, this CPU has `level` and it matches; else nullptr.
template <typename Libm>
FloatRun checkedRun(FloatRun run, SimdLevel level, std::span<const uint32_t> telling, Libm libm)
{
    return run && simdSupported(level) && runMatchesLibm(run, telling, libm) ? run : nullptr;
}

// The active level's checked path (AVX-512 falls back to AVX2's), nullptr where none.
inline FloatRun activeRun(FloatRun avx2, FloatRun avx512)
{
    switch (activeSimd()) {
    case SimdLevel::Avx512: return avx512 ? avx512 : avx2;
    case SimdLevel::Avx2: return avx2;
    default: return nullptr;
    }
}

} // namespace waste::quant
