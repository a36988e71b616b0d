// Which messages of a long conversation still fit the context: the oldest are left out of
// the prompt (not the store) so the newest question and its answer fit.
#pragma once

#include "chat/chatmessage.h"

#include <QList>

// Index of the first message to keep so that the estimated prompt plus `reserve` answer
// tokens fits in `context`. `totalTokens` is the counted size of the whole prompt; each
// message's share is estimated from its length. Returns 0 when everything fits.
int firstMessageThatFits(const QList<ChatMessage> &messages, int totalTokens, int reserve, int context);
