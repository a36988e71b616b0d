// expRun: the vector path where it gives std::exp's bits, std::exp otherwise (quant/exp_run.hpp).
#include "quant/exp_run.hpp"

#include "quant/libm_checked_path.hpp"

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

ExpRun checkedVectorPath()
{
    const auto libm = [](float x) { return std::exp(x); };
    static const ExpRun avx2 = checkedRun(avx2ExpRun(), SimdLevel::Avx2, kTellingInputs, libm);
    static const ExpRun avx512 = checkedRun(avx512ExpRun(), SimdLevel::Avx512, kTellingInputs, libm);
    return activeRun(avx2, avx512);
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
