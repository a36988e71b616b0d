// The one conversation renderer of the GUI chat and the CLI (`waste run`, `waste chat`): a
// Dialogue becomes an OpenAI-style chat request (messages, image_url parts, thinking) and then
// prompt segments, through the same engine template functions the API server uses —
// K3: waste::text::renderK3Json, ChatML: waste::text::renderChatMl, raw: "role: text" lines.
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
#include "prompt/templatekind.h"

#include <QJsonObject>
#include <QStringList>

#include <functional>

struct RenderedPrompt {
    QList<PromptSegment> segments;
    QStringList imagePaths;     // one per media block, in prompt order
    bool opensThinking = false; // the prompt ends inside the thinking channel (K3, thinking on)
};

// The media block for one image file (throws std::runtime_error when it cannot be read).
using MediaBlockFunction = std::function<QString(const QString &path)>;

// The OpenAI-style request the templates render: {"messages": [...], "thinking": bool}.
// Images are image_url parts with file URLs; an assistant turn's reply is split into
// content and reasoning_content for K3.
QJsonObject dialogueRequest(const Dialogue &dialogue, TemplateKind kind);

// Throws std::runtime_error (one line) when an image cannot be read or the template refuses
// the request. mediaBlock defaults to imageMediaBlock (mediablock.h).
RenderedPrompt renderDialogue(const Dialogue &dialogue, TemplateKind kind, const MediaBlockFunction &mediaBlock = {});
