// The prompt format a model gets from the API: K3 containers: K3's XTML
// (engine/src/text/k3_template); containers that ship a chat template: the engine's
// generic ChatML format; anything else: raw mode (promptrenderer.h). Replies are read
// back by the model's reply parser (waste::Model::replyParser, replyassembler.h).
#pragma once

#include "server/apirequest.h"
#include "engine/generationtypes.h"

#include <QVariantMap>

enum class ChatFormat { Raw, ChatMl, K3 };

ChatFormat chatFormatFor(const QVariantMap &modelInfo);

// Renders the client's chat request with the model's template. imagePrompts holds the
// media markup of each image in order. Throws ApiError (400) when the template refuses it.
QList<PromptSegment> renderTemplatedChat(ChatFormat format, const ApiRequest &request,
                                         const QStringList &imagePrompts);
