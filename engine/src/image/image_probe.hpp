// The size an image will have once decoded, read from its header without decoding pixels:
// what a prompt's media block names ("image WxH") before the vision tower sees the file.
#pragma once

#include <string>

namespace waste::image {

struct ImageHeader {
    int width = 0;  // after EXIF orientation, as decodeImage() returns it
    int height = 0;
};

// Throws waste::Error (Io, Format, Unsupported) as decodeImageFile() would for a file it
// refuses on its header.
ImageHeader probeImageFile(const std::string &path);

} // namespace waste::image
