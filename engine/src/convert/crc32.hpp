// zlib-compatible crc32 (polynomial 0xEDB88320), slice-by-8. Expert records carry it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace waste::convert {

uint32_t crc32(const void *data, size_t size, uint32_t crc = 0);

} // namespace waste::convert
