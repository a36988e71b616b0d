#include "image/image_probe.hpp"

#include "image/exif_orientation.hpp"
#include "image/image_decode.hpp"
#include "waste/waste.hpp"

#include <stb_image.h>

#include <cstdint>
#include <fstream>
#include <utility>
#include <vector>

namespace waste::image {

ImageHeader probeImageFile(const std::string &path)
{
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) throw Error(ErrorCode::Io, path + ": cannot open the image file");
    const std::streamoff size = in.tellg();
    if (size <= 0) throw Error(ErrorCode::Format, path + ": empty file, not an image");
    if (int64_t(size) > kDefaultMaxFileBytes)
        throw Error(ErrorCode::Unsupported, path + ": file too large for an image (" + std::to_string(size) + " bytes)");
    // The whole file: a JPEG's frame header may follow large EXIF or ICC blocks.
    std::vector<uint8_t> bytes(static_cast<size_t>(size));
    in.seekg(0);
    if (!in.read(reinterpret_cast<char *>(bytes.data()), size))
        throw Error(ErrorCode::Io, path + ": cannot read the image file");
    int w = 0, h = 0, comp = 0;
    if (!stbi_info_from_memory(bytes.data(), int(bytes.size()), &w, &h, &comp))
        throw Error(ErrorCode::Format, path + ": not an image this engine reads (PNG, JPEG, GIF, BMP, TGA, PSD)"
                                              " or its header is damaged");
    if (w <= 0 || h <= 0 || int64_t(w) * int64_t(h) > kDefaultMaxPixels)
        throw Error(ErrorCode::Unsupported, path + ": image dimensions " + std::to_string(w) + "x" + std::to_string(h) +
                                                " are invalid or exceed the " + std::to_string(kDefaultMaxPixels) +
                                                "-pixel limit");
    // Orientations 5..8 turn the picture a quarter: width and height swap (as in applyOrientation).
    if (jpegExifOrientation(bytes) >= 5) std::swap(w, h);
    return {w, h};
}

} // namespace waste::image
