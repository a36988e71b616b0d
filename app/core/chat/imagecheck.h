// Which image files the chat accepts, and how each reaches the engine. The engine decodes
// PNG, JPEG, GIF and BMP itself (stb_image); every other format Qt's image plugins read
// (WebP, TIFF, and HEIF/AVIF where a plugin is installed) is decoded here into pixels and
// handed over as a PNG of exactly those pixels, so an answer about a WebP matches the answer
// about the same pixels saved as PNG. Judged by the file's first bytes, not its name, so a
// renamed file is caught before it reaches the engine thread.
#pragma once

#include <QString>

// Empty when the file is an image the app can read; otherwise one sentence saying what is
// wrong, naming the format when it is an image without a decoder on this system.
QString imageProblem(const QString &path);

// True when the engine reads the file as it is (PNG, JPEG, GIF, BMP).
bool engineReadsImage(const QString &path);

// Decodes path with Qt's image plugins and writes the pixels as a PNG to target. Empty on
// success; otherwise why it failed.
QString decodeToPng(const QString &path, const QString &target);

// "*.png *.jpg …": every suffix Qt's installed image plugins read, for a file dialog's filter.
QString readableImagePatterns();
