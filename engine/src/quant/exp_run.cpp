// expRun: the vector path where it gives std::exp's bits, std::exp otherwise (quant/exp_run.hpp).
#include "quant/exp_run.hpp"

#include "quant/simd.hpp"

#include <bit>
#include <cmath>

namespace waste::quant {
namespace {

// Inputs where glibc's expf, as its FMA build computes it, is not what a build without fused
// multiply-adds gives (the first two: the only two among all floats) or not the correctly
// rounded e^x (the rest, of 170,554): a C library whose expf is another algorithm or another
// build differs on some of them.
constexpr uint32_t kTellingInputs[] = {0x4202422f, 0xc27c65d9, 0x39312c2b, 0x3967297a, 0x39a46167, 0x39d0ad5e,
                                       0x39d96c75, 0x39e48b3f, 0x39eb8a74, 0x39f8c8e3, 0x37ff7f01, 0x398c732f,
                                       0x39a4d15e, 0x39dfbbc7, 0x39e6faf9, 0x39f9f8be, 0x3a081af4, 0x3a1051d4};

// The telling inputs and every 65,537th bit pattern (65,536 of them: every sign, exponent and NaN).
bool vectorMatchesLibm(ExpRun run)
{
    float x[64], y[64];
    int n = 0;
    auto flush = [&]() {
        run(x, y, n);
        for (int i = 0; i < n; ++i)
            if (std::bit_cast<uint32_t>(y[i]) != std::bit_cast<uint32_t>(std::exp(x[i])))
                return false;
        n = 0;
        return true;
    };
    for (uint32_t b : kTellingInputs)
        x[n++] = std::bit_cast<float>(b);
    if (!flush())
        return false;
    for (uint64_t b = 0; b < (uint64_t(1) << 32); b += 65537) {
        x[n++] = std::bit_cast<float>(uint32_t(b));
        if (n == 64 && !flush())
            return false;
    }
    return flush();
}

// The active level's vector path where it gives this C library's bits, else nullptr.
ExpRun checkedVectorPath()
{
    static const ExpRun avx2 = [] {
        const ExpRun run = avx2ExpRun();
        return run && simdSupported(SimdLevel::Avx2) && vectorMatchesLibm(run) ? run : ExpRun(nullptr);
    }();
    static const ExpRun avx512 = [] {
        const ExpRun run = avx512ExpRun();
        return run && simdSupported(SimdLevel::Avx512) && vectorMatchesLibm(run) ? run : ExpRun(nullptr);
    }();
    switch (activeSimd()) {
    case SimdLevel::Avx512: return avx512 ? avx512 : avx2;
    case SimdLevel::Avx2: return avx2;
    default: return nullptr;
    }
}

} // namespace

bool expRunVectorised() { return checkedVectorPath() != nullptr; }

void expRun(const float *x, float *y, int64_t n)
{
    const ExpRun run = n >= 4 ? checkedVectorPath() : nullptr;
    if (run) {
        run(x, y, n);
        return;
    }
    for (int64_t i = 0; i < n; ++i)
        y[i] = std::exp(x[i]);
}

} // namespace waste::quant
