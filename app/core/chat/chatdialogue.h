// The chat's messages as the Dialogue a prompt is rendered from: written once for the
// answer's request (ChatRun) and for the context meter's count (ChatContextMeter), so the
// meter counts exactly what is sent.
#pragma once

#include "chat/chatmessage.h"
#include "prompt/dialogue.h"

#include <QList>

#include <waste/chat.hpp>

class EngineController;

// The messages from `firstMessage` on (a streaming answer left out) with the conversation's
// system prompt and thinking switch.
Dialogue chatDialogue(const QList<ChatMessage> &messages, int firstMessage, const ConversationSettings &settings);

// The open model's chat format (decided by the engine, EngineController::modelInfo()).
waste::ChatFormat openChatFormat(const EngineController &engine);
