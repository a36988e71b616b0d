#include "server/messagesrequest.h"

#include "server/jsonfields.h"

#include <QHash>
#include <QJsonDocument>

using namespace jsonfields;

namespace {

QJsonArray blocksOf(const QJsonValue &content, const QString &path)
{
    if (content.isString())
        return QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("text")},
                                      {QStringLiteral("text"), content.toString()}}};
    if (!content.isArray())
        wrongType(path, QStringLiteral("a string or an array of content blocks"), content);
    const QJsonArray arr = content.toArray();
    for (qsizetype i = 0; i < arr.size(); ++i)
        if (!arr[i].isObject())
            wrongType(at(path, i), QStringLiteral("an object"), arr[i]);
    return arr;
}

QString blockType(const QJsonObject &block, const QString &path)
{
    return readString(block, QStringLiteral("type"), path + QStringLiteral(".type"), true);
}

// An image block as the chat's image part: base64 data only (this server never fetches URLs).
QJsonObject imagePart(const QJsonObject &block, const QString &path)
{
    const QJsonObject source = readObject(block, QStringLiteral("source"), path + QStringLiteral(".source"));
    const QString type = readString(source, QStringLiteral("type"), path + QStringLiteral(".source.type"), true);
    if (type != QLatin1String("base64"))
        throw ApiError::invalid(path + QStringLiteral(".source.type"),
                                QStringLiteral("Image source type '%1' is not supported: send the image as base64 "
                                               "(this server never fetches URLs).").arg(type));
    const QString mime = readString(source, QStringLiteral("media_type"), path + QStringLiteral(".source.media_type"), true);
    if (!mime.startsWith(QLatin1String("image/")))
        throw ApiError::invalid(path + QStringLiteral(".source.media_type"),
                                QStringLiteral("'%1' is not an image type.").arg(mime));
    const QString data = readString(source, QStringLiteral("data"), path + QStringLiteral(".source.data"), true);
    return {{QStringLiteral("type"), QStringLiteral("image_url")},
            {QStringLiteral("image_url"),
             QJsonObject{{QStringLiteral("url"), QStringLiteral("data:%1;base64,%2").arg(mime, data)}}}};
}

QString textOf(const QJsonObject &block, const QString &path)
{
    return readString(block, QStringLiteral("text"), path + QStringLiteral(".text"), true);
}

// A tool_result's content (a string or text blocks) as the tool message's text.
QString toolResultText(const QJsonObject &block, const QString &path)
{
    const QJsonValue content = block.value(QStringLiteral("content"));
    QString text;
    if (!content.isUndefined() && !content.isNull()) {
        const QJsonArray blocks = blocksOf(content, path + QStringLiteral(".content"));
        for (qsizetype i = 0; i < blocks.size(); ++i) {
            const QString bp = at(path + QStringLiteral(".content"), i);
            const QJsonObject b = blocks[i].toObject();
            const QString type = blockType(b, bp);
            if (type != QLatin1String("text"))
                throw ApiError::invalid(bp + QStringLiteral(".type"),
                                        QStringLiteral("A tool_result holds text blocks here (got '%1').").arg(type));
            text += textOf(b, bp);
        }
    }
    // The model learns that the call failed the way a person reading the transcript would.
    if (readBool(block, QStringLiteral("is_error"), false, path + QStringLiteral(".is_error")))
        text = QStringLiteral("Error: ") + text;
    return text;
}

