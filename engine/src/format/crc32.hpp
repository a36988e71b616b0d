// zlib crc32 (reflected polynomial 0xEDB88320), slice-by-8: the expert records'
// payload checksum, written by the converter and checked by `verifyRecords` / --verify.
#pragma once

#include <cstddef>
#include <cstdint>

namespace waste::format {

uint32_t crc32(const void *data, size_t size, uint32_t crc = 0);

} // namespace waste::format
