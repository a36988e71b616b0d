#include "chat/chatdialogue.h"

#include "engine/enginecontroller.h"

Dialogue chatDialogue(const QList<ChatMessage> &messages, int firstMessage, const ConversationSettings &settings)
{
    Dialogue d;
    d.systemPrompt = settings.systemPrompt.trimmed();
    d.thinking = settings.thinking;
    for (int i = qMax(0, firstMessage); i < messages.size(); ++i) {
        const ChatMessage &m = messages.at(i);
        if (m.streaming)
            continue;
        DialogueTurn t;
        t.role = m.role;
        if (m.role == QLatin1String("tool")) {
            t.text = m.text;
            t.toolCallId = m.tool.value(QLatin1String("id")).toString();
            t.toolName = m.tool.value(QLatin1String("name")).toString();
            d.turns << t;
            continue;
        }
        if (m.role == QLatin1String("assistant")) {
            for (const QJsonValue &v : m.toolCalls()) {
                const QJsonObject c = v.toObject();
                t.toolCalls.append(QJsonObject{
                    {QStringLiteral("id"), c.value(QLatin1String("id"))},
                    {QStringLiteral("type"), QStringLiteral("function")},
                    {QStringLiteral("function"), QJsonObject{{QStringLiteral("name"), c.value(QLatin1String("name"))},
                                                             {QStringLiteral("arguments"), c.value(QLatin1String("arguments"))}}}});
            }
            // A failed answer said nothing; the next question follows the last one.
            if (m.raw.isEmpty() && !m.error.isEmpty())
                continue;
            // The reply as the model wrote it, so the prompt repeats the engine state; answers
            // stored before replies were kept whole have only their visible text.
            t.text = m.raw.isEmpty() ? m.text : m.raw;
            t.reasoning = m.thinking;
            t.content = m.text;
            t.openedThinking = m.openedThinking;
        } else {
            t.text = m.text;
            t.imagePaths = m.imagePaths;
        }
        d.turns << t;
    }
    return d;
}

waste::ChatFormat openChatFormat(const EngineController &engine)
{
    return engine.modelInfo().value(QStringLiteral("chatFormat")).value<waste::ChatFormat>();
}
