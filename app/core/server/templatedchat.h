// The API's chat prompt for a model with a template: the client's request rendered in the
// model's chat format (waste::ModelInfo::chatFormat, K3 or ChatMl) by the engine
// (waste::renderChat); a plain transcript is promptrenderer.h. Replies are read back by the
// model's reply parser (waste::Model::replyParser, replyassembler.h).
#pragma once

#include "server/apirequest.h"
#include "engine/generationtypes.h"

#include <waste/chat.hpp>

#include <QStringList>

// imagePrompts holds the media markup of each image in order. Throws ApiError (400) when the
// template refuses the request.
QList<PromptSegment> renderTemplatedChat(waste::ChatFormat format, const ApiRequest &request,
                                         const QStringList &imagePrompts);
