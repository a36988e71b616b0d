// The media block that places one image in a prompt:
// "<|media_begin|>image WxH<|media_content|><|media_pad|><|media_end|>" (markup). W and H are
// the picture's size once decoded (EXIF orientation applied), read from the file's header by
// the engine (waste::imageMediaBlock), so every front end names an image the same way without
// encoding it.
#pragma once

#include <QString>

// Throws std::runtime_error with a one-line reason when the file is not an image the engine
// reads. Results are cached by path, size and modification time.
QString imageMediaBlock(const QString &path);
