#include "prompt/dialoguerenderer.h"

#include "prompt/mediablock.h"
#include "prompt/templatesegments.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QUrl>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

void appendText(QList<PromptSegment> &out, const QString &text)
{
    if (!text.isEmpty())
        out.append(PromptSegment{text, false});
}

QList<PromptSegment> renderRaw(const Dialogue &d, const QStringList &blocks)
{
    // The API server's raw mode, segment for segment: "role: " text, the parts, "\n\n".
    QList<PromptSegment> out;
    if (!d.systemPrompt.isEmpty()) {
        appendText(out, QStringLiteral("system: "));
        appendText(out, d.systemPrompt);
        appendText(out, QStringLiteral("\n\n"));
    }
    qsizetype image = 0;
    for (const DialogueTurn &t : d.turns) {
        appendText(out, t.role + QStringLiteral(": "));
        for (qsizetype i = 0; i < t.imagePaths.size(); ++i)
            out.append(PromptSegment{blocks.at(image++), true});
        appendText(out, t.text);
        appendText(out, QStringLiteral("\n\n"));
    }
    appendText(out, QStringLiteral("assistant: "));
    return out;
}

} // namespace

QJsonObject dialogueRequest(const Dialogue &d, waste::ChatFormat format)
{
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
            if (format == waste::ChatFormat::K3 && t.openedThinking)
                m.insert(QStringLiteral("reasoning_content"), t.reasoning);
            m.insert(QStringLiteral("tool_calls"), t.toolCalls);
        } else if (t.role == QLatin1String("assistant") && format == waste::ChatFormat::K3) {
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

namespace {

// blocks: the media block of each image of the dialogue, in order.
RenderedPrompt renderOnce(const Dialogue &d, waste::ChatFormat format, const QStringList &blocks)
{
    RenderedPrompt r;
    if (format == waste::ChatFormat::Plain) {
        r.segments = renderRaw(d, blocks);
        return r;
    }
    const std::string request = QJsonDocument(dialogueRequest(d, format)).toJson(QJsonDocument::Compact).toStdString();
    std::vector<std::string> mediaBlocks;
    for (const QString &b : std::as_const(blocks))
        mediaBlocks.push_back(b.toStdString());
    try {
        r.segments = toPromptSegments(waste::renderChat(format, request, mediaBlocks));
        r.opensThinking = waste::chatOpensThinking(format, request);
    } catch (const std::exception &e) {
        throw std::runtime_error(std::string("the chat template refused the conversation: ") + e.what());
    }
    return r;
}

} // namespace

RenderedPrompt renderDialogue(const Dialogue &d, waste::ChatFormat format, const MediaBlockFunction &mediaBlock)
{
    QStringList blocks, paths;
    for (const DialogueTurn &t : d.turns)
        for (const QString &path : t.imagePaths) {
            blocks << (mediaBlock ? mediaBlock(path) : imageMediaBlock(path));
            paths << path;
        }
    RenderedPrompt r = renderOnce(d, format, blocks);
    r.imagePaths = paths;
    // The same dialogue with its last turn's words changed: the segments both share are
    // what came before that turn.
    if (!d.turns.isEmpty() && !d.turns.last().text.isEmpty()) {
        Dialogue probe = d;
        probe.turns.last().text += kProbeMark;
        probe.turns.last().content += kProbeMark;
        try {
            r.reusableSegments = sharedLeadingSegments(r.segments, renderOnce(probe, format, blocks).segments);
        } catch (const std::exception &) {
            r.reusableSegments = 0;
        }
    }
    return r;
}
