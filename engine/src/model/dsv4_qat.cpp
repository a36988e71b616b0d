#include "model/dsv4_qat.hpp"

#include <algorithm>
#include <cmath>

namespace waste::model {
namespace {

// 2^⌈log2(s)⌉ for s > 0, exactly (frexp: s = m·2^e with m in [0.5, 1)).
float powerOfTwoAbove(float s)
{
    int e = 0;
    const float m = std::frexp(s, &e);
    return std::ldexp(1.0f, m == 0.5f ? e - 1 : e);
}

template <typename Round>
void roundTrip(float *x, int64_t n, int64_t block, float qmax, float floor, Round round)
{
    for (int64_t b0 = 0; b0 < n; b0 += block) {
        const int64_t b1 = std::min(n, b0 + block);
        float amax = 0.0f;
        for (int64_t i = b0; i < b1; ++i)
            amax = std::max(amax, std::fabs(x[i]));
        const float scale = powerOfTwoAbove(std::max(amax, floor) / qmax);
        for (int64_t i = b0; i < b1; ++i)
            x[i] = round(std::clamp(x[i] / scale, -qmax, qmax)) * scale; // both exact: scale is 2^k
    }
}

} // namespace

float roundE4m3(float x)
{
    const float a = std::fabs(x);
    if (a == 0.0f)
        return x;
    int e = 0;
    std::frexp(a, &e); // a = m·2^e, m in [0.5, 1): the binade's exponent is e − 1
    const float step = e - 1 < -6 ? std::ldexp(1.0f, -9) : std::ldexp(1.0f, e - 1 - 3); // 3 mantissa bits
    const float q = std::min(std::nearbyint(a / step) * step, 448.0f);                 // ties to the even code
    return std::copysign(q, x);
}

float roundE2m1(float x)
{
    const float a = std::min(std::fabs(x), 6.0f);
    const float step = a < 2.0f ? 0.5f : a < 4.0f ? 1.0f : 2.0f; // {0, .5, 1, 1.5}, {2, 3}, {4, 6}
    const float q = std::min(std::nearbyint(a / step) * step, 6.0f);
    return std::copysign(q, x);
}

void fp8RoundTrip(float *x, int64_t n, int64_t block) { roundTrip(x, n, block, 448.0f, 1e-4f, roundE4m3); }

void fp4RoundTrip(float *x, int64_t n, int64_t block)
{
    roundTrip(x, n, block, 6.0f, 6.0f * std::ldexp(1.0f, -126), roundE2m1);
}

void hadamard(float *x, int64_t n)
{
    for (int64_t h = 1; h < n; h *= 2)
        for (int64_t i = 0; i < n; i += 2 * h)
            for (int64_t j = i; j < i + h; ++j) {
                const float a = x[j], b = x[j + h];
                x[j] = a + b;
                x[j + h] = a - b;
            }
    const float s = 1.0f / std::sqrt(float(n));
    for (int64_t i = 0; i < n; ++i)
        x[i] *= s;
}

} // namespace waste::model
