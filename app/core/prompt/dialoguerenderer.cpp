#include "prompt/dialoguerenderer.h"

#include "prompt/mediablock.h"
#include "prompt/templatesegments.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QUrl>

#include <stdexcept>
#include <string>
#include <vector>

QJsonObject dialogueRequest(const Dialogue &d, waste::ChatFormat format)
{
    const bool fromParts = waste::chatFormatTraits(format).replaysParsedTurns;
    QJsonArray messages;
    if (!d.systemPrompt.isEmpty())
        messages.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("system")},
                                    {QStringLiteral("content"), d.systemPrompt}});
    for (const DialogueTurn &t : d.turns) {
        QJsonObject m{{QStringLiteral("role"), t.role}};
        if (t.role == QLatin1String("tool")) {
            m.insert(QStringLiteral("tool_call_id"), t.toolCallId);
            m.insert(QStringLiteral("name"), t.toolName);
            m.insert(QStringLiteral("content"), t.text);
        } else if (t.role == QLatin1String("assistant") && !t.toolCalls.isEmpty()) {
            // A call is written back as a call, whatever text the model used for it (a forced
            // call's bare JSON, a <tool_call> block): the template's own form of it.
            m.insert(QStringLiteral("content"), t.content);
            if (fromParts && t.openedThinking)
                m.insert(QStringLiteral("reasoning_content"), t.reasoning);
            m.insert(QStringLiteral("tool_calls"), t.toolCalls);
        } else if (t.role == QLatin1String("assistant") && fromParts) {
            m.insert(QStringLiteral("content"), t.content);
            if (t.openedThinking)
                m.insert(QStringLiteral("reasoning_content"), t.reasoning);
        } else if (t.imagePaths.isEmpty()) {
            m.insert(QStringLiteral("content"), t.text);
        } else {
            QJsonArray parts;
            for (const QString &path : t.imagePaths)
                parts.append(QJsonObject{
                    {QStringLiteral("type"), QStringLiteral("image_url")},
                    {QStringLiteral("image_url"),
                     QJsonObject{{QStringLiteral("url"), QUrl::fromLocalFile(path).toString()}}}});
            if (!t.text.isEmpty())
                parts.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("text")},
                                         {QStringLiteral("text"), t.text}});
            m.insert(QStringLiteral("content"), parts);
        }
        messages.append(m);
    }
    QJsonObject request{{QStringLiteral("messages"), messages}, {QStringLiteral("thinking"), d.thinking}};
    if (!d.tools.isEmpty())
        request.insert(QStringLiteral("tools"), d.tools);
    return request;
}

RenderedPrompt renderDialogue(const Dialogue &d, waste::ChatFormat format, const MediaBlockFunction &mediaBlock)
{
    RenderedPrompt r;
    std::vector<std::string> blocks;
    for (const DialogueTurn &t : d.turns)
        for (const QString &path : t.imagePaths) {
            blocks.push_back((mediaBlock ? mediaBlock(path) : imageMediaBlock(path)).toStdString());
            r.imagePaths << path;
        }
    const std::string request = QJsonDocument(dialogueRequest(d, format)).toJson(QJsonDocument::Compact).toStdString();
    try {
        const waste::ChatPrompt prompt = waste::renderChatPrompt(format, request, blocks);
        r.segments = toPromptSegments(prompt.segments);
        r.opensThinking = prompt.opensThinking;
        r.reusableSegments = int(prompt.sharedSegments);
    } catch (const std::exception &e) {
        throw std::runtime_error(std::string("the chat template refused the conversation: ") + e.what());
    }
    return r;
}
