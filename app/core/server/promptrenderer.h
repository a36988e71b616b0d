// Turns a parsed request into prompt segments for the engine.
// Raw mode (models without a chat template): every message becomes plain text
// ("role: content"), so nothing a client sends can ever be read as markup. Images become
// the media block markup the vision tower expects, one per image, in order.
#pragma once

#include "server/apirequest.h"
#include "engine/generationtypes.h"

#include <functional>

// Returns the markup that places one image in the prompt (empty: no image support).
using ImageMarkup = std::function<QString(const ContentPart &)>;

QList<PromptSegment> renderRawChat(const ApiRequest &request, const ImageMarkup &imageMarkup);
QList<PromptSegment> renderCompletion(const ApiRequest &request);

// The instruction raw mode adds so a model knows its tools and the call syntax
// parseToolCalls() understands.
QString toolInstructions(const ApiRequest &request);
