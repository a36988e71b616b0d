// EXIF orientation of a JPEG: read from the APP1 "Exif" segment, applied by re-indexing pixels.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace waste::image {

// The orientation tag (1..8) of a JPEG's first EXIF block; 1 when the file is not a JPEG,
// has no EXIF block, or the block is malformed or out of range (never reads out of bounds).
int jpegExifOrientation(std::span<const uint8_t> file);

// Re-indexes a w x h RGB picture as orientation `o` asks (1..8; others leave it as is).
// Orientations 5..8 swap width and height.
void applyOrientation(std::vector<uint8_t> &rgb, int &width, int &height, int o);

} // namespace waste::image
