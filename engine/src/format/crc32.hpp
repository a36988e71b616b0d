// zlib crc32 (reflected polynomial 0xEDB88320), slice-by-8, for the optional
// per-record payload check (`verifyRecords` / --verify).
#pragma once

#include <cstddef>
#include <cstdint>

namespace waste::format {

uint32_t crc32(const uint8_t *data, size_t size, uint32_t crc = 0);

} // namespace waste::format
