// What the engine's chat templates return, as the app's prompt segments: shared by the chat
// page's renderer and the API server so that both place images the same way.
#pragma once

#include "prompt/promptsegment.h"

#include "text/chat_segments.hpp"

#include <QList>
#include <QStringList>

QList<PromptSegment> toPromptSegments(const waste::text::Segments &segments);

// ChatML marks where each image part was with a placeholder; puts the image's media block
// there, in order. Throws std::runtime_error when the count of placeholders and images differ.
void placeImageBlocks(QList<PromptSegment> &segments, const QStringList &blocks);
