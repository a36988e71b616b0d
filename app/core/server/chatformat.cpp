#include "chatformat.h"

#include "text/chatml_template.hpp"
#include "text/k3_template.hpp"

#include <waste/waste.hpp>

#include <QJsonDocument>

namespace {

QList<PromptSegment> toSegments(const waste::text::Segments &segments)
{
    QList<PromptSegment> out;
    out.reserve(qsizetype(segments.size()));
    for (const waste::text::Segment &s : segments)
        out.append(PromptSegment{QString::fromStdString(s.text), s.markup});
    return out;
}

} // namespace

ChatFormat chatFormatFor(const QVariantMap &modelInfo)
{
    if (modelInfo.value(QStringLiteral("arch")).toString() == QLatin1String("kimi-k3"))
        return ChatFormat::K3;
    if (modelInfo.value(QStringLiteral("hasChatTemplate")).toBool())
        return ChatFormat::ChatMl;
    return ChatFormat::Raw;
}

QList<PromptSegment> renderTemplatedChat(ChatFormat format, const ApiRequest &request, const QStringList &imagePrompts)
{
    QJsonObject body = request.body;
    try {
        if (format == ChatFormat::K3) {
            QJsonArray prompts;
            for (const QString &p : imagePrompts)
                prompts.append(p);
            body.insert(QStringLiteral("image_prompts"), prompts);
            // Replies are read as text here, so the think channel stays off unless asked for.
            if (!body.contains(QStringLiteral("thinking")) && !body.contains(QStringLiteral("reasoning_effort"))
                && !body.contains(QStringLiteral("thinking_effort")))
                body.insert(QStringLiteral("thinking"), false);
            return toSegments(waste::text::renderK3Json(QJsonDocument(body).toJson(QJsonDocument::Compact).toStdString()));
        }
        const auto json = nlohmann::ordered_json::parse(QJsonDocument(body).toJson(QJsonDocument::Compact).toStdString());
        return toSegments(waste::text::renderChatMl(json));
    } catch (const std::exception &e) {
        throw ApiError::invalid(QStringLiteral("messages"), QString::fromStdString(e.what()));
    }
}

ParsedReply parseChatReply(ChatFormat format, const QString &reply, const ApiRequest &request)
{
    if (request.toolCallForced() || format != ChatFormat::ChatMl)
        return request.toolsActive() ? parseToolCalls(reply, request.tools) : ParsedReply{reply, {}, {}};
    const waste::text::ChatReply r = waste::text::parseChatMlReply(reply.toStdString());
    ParsedReply out;
    out.reasoning = QString::fromStdString(r.reasoning).trimmed();
    out.content = QString::fromStdString(r.content);
    if (request.toolsActive() && !r.toolCalls.empty()) {
        // Only calls to declared functions count; the rest stays text.
        QString calls;
        for (const waste::text::ToolCall &c : r.toolCalls) {
            const QJsonObject call{{QStringLiteral("name"), QString::fromStdString(c.name)},
                                   {QStringLiteral("arguments"), QString::fromStdString(c.arguments)}};
            calls += QStringLiteral("<tool_call>%1</tool_call>")
                         .arg(QString::fromUtf8(QJsonDocument(call).toJson(QJsonDocument::Compact)));
        }
        const ParsedReply parsed = parseToolCalls(calls, request.tools);
        out.toolCalls = parsed.toolCalls;
        if (out.toolCalls.size() != qsizetype(r.toolCalls.size()))
            out.content = reply; // a call to an unknown tool: give the client everything as text
    } else if (!r.toolCalls.empty()) {
        out.content = reply;
    }
    return out;
}
