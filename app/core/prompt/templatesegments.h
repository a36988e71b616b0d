// What the engine's chat templates return (waste::renderChat), as the app's prompt segments:
// shared by the chat page's renderer and the API server.
#pragma once

#include "prompt/promptsegment.h"

#include <waste/chat.hpp>

#include <QList>

QList<PromptSegment> toPromptSegments(const waste::ChatSegments &segments);