QJsonArray readMessages(const QJsonObject &body)
{
    QJsonArray out;
    const QJsonValue system = body.value(QStringLiteral("system"));
    if (!system.isUndefined() && !system.isNull()) {
        QString text;
        const QJsonArray blocks = blocksOf(system, QStringLiteral("system"));
        for (qsizetype i = 0; i < blocks.size(); ++i) {
            const QString bp = at(QStringLiteral("system"), i);
            const QJsonObject b = blocks[i].toObject();
            if (blockType(b, bp) != QLatin1String("text"))
                throw ApiError::invalid(bp + QStringLiteral(".type"), QStringLiteral("'system' holds text blocks only."));
            if (!text.isEmpty())
                text += QLatin1Char('\n');
            text += textOf(b, bp);
        }
        out.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("system")}, {QStringLiteral("content"), text}});
    }

    const QJsonArray arr = readNonEmptyArray(body, QStringLiteral("messages"), QStringLiteral("message"));
    QHash<QString, QString> toolNames; // tool_use id -> tool, so results name their tool
    for (qsizetype i = 0; i < arr.size(); ++i) {
        const QString path = at(QStringLiteral("messages"), i);
        if (!arr[i].isObject())
            wrongType(path, QStringLiteral("an object"), arr[i]);
        const QJsonObject m = arr[i].toObject();
        const QString role = readString(m, QStringLiteral("role"), path + QStringLiteral(".role"), true);
        if (role != QLatin1String("user") && role != QLatin1String("assistant"))
            throw ApiError::invalid(path + QStringLiteral(".role"),
                                    QStringLiteral("Unknown role '%1' (use user or assistant; the system prompt goes "
                                                   "in 'system').").arg(role));
        const QJsonValue content = m.value(QStringLiteral("content"));
        if (content.isUndefined() || content.isNull())
            throw ApiError::invalid(path + QStringLiteral(".content"), QStringLiteral("'%1.content' is required.").arg(path),
                                    QStringLiteral("missing_required_parameter"));
        const QJsonArray blocks = blocksOf(content, path + QStringLiteral(".content"));
        const bool user = role == QLatin1String("user");

        QJsonArray parts;    // user text and images
        QString text;        // assistant text
        QString reasoning;   // assistant thinking
        QJsonArray calls;    // assistant tool_use
        for (qsizetype j = 0; j < blocks.size(); ++j) {
            const QString bp = at(path + QStringLiteral(".content"), j);
            const QJsonObject b = blocks[j].toObject();
            const QString type = blockType(b, bp);
            if (type == QLatin1String("text")) {
                if (user)
                    parts.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("text")},
                                             {QStringLiteral("text"), textOf(b, bp)}});
                else
                    text += textOf(b, bp);
            } else if (type == QLatin1String("image") && user) {
                parts.append(imagePart(b, bp));
            } else if (type == QLatin1String("tool_result") && user) {
                const QString id = readString(b, QStringLiteral("tool_use_id"), bp + QStringLiteral(".tool_use_id"), true);
                QJsonObject tool{{QStringLiteral("role"), QStringLiteral("tool")},
                                 {QStringLiteral("tool_call_id"), id},
                                 {QStringLiteral("content"), toolResultText(b, bp)}};
                if (toolNames.contains(id))
                    tool.insert(QStringLiteral("name"), toolNames.value(id));
                out.append(tool); // results answer the calls before them, ahead of any new text
            } else if (type == QLatin1String("tool_use") && !user) {
                const QString id = readString(b, QStringLiteral("id"), bp + QStringLiteral(".id"), true);
                const QString name = readString(b, QStringLiteral("name"), bp + QStringLiteral(".name"), true);
                const QJsonObject input = readObject(b, QStringLiteral("input"), bp + QStringLiteral(".input"));
                toolNames.insert(id, name);
                calls.append(QJsonObject{{QStringLiteral("id"), id},
                                         {QStringLiteral("type"), QStringLiteral("function")},
                                         {QStringLiteral("function"),
                                          QJsonObject{{QStringLiteral("name"), name},
                                                      {QStringLiteral("arguments"),
                                                       QString::fromUtf8(QJsonDocument(input).toJson(QJsonDocument::Compact))}}}});
            } else if (type == QLatin1String("thinking") && !user) {
                reasoning += readString(b, QStringLiteral("thinking"), bp + QStringLiteral(".thinking"), true);
            } else if (type == QLatin1String("redacted_thinking") && !user) {
                continue; // nothing readable to give back to the model
            } else {
                throw ApiError::invalid(bp + QStringLiteral(".type"),
                                        QStringLiteral("Content block type '%1' is not supported in a %2 message.")
                                            .arg(type, role));
            }
        }
        if (user) {
            if (!parts.isEmpty())
                out.append(QJsonObject{{QStringLiteral("role"), role}, {QStringLiteral("content"), parts}});
        } else {
            QJsonObject a{{QStringLiteral("role"), role}};
            if (!text.isEmpty() || calls.isEmpty())
                a.insert(QStringLiteral("content"), text);
            if (!calls.isEmpty())
                a.insert(QStringLiteral("tool_calls"), calls);
            if (!reasoning.isEmpty())
                a.insert(QStringLiteral("reasoning_content"), reasoning);
            out.append(a);
        }
    }
    return out;
}

