#include "chat/contextcut.h"

int firstMessageThatFits(const QList<ChatMessage> &messages, int totalTokens, int reserve, int context)
{
    if (context <= 0 || totalTokens + reserve <= context || messages.isEmpty())
        return 0;
    qint64 chars = 0;
    for (const ChatMessage &m : messages)
        chars += m.text.size() + 16;
    const double perChar = chars > 0 ? double(totalTokens) / double(chars) : 1.0;
    // Drop the oldest messages until the estimate fits, keeping a 5% margin for the
    // estimate's error; always keep the newest message.
    double remaining = totalTokens;
    const double limit = (context - reserve) * 0.95;
    int first = 0;
    while (first < messages.size() - 1 && remaining > limit) {
        remaining -= (messages.at(first).text.size() + 16) * perChar;
        ++first;
    }
    // Start on a user message so the transcript still reads as a conversation.
    while (first < messages.size() - 1 && messages.at(first).role != QLatin1String("user"))
        ++first;
    return first;
}
