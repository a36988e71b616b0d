// The API's chat prompt: the client's request (its Chat Completions form, ApiRequest::body)
// rendered in the model's chat format by the engine (waste::renderChatPrompt), a container
// without a template included. Replies are read back by the model's reply parser
// (waste::Model::replyParser with the declared tools, replyassembler.h).
#pragma once

#include "server/apirequest.h"
#include "generation/generationtypes.h"

#include <waste/chat.hpp>

#include <QStringList>

struct RequestPrompt {
    QList<PromptSegment> segments;
    int sharedSegments = 0; // leading segments before the last message (waste::ChatPrompt)
};

// imagePrompts holds the media markup of each image in order. Throws ApiError (400) when the
// format refuses the request.
RequestPrompt renderRequestPrompt(waste::ChatFormat format, const ApiRequest &request, const QStringList &imagePrompts);
