// The one conversation renderer of the GUI chat and the CLI (`waste run`, `waste chat`): a
// Dialogue becomes an OpenAI-style chat request (messages, image_url parts, thinking) and then
// prompt segments, with the model's chat format (waste::ModelInfo::chatFormat) through the same
// engine function the API server uses (waste::renderChatPrompt, waste/chat.hpp), a plain
// "role: text" transcript included.
// Markup segments come from the template (specials inside become special tokens); text
// segments hold what people and the model wrote and never do. Images become media blocks
// (markup) in the order they appear.
//
// Rendering is deterministic and prefix-stable: rendering the dialogue with the model's reply
// and a new user turn appended starts with exactly the segments of the previous prompt
// followed by the reply's text, which is what lets the EngineWorker keep its state between
// turns and feed only the new part.
#pragma once

#include "prompt/dialogue.h"
#include "prompt/promptsegment.h"

#include <waste/chat.hpp>

#include <QJsonObject>
#include <QStringList>

#include <functional>

struct RenderedPrompt {
    QList<PromptSegment> segments;
    QStringList imagePaths;     // one per media block, in prompt order
    bool opensThinking = false; // the prompt ends inside the thinking channel (K3, thinking on)
    // Leading segments that hold everything before the last turn (system prompt, tools, the
    // earlier turns): the state after them goes to the prompt cache (waste::ChatPrompt).
    int reusableSegments = 0;
};

// The media block for one image file (throws std::runtime_error when it cannot be read).
using MediaBlockFunction = std::function<QString(const QString &path)>;

// The OpenAI-style request the templates render: {"messages": [...], "thinking": bool}.
// Images are image_url parts with file URLs; an assistant turn is its parsed content and
// reasoning_content (DialogueTurn::content, ::reasoning) where the format replays parsed turns
// (waste::ChatFormatTraits), otherwise its text as generated.
QJsonObject dialogueRequest(const Dialogue &dialogue, waste::ChatFormat format);

// Throws std::runtime_error (one line) when an image cannot be read or the template refuses
// the request. mediaBlock defaults to imageMediaBlock (mediablock.h).
RenderedPrompt renderDialogue(const Dialogue &dialogue, waste::ChatFormat format,
                              const MediaBlockFunction &mediaBlock = {});
