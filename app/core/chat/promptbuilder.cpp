#include "promptbuilder.h"

QList<PromptSegment> buildPrompt(const QList<ChatMessage> &messages, const PromptOptions &options)
{
    QList<PromptSegment> out;
    if (!options.systemPrompt.trimmed().isEmpty())
        out << PromptSegment{options.systemPrompt.trimmed() + QStringLiteral("\n\n"), false};
    for (int i = qMax(0, options.firstMessage); i < messages.size(); ++i) {
        const ChatMessage &m = messages.at(i);
        // The thinking channel is not fed back: answers alone carry the conversation.
        if (m.role == QLatin1String("user")) {
            out << PromptSegment{QStringLiteral("User: "), false};
            out << PromptSegment{m.text + QStringLiteral("\n\n"), false};
        } else {
            // Exactly the segment the answer was generated after, then the answer as the
            // model wrote it (after a space), so the next prompt extends the engine's state
            // token for token and only the new turn is prefilled.
            out << PromptSegment{QStringLiteral("Assistant:"), false};
            out << PromptSegment{QLatin1Char(' ') + m.text + QStringLiteral("\n\n"), false};
        }
    }
    out << PromptSegment{QStringLiteral("Assistant:"), false};
    return out;
}

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
