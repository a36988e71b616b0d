// Whether a file is an image the engine can decode (it reads PNG, JPEG, GIF and BMP with
// stb_image). Judged by the file's first bytes, not its name, so a renamed file is
// caught before it reaches the engine thread.
#pragma once

#include <QString>

// Empty when the file is a readable image; otherwise one sentence saying what is wrong.
QString imageProblem(const QString &path);
