#include "format/crc32.hpp"

#include "format/crc32_ways.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace waste::format {
namespace {

struct Chosen {
    Crc32Fn fn;
    const char *name;
};

Chosen choose()
{
    const char *env = std::getenv("WASTE_CRC32");
    if (!(env && std::strcmp(env, "scalar") == 0)) {
        if (Crc32Fn f = crc32Pclmul()) return {f, "pclmul"};
        if (Crc32Fn f = crc32Armv8()) return {f, "armv8-crc"};
    }
    return {crc32Scalar(), "scalar"};
}

std::atomic<bool> g_forceScalar{false};

const Chosen &chosen()
{
    static const Chosen c = choose();
    return c;
}

} // namespace

uint32_t crc32(const void *data, size_t size, uint32_t crc)
{
    return g_forceScalar.load(std::memory_order_relaxed) ? crc32Scalar()(data, size, crc) : chosen().fn(data, size, crc);
}

const char *crc32Name() { return g_forceScalar.load(std::memory_order_relaxed) ? "scalar" : chosen().name; }

void forceCrc32Scalar(bool on) { g_forceScalar.store(on, std::memory_order_relaxed); }

} // namespace waste::format
