#include "remote/remotemessages.h"

#include <QFile>
#include <QFileInfo>
#include <QMimeDatabase>

#include <stdexcept>

namespace remotemessages {

QString dataUrl(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        throw std::runtime_error(QStringLiteral("cannot read the image %1: %2")
                                     .arg(QFileInfo(path).fileName(), f.errorString()).toStdString());
    const QByteArray bytes = f.readAll();
    // The server decodes the picture: it needs the real type, read from the bytes, not the name.
    const QString mime = QMimeDatabase().mimeTypeForFileNameAndData(path, bytes).name();
    return QStringLiteral("data:%1;base64,").arg(mime.startsWith(QLatin1String("image/")) ? mime
                                                                                         : QStringLiteral("image/png"))
           + QString::fromLatin1(bytes.toBase64());
}

QJsonArray messages(const Dialogue &dialogue)
{
    QJsonArray out;
    if (!dialogue.systemPrompt.isEmpty())
        out.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("system")},
                               {QStringLiteral("content"), dialogue.systemPrompt}});
    for (const DialogueTurn &t : dialogue.turns) {
        if (t.role == QLatin1String("assistant")) {
            // What the person saw; the reasoning stays out, as OpenAI-compatible servers expect.
            QJsonObject m{{QStringLiteral("role"), QStringLiteral("assistant")},
                          {QStringLiteral("content"), t.content.isEmpty() && t.toolCalls.isEmpty() ? t.text : t.content}};
            if (!t.toolCalls.isEmpty())
                m.insert(QStringLiteral("tool_calls"), t.toolCalls);
            out.append(m);
            continue;
        }
        if (t.role == QLatin1String("tool")) {
            out.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("tool")},
                                   {QStringLiteral("tool_call_id"), t.toolCallId},
                                   {QStringLiteral("name"), t.toolName},
                                   {QStringLiteral("content"), t.text}});
            continue;
        }
        if (t.imagePaths.isEmpty()) {
            out.append(QJsonObject{{QStringLiteral("role"), t.role}, {QStringLiteral("content"), t.text}});
            continue;
        }
        QJsonArray parts;
        for (const QString &path : t.imagePaths)
            parts.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("image_url")},
                                     {QStringLiteral("image_url"), QJsonObject{{QStringLiteral("url"), dataUrl(path)}}}});
        if (!t.text.isEmpty())
            parts.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("text")}, {QStringLiteral("text"), t.text}});
        out.append(QJsonObject{{QStringLiteral("role"), t.role}, {QStringLiteral("content"), parts}});
    }
    return out;
}

QJsonObject chatRequest(const QString &model, const Dialogue &dialogue, const waste::GenParams &params)
{
    QJsonObject body{
        {QStringLiteral("model"), model},
        {QStringLiteral("messages"), messages(dialogue)},
        {QStringLiteral("stream"), true},
        // The last chunk then carries the token counts the message line shows.
        {QStringLiteral("stream_options"), QJsonObject{{QStringLiteral("include_usage"), true}}},
        {QStringLiteral("max_tokens"), params.maxTokens},
        {QStringLiteral("temperature"), double(params.temperature)},
        {QStringLiteral("top_p"), double(params.topP)},
        // JSON numbers are doubles: keep the seed within what every server reads exactly.
        {QStringLiteral("seed"), double(params.seed & ((quint64(1) << 53) - 1))},
        // The chat's thinking switch: WASTE Studio's own field, and the two spellings chat
        // templates use (vLLM, SGLang and llama-server pass these to the template). Servers
        // ignore fields they do not know.
        {QStringLiteral("thinking"), dialogue.thinking},
        {QStringLiteral("chat_template_kwargs"),
         QJsonObject{{QStringLiteral("enable_thinking"), dialogue.thinking}, {QStringLiteral("thinking"), dialogue.thinking}}},
    };
    if (params.topK > 0)
        body.insert(QStringLiteral("top_k"), params.topK);
    // Tools go through as they are; the server renders and parses its own calls.
    if (!dialogue.tools.isEmpty()) {
        body.insert(QStringLiteral("tools"), dialogue.tools);
        if (dialogue.toolChoice == QLatin1String("required") || dialogue.toolChoice == QLatin1String("none"))
            body.insert(QStringLiteral("tool_choice"), dialogue.toolChoice);
        else if (!dialogue.toolChoice.isEmpty())
            body.insert(QStringLiteral("tool_choice"),
                        QJsonObject{{QStringLiteral("type"), QStringLiteral("function")},
                                    {QStringLiteral("function"), QJsonObject{{QStringLiteral("name"), dialogue.toolChoice}}}});
    }
    if (!params.stopStrings.empty()) {
        QJsonArray stop;
        for (const std::string &s : params.stopStrings)
            stop.append(QString::fromStdString(s));
        body.insert(QStringLiteral("stop"), stop);
    }
    return body;
}

} // namespace remotemessages
