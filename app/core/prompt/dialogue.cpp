#include "prompt/dialogue.h"

#include <QJsonArray>

QJsonObject dialogueToJson(const Dialogue &d)
{
    QJsonArray turns;
    for (const DialogueTurn &t : d.turns)
        turns.append(QJsonObject{{QStringLiteral("role"), t.role},
                                 {QStringLiteral("text"), t.text},
                                 {QStringLiteral("reasoning"), t.reasoning},
                                 {QStringLiteral("content"), t.content},
                                 {QStringLiteral("images"), QJsonArray::fromStringList(t.imagePaths)},
                                 {QStringLiteral("openedThinking"), t.openedThinking},
                                 {QStringLiteral("toolCalls"), t.toolCalls},
                                 {QStringLiteral("toolCallId"), t.toolCallId},
                                 {QStringLiteral("toolName"), t.toolName}});
    return {{QStringLiteral("system"), d.systemPrompt},
            {QStringLiteral("thinking"), d.thinking},
            {QStringLiteral("tools"), d.tools},
            {QStringLiteral("turns"), turns}};
}

Dialogue dialogueFromJson(const QJsonObject &json)
{
    Dialogue d;
    d.systemPrompt = json.value(QStringLiteral("system")).toString();
    d.thinking = json.value(QStringLiteral("thinking")).toBool();
    d.tools = json.value(QStringLiteral("tools")).toArray();
    for (const QJsonValue &v : json.value(QStringLiteral("turns")).toArray()) {
        const QJsonObject o = v.toObject();
        DialogueTurn t;
        t.role = o.value(QStringLiteral("role")).toString();
        t.text = o.value(QStringLiteral("text")).toString();
        t.reasoning = o.value(QStringLiteral("reasoning")).toString();
        t.content = o.value(QStringLiteral("content")).toString();
        for (const QJsonValue &p : o.value(QStringLiteral("images")).toArray())
            t.imagePaths << p.toString();
        t.openedThinking = o.value(QStringLiteral("openedThinking")).toBool();
        t.toolCalls = o.value(QStringLiteral("toolCalls")).toArray();
        t.toolCallId = o.value(QStringLiteral("toolCallId")).toString();
        t.toolName = o.value(QStringLiteral("toolName")).toString();
        d.turns << t;
    }
    return d;
}