// auto, any (some tool), tool (that one) and none, as the chat's tool_choice.
QJsonValue readToolChoice(const QJsonObject &body)
{
    if (!present(body, QStringLiteral("tool_choice")))
        return QJsonValue(QJsonValue::Undefined);
    const QJsonObject c = readObject(body, QStringLiteral("tool_choice"), QStringLiteral("tool_choice"));
    const QString type = readString(c, QStringLiteral("type"), QStringLiteral("tool_choice.type"), true);
    readBool(c, QStringLiteral("disable_parallel_tool_use"), false, QStringLiteral("tool_choice.disable_parallel_tool_use"));
    if (type == QLatin1String("auto") || type == QLatin1String("none"))
        return type;
    if (type == QLatin1String("any"))
        return QStringLiteral("required");
    if (type == QLatin1String("tool"))
        return QJsonObject{{QStringLiteral("type"), QStringLiteral("function")},
                           {QStringLiteral("function"),
                            QJsonObject{{QStringLiteral("name"), readString(c, QStringLiteral("name"),
                                                                            QStringLiteral("tool_choice.name"), true)}}}};
    throw ApiError::invalid(QStringLiteral("tool_choice.type"),
                            QStringLiteral("'tool_choice.type' must be auto, any, tool or none (got '%1').").arg(type));
}

bool readThinking(const QJsonObject &body)
{
    if (!present(body, QStringLiteral("thinking")))
        return false;
    const QJsonObject t = readObject(body, QStringLiteral("thinking"), QStringLiteral("thinking"));
    const QString type = readString(t, QStringLiteral("type"), QStringLiteral("thinking.type"), true);
    if (type == QLatin1String("disabled"))
        return false;
    if (type != QLatin1String("enabled") && type != QLatin1String("adaptive"))
        throw ApiError::invalid(QStringLiteral("thinking.type"),
                                QStringLiteral("'thinking.type' must be enabled, adaptive or disabled (got '%1').").arg(type));
    // The budget is checked as Anthropic does; the model's thinking is not cut at it.
    readInteger(t, QStringLiteral("budget_tokens"), 1024, 1 << 24, QStringLiteral("thinking.budget_tokens"));
    return true;
}

} // namespace

MessagesRequest parseMessagesRequest(const QJsonObject &body, const ParseOptions &options, bool countOnly)
{
    QJsonObject chat{{QStringLiteral("messages"), readMessages(body)}};
    if (present(body, QStringLiteral("model")))
        chat.insert(QStringLiteral("model"), readString(body, QStringLiteral("model"), QStringLiteral("model"), false));
    if (!countOnly) {
        const auto maxTokens = readInteger(body, QStringLiteral("max_tokens"), 1, 1 << 24);
        if (!maxTokens)
            throw ApiError::invalid(QStringLiteral("max_tokens"), QStringLiteral("'max_tokens' is required."),
                                    QStringLiteral("missing_required_parameter"));
        chat.insert(QStringLiteral("max_tokens"), double(*maxTokens));
        chat.insert(QStringLiteral("stream"), readBool(body, QStringLiteral("stream"), false));
        chat.insert(QStringLiteral("temperature"), readNumber(body, QStringLiteral("temperature"), 1.0, 0.0, 1.0));
        chat.insert(QStringLiteral("top_p"), readNumber(body, QStringLiteral("top_p"), 1.0, 0.0, 1.0));
        if (const auto k = readInteger(body, QStringLiteral("top_k"), 0, 1 << 20))
            chat.insert(QStringLiteral("top_k"), double(*k));
        const QJsonArray stops = readArray(body, QStringLiteral("stop_sequences"), QStringLiteral("stop_sequences"));
        for (qsizetype i = 0; i < stops.size(); ++i)
            if (!stops[i].isString() || stops[i].toString().isEmpty())
                throw ApiError::invalid(at(QStringLiteral("stop_sequences"), i),
                                        QStringLiteral("Stop sequences are non-empty strings."));
        if (!stops.isEmpty())
            chat.insert(QStringLiteral("stop"), stops);
    }
    const QJsonArray tools = readFlatTools(body, {QStringLiteral("custom"), false, QStringLiteral("input_schema"), true,
                                                  QStringLiteral("client tools (name, description, input_schema)")});
    if (!tools.isEmpty())
        chat.insert(QStringLiteral("tools"), tools);
    const QJsonValue choice = readToolChoice(body);
    if (!choice.isUndefined())
        chat.insert(QStringLiteral("tool_choice"), choice);
    chat.insert(QStringLiteral("thinking"), readThinking(body));

    MessagesRequest r;
    try {
        r.chat = parseChatRequest(chat, options);
    } catch (ApiError &e) {
        // What the chat parser still finds is about the stop list or the tool choice.
        if (e.param == QLatin1String("stop"))
            e.param = QStringLiteral("stop_sequences");
        else if (e.param.startsWith(QLatin1String("tool_choice")))
            e.param = QStringLiteral("tool_choice");
        throw;
    }
    return r;
}
