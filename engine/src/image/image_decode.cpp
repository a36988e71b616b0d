#include "image/image_decode.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <memory>

#include <stb_image.h>

#include "image/exif_orientation.hpp"
#include "image/jpeg_guard.hpp"
#include "waste/waste.hpp"

namespace waste::image {
namespace {

// Feeds stb from memory through its callback interface so we learn whether the decoder ever
// asked for bytes past the end of the file. stb fills such reads with zeros and may report
// success, so this is how a truncated BMP, TGA or PSD is told from a whole one.
struct BoundedReader {
    const uint8_t *data = nullptr;
    size_t size = 0;
    size_t pos = 0;
    bool overrun = false;

    static int read(void *user, char *out, int n)
    {
        auto *r = static_cast<BoundedReader *>(user);
        if (n <= 0) return 0;
        if (r->pos >= r->size) {
            r->overrun = true;
            return 0;
        }
        const size_t k = std::min(size_t(n), r->size - r->pos);
        std::memcpy(out, r->data + r->pos, k);
        r->pos += k;
        return int(k);
    }
    static void skip(void *user, int n)
    {
        auto *r = static_cast<BoundedReader *>(user);
        if (n <= 0) return;
        if (size_t(n) > r->size - r->pos) {
            r->overrun = true;
            r->pos = r->size;
        } else {
            r->pos += size_t(n);
        }
    }
    static int eof(void *user)
    {
        auto *r = static_cast<BoundedReader *>(user);
        return r->pos >= r->size ? 1 : 0;
    }
};

} // namespace

RgbImage decodeImage(std::span<const uint8_t> bytes, const std::string &name, const DecodeOptions &options)
{
    if (bytes.empty()) throw Error(ErrorCode::Format, name + ": empty file, not an image");
    if (int64_t(bytes.size()) > options.maxFileBytes || bytes.size() > size_t(INT32_MAX))
        throw Error(ErrorCode::Unsupported, name + ": file too large for an image (" + std::to_string(bytes.size()) +
                                                " bytes)");
    const auto *data = reinterpret_cast<const stbi_uc *>(bytes.data());
    const int len = int(bytes.size());

    if (const std::string why = jpegGuardProblem(bytes); !why.empty())
        throw Error(ErrorCode::Format, name + ": damaged image (" + why + ")");

    // Header probe: no pixel memory is allocated until the dimensions are known to be sane.
    int w = 0, h = 0, comp = 0;
    if (!stbi_info_from_memory(data, len, &w, &h, &comp))
        throw Error(ErrorCode::Format, name + ": not an image this engine reads (PNG, JPEG, GIF, BMP, TGA, PSD)"
                                              " or its header is damaged");
    if (w <= 0 || h <= 0 || int64_t(w) * int64_t(h) > options.maxPixels)
        throw Error(ErrorCode::Unsupported, name + ": image dimensions " + std::to_string(w) + "x" +
                                                std::to_string(h) + " are invalid or exceed the " +
                                                std::to_string(options.maxPixels) + "-pixel limit");

    int dw = 0, dh = 0, dc = 0;
    BoundedReader reader{bytes.data(), bytes.size()};
    const stbi_io_callbacks io{&BoundedReader::read, &BoundedReader::skip, &BoundedReader::eof};
    std::unique_ptr<stbi_uc, void (*)(void *)> pixels(stbi_load_from_callbacks(&io, &reader, &dw, &dh, &dc, 3),
                                                      stbi_image_free);
    if (reader.overrun)
        throw Error(ErrorCode::Format, name + ": the image data is truncated (the file ends before the picture does)");
    if (!pixels) {
        const char *why = stbi_failure_reason();
        throw Error(ErrorCode::Format, name + ": cannot decode the image (" + (why ? why : "unknown reason") +
                                           "); the file is damaged or truncated");
    }
    // The decoder must agree with its own probe; anything else means the file is inconsistent.
    if (dw != w || dh != h)
        throw Error(ErrorCode::Format, name + ": image header and data disagree on the dimensions");

    RgbImage img;
    img.width = w;
    img.height = h;
    img.rgb.assign(pixels.get(), pixels.get() + size_t(w) * size_t(h) * 3);
    if (options.applyExifOrientation) {
        img.orientation = jpegExifOrientation(bytes);
        applyOrientation(img.rgb, img.width, img.height, img.orientation);
    }
    return img;
}

RgbImage decodeImageFile(const std::string &path, const DecodeOptions &options)
{
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) throw Error(ErrorCode::Io, path + ": cannot open the image file");
    const std::streamoff size = in.tellg();
    if (size < 0) throw Error(ErrorCode::Io, path + ": cannot read the image file");
    if (int64_t(size) > options.maxFileBytes)
        throw Error(ErrorCode::Unsupported, path + ": file too large for an image (" + std::to_string(size) +
                                                " bytes)");
    std::vector<uint8_t> bytes(static_cast<size_t>(size));
    in.seekg(0);
    if (size > 0 && !in.read(reinterpret_cast<char *>(bytes.data()), size))
        throw Error(ErrorCode::Io, path + ": cannot read the image file");
    return decodeImage(bytes, path, options);
}

} // namespace waste::image
