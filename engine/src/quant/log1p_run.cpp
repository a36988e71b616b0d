// log1pRun: the vector path where it gives std::log1p's bits, std::log1p otherwise
// (quant/log1p_run.hpp).
#include "quant/log1p_run.hpp"

#include "quant/libm_checked_path.hpp"

#include <cmath>

namespace waste::quant {
namespace {

// Inputs where fdlibm's log1pf, glibc's up to this writing, is not the correctly rounded
// log(1 + x) (one per binade from 2^-22 to 2^23, and six negatives): a C library with another
// algorithm (a correctly rounded one, say) differs on some of them.
constexpr uint32_t kTellingInputs[] = {
    0x34ca62c4, 0x35544398, 0x363d5092, 0x3700ff18, 0x38004046, 0x39007127, 0x3a000756, 0x3b0019d8,
    0x3c0003fe, 0x3d000779, 0x3e000808, 0x3f00022e, 0x40000001, 0x41000006, 0x42000428, 0x4300039c,
    0x440003a8, 0x4500374a, 0x46002286, 0x4700427a, 0x480014ca, 0x49002c58, 0x4a0055b9, 0x4b001471,
    0xb45db3d6, 0xb50f1bbb, 0xb619776c, 0xb702f71e, 0xb8023aae, 0xb9000ea9};

Log1pRun checkedVectorPath()
{
    const auto libm = [](float x) { return std::log1p(x); };
    static const Log1pRun avx2 = checkedRun(avx2Log1pRun(), SimdLevel::Avx2, kTellingInputs, libm);
    static const Log1pRun avx512 = checkedRun(avx512Log1pRun(), SimdLevel::Avx512, kTellingInputs, libm);
    return activeRun(avx2, avx512);
}

} // namespace

bool log1pRunVectorised() { return checkedVectorPath() != nullptr; }

void log1pRun(const float *x, float *y, int64_t n)
{
    const Log1pRun run = n >= 8 ? checkedVectorPath() : nullptr;
    if (run) {
        run(x, y, n);
        return;
    }
    for (int64_t i = 0; i < n; ++i)
        y[i] = std::log1p(x[i]);
}

} // namespace waste::quant
