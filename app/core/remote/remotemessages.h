// A chat as an OpenAI Chat Completions request body, for a remote engine: the dialogue the
// chat page keeps (prompt/dialogue.h) as "messages" (system, user, assistant), each user
// turn's images inlined as data: URLs ahead of its words (the order the local prompt uses),
// and the generation settings. The remote server applies its own chat template; answers go
// back as what the person saw (the reply's content), never the local markup.
#pragma once

#include "prompt/dialogue.h"

#include <waste/waste.hpp>

#include <QJsonArray>
#include <QJsonObject>

namespace remotemessages {

// Throws std::runtime_error naming the file when an attached image cannot be read.
QJsonArray messages(const Dialogue &dialogue);
// The whole streaming request for `model`.
QJsonObject chatRequest(const QString &model, const Dialogue &dialogue, const waste::GenParams &params);
// data:<mime>;base64,<bytes> for an image file (throws like messages()).
QString dataUrl(const QString &path);

} // namespace remotemessages
