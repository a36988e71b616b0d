// The raw crc32 register update every way shares for its short tails: the slice-by-8
// tables, on the register as it is (no inversion before or after).
#pragma once

#include <cstddef>
#include <cstdint>

namespace waste::format::detail {

uint32_t crc32TableUpdate(uint32_t reg, const uint8_t *data, size_t size);

} // namespace waste::format::detail
