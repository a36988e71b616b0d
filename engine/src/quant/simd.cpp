#include "quant/simd.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace waste::quant {
namespace {

std::atomic<int> g_active{-1};

} // namespace

SimdLevel detectSimd()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (avx512Kernels() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma"))
        return SimdLevel::Avx512;
    // F16C comes with every AVX2 CPU; the native FP8 rows use it, so it is checked too.
    if (avx2Kernels() && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        __builtin_cpu_supports("f16c"))
        return SimdLevel::Avx2;
#endif
    // Advanced SIMD is mandatory in the aarch64 base ISA: compiled means supported.
    if (neonKernels())
        return SimdLevel::Neon;
    return SimdLevel::Scalar;
}

bool simdSupported(SimdLevel lvl)
{
    const SimdLevel best = detectSimd();
    switch (lvl) {
    case SimdLevel::Scalar: return true;
    case SimdLevel::Avx2: return best == SimdLevel::Avx2 || best == SimdLevel::Avx512;
    case SimdLevel::Avx512: return best == SimdLevel::Avx512;
    case SimdLevel::Neon: return best == SimdLevel::Neon;
    }
    return false;
}

SimdLevel activeSimd()
{
    int v = g_active.load(std::memory_order_relaxed);
    if (v < 0) {
        v = static_cast<int>(backendLevel(std::getenv("WASTE_BACKEND"), detectSimd()));
        g_active.store(v, std::memory_order_relaxed);
    }
    return static_cast<SimdLevel>(v);
}

SimdLevel backendLevel(const char *value, SimdLevel best)
{
    if (!value)
        return best;
    if (std::strcmp(value, "cpu") == 0)
        return SimdLevel::Scalar;
    if (std::strcmp(value, "avx2") == 0 && best == SimdLevel::Avx512 && avx2Kernels())
        return SimdLevel::Avx2;
    return best;
}

void setActiveSimd(SimdLevel lvl)
{
    if (!simdSupported(lvl))
        lvl = lvl == SimdLevel::Avx512 && simdSupported(SimdLevel::Avx2) ? SimdLevel::Avx2 : SimdLevel::Scalar;
    g_active.store(static_cast<int>(lvl), std::memory_order_relaxed);
}

const char *simdName(SimdLevel lvl)
{
    switch (lvl) {
    case SimdLevel::Avx512: return "AVX-512";
    case SimdLevel::Avx2: return "AVX2";
    case SimdLevel::Neon: return "NEON";
    case SimdLevel::Scalar: return "scalar";
    }
    return "scalar";
}

const Kernels &kernelsFor(SimdLevel lvl)
{
    if (lvl == SimdLevel::Avx512 && avx512Kernels())
        return *avx512Kernels();
    if (lvl == SimdLevel::Avx2 && avx2Kernels())
        return *avx2Kernels();
    if (lvl == SimdLevel::Neon && neonKernels())
        return *neonKernels();
    return scalarKernels();
}

const Kernels &kernels() { return kernelsFor(activeSimd()); }

} // namespace waste::quant
