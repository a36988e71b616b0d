// PromptBuilder: turns a conversation into PromptSegments for the engine.
//
// Until the engine's K3 template renderer is on main this renders a plain transcript
// ("User: …", "Assistant: …") as text segments only, so user text can never forge
// markup. Rendering is deterministic: the same history gives the same segments, which
// lets the EngineWorker keep its state when the next prompt extends the last one.
#pragma once

#include "chatmessage.h"
#include "generationtypes.h"

#include <QList>

struct PromptOptions {
    QString systemPrompt;
    bool thinking = true;
    int firstMessage = 0; // older messages are left out (context cut)
};

QList<PromptSegment> buildPrompt(const QList<ChatMessage> &messages, const PromptOptions &options);

// Index of the first message to keep so that the estimated prompt plus `reserve` answer
// tokens fits in `context`. `totalTokens` is the counted size of the whole prompt; each
// message's share is estimated from its length. Returns 0 when everything fits.
int firstMessageThatFits(const QList<ChatMessage> &messages, int totalTokens, int reserve, int context);
