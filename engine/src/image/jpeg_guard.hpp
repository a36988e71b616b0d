// Checks stb_image v2.27 (Debian 12's libstb-dev) does not make on hostile JPEGs, done before
// stb sees the file. v2.28 added them upstream; the engine must stay safe with either.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace waste::image {

// Empty when nothing is wrong (or the file is not a JPEG); otherwise why the file is refused.
// Currently: a Huffman table (DHT) declaring more than 256 codes, which v2.27 writes past its
// 257-entry size table for.
std::string jpegGuardProblem(std::span<const uint8_t> file);

} // namespace waste::image
