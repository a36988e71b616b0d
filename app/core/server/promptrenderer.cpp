#include "server/promptrenderer.h"

#include <QJsonDocument>

namespace {

QString compact(const QJsonValue &v)
{
    if (v.isObject())
        return QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact));
    if (v.isArray())
        return QString::fromUtf8(QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact));
    return v.toString();
}

void appendText(QList<PromptSegment> &out, const QString &text)
{
    if (!text.isEmpty())
        out.append(PromptSegment{text, false});
}

} // namespace

QString toolInstructions(const ApiRequest &request)
{
    if (!request.toolsActive())
        return {};
    QString s = QStringLiteral("You can call these tools:\n");
    for (const QJsonValue &t : request.tools)
        s += compact(t.toObject().value(QStringLiteral("function"))) + QLatin1Char('\n');
    s += QStringLiteral("To call a tool, reply with only <tool_call>{\"name\": \"...\", \"arguments\": {...}}</tool_call>.");
    if (request.toolChoice == ToolChoice::Required)
        s += QStringLiteral(" You must call a tool now.");
    else if (request.toolChoice == ToolChoice::Named)
        s += QStringLiteral(" You must call %1 now.").arg(request.toolName);
    return s;
}

QList<PromptSegment> renderRawChat(const ApiRequest &request, const ImageMarkup &imageMarkup)
{
    QList<PromptSegment> out;
    const QString tools = toolInstructions(request);
    if (!tools.isEmpty())
        appendText(out, QStringLiteral("system: ") + tools + QStringLiteral("\n\n"));
    for (const ApiChatMessage &m : request.messages) {
        QString head = m.role;
        if (m.role == QLatin1String("tool") && !m.toolCallId.isEmpty())
            head += QStringLiteral(" (%1)").arg(m.toolCallId);
        appendText(out, head + QStringLiteral(": "));
        for (const ContentPart &p : m.parts) {
            if (p.kind == ContentPart::Text) {
                appendText(out, p.text);
            } else if (imageMarkup) {
                const QString markup = imageMarkup(p);
                if (!markup.isEmpty())
                    out.append(PromptSegment{markup, true});
            }
        }
        for (const QJsonValue &call : m.toolCalls) {
            const QJsonObject fn = call.toObject().value(QStringLiteral("function")).toObject();
            QJsonObject shown{{QStringLiteral("name"), fn.value(QStringLiteral("name"))}};
            const QJsonValue args = fn.value(QStringLiteral("arguments"));
            const QJsonDocument parsed = QJsonDocument::fromJson(args.toString().toUtf8());
            shown.insert(QStringLiteral("arguments"), parsed.isObject() ? QJsonValue(parsed.object()) : args);
            appendText(out, QStringLiteral("<tool_call>%1</tool_call>").arg(compact(shown)));
        }
        appendText(out, QStringLiteral("\n\n"));
    }
    appendText(out, QStringLiteral("assistant: "));
    return out;
}

QList<PromptSegment> renderCompletion(const ApiRequest &request)
{
    return {PromptSegment{request.prompt, false}};
}
