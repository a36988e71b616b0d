// Decoding an image file into 8-bit RGB: PNG, JPEG, GIF (first frame), BMP, TGA, PSD.
// The file is untrusted: its header is probed and bounded before any pixel memory exists.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace waste::image {

// The reference engine's source limit: 64 Mi pixels (checked on the header, before decoding).
inline constexpr int64_t kDefaultMaxPixels = int64_t(1) << 26;
// Files above this are refused before they are read (no picture we accept needs more).
inline constexpr int64_t kDefaultMaxFileBytes = int64_t(1) << 30;

struct DecodeOptions {
    int64_t maxPixels = kDefaultMaxPixels;
    int64_t maxFileBytes = kDefaultMaxFileBytes;
    // JPEG EXIF orientation (tag 0x0112) is applied so the picture is upright. The reference
    // engine does not apply it; set false to reproduce its pixels for rotated JPEGs.
    bool applyExifOrientation = true;
};

// Row-major, top row first, 3 bytes (R, G, B) per pixel.
struct RgbImage {
    int width = 0;
    int height = 0;
    std::vector<uint8_t> rgb;
    int orientation = 1; // the EXIF orientation that was applied (1 = none)

    uint8_t at(int x, int y, int c) const { return rgb[(size_t(y) * size_t(width) + size_t(x)) * 3 + size_t(c)]; }
};

// Throws waste::Error (Io for unreadable files, Format for what is not a usable image,
// Unsupported for pictures above the limits). `name` is used in messages only.
RgbImage decodeImage(std::span<const uint8_t> bytes, const std::string &name, const DecodeOptions &options = {});
RgbImage decodeImageFile(const std::string &path, const DecodeOptions &options = {});

} // namespace waste::image
