// Reads an image's pixel size from its header (PNG, JPEG, GIF, BMP, WebP) without decoding
// it: the prompt's media block names the source size before the engine decodes the file.
#pragma once

#include <QByteArray>
#include <QSize>

// An invalid QSize when the format is unknown or the header is damaged.
QSize probeImageSize(const QByteArray &head);
