// The prompt format a model gets from the API, and how its reply is read back:
// K3 containers: K3's XTML (engine/src/text/k3_template); containers that ship a chat
// template: the engine's generic ChatML format; anything else: raw mode (promptrenderer.h).
#pragma once

#include "apirequest.h"
#include "generationtypes.h"
#include "toolcallparser.h"

#include <QVariantMap>

enum class ChatFormat { Raw, ChatMl, K3 };

ChatFormat chatFormatFor(const QVariantMap &modelInfo);

// Renders the client's chat request with the model's template. imagePrompts holds the
// media markup of each image in order. Throws ApiError (400) when the template refuses it.
QList<PromptSegment> renderTemplatedChat(ChatFormat format, const ApiRequest &request,
                                         const QStringList &imagePrompts);

// Splits a finished reply into reasoning, content and tool calls. A forced tool call's
// output is the bare {"name", "arguments"} object its constraint produced.
ParsedReply parseChatReply(ChatFormat format, const QString &reply, const ApiRequest &request);
