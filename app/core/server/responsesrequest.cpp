#include "server/responsesrequest.h"

#include "server/jsonfields.h"

#include <QHash>

using namespace jsonfields;

namespace {

// A message's content as normalised parts: input_text / output_text / input_image.
QJsonArray readMessageContent(const QJsonValue &content, const QString &path, const QString &role)
{
    if (content.isString())
        return QJsonArray{QJsonObject{{QStringLiteral("type"), role == QLatin1String("assistant")
                                                                    ? QStringLiteral("output_text")
                                                                    : QStringLiteral("input_text")},
                                      {QStringLiteral("text"), content.toString()}}};
    if (!content.isArray())
        wrongType(path, QStringLiteral("a string or an array of content parts"), content);
    QJsonArray parts;
    const QJsonArray arr = content.toArray();
    for (qsizetype i = 0; i < arr.size(); ++i) {
        const QString pp = at(path, i);
        if (!arr[i].isObject())
            wrongType(pp, QStringLiteral("an object"), arr[i]);
        const QJsonObject part = arr[i].toObject();
        const QString type = readString(part, QStringLiteral("type"), pp + QStringLiteral(".type"), true);
        if (type == QLatin1String("input_text") || type == QLatin1String("output_text")) {
            parts.append(QJsonObject{{QStringLiteral("type"), type},
                                     {QStringLiteral("text"),
                                      readString(part, QStringLiteral("text"), pp + QStringLiteral(".text"), true)}});
        } else if (type == QLatin1String("refusal")) {
            parts.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("output_text")},
                                     {QStringLiteral("text"), readString(part, QStringLiteral("refusal"),
                                                                         pp + QStringLiteral(".refusal"), true)}});
        } else if (type == QLatin1String("input_image")) {
            if (role != QLatin1String("user"))
                throw ApiError::invalid(pp, QStringLiteral("Only user messages may carry images."));
            if (present(part, QStringLiteral("file_id")))
                throw ApiError::invalid(pp + QStringLiteral(".file_id"),
                                        QStringLiteral("This server has no files API: send the image inline as a "
                                                       "data: URL in 'image_url'."));
            parts.append(QJsonObject{{QStringLiteral("type"), type},
                                     {QStringLiteral("image_url"), readString(part, QStringLiteral("image_url"),
                                                                              pp + QStringLiteral(".image_url"), true)}});
        } else {
            throw ApiError::invalid(pp + QStringLiteral(".type"),
                                    QStringLiteral("Content type '%1' is not supported (use input_text, input_image "
                                                   "or output_text).").arg(type));
        }
    }
    return parts;
}

// One input item, checked and written in the one form the conversation keeps.
QJsonObject readItem(const QJsonValue &value, const QString &path)
{
    if (!value.isObject())
        wrongType(path, QStringLiteral("an object"), value);
    const QJsonObject o = value.toObject();
    // An item without a type but with a role is a message ("easy input message").
    const QString type = present(o, QStringLiteral("type"))
        ? readString(o, QStringLiteral("type"), path + QStringLiteral(".type"), true)
        : QStringLiteral("message");
    if (type == QLatin1String("message")) {
        QString role = readString(o, QStringLiteral("role"), path + QStringLiteral(".role"), true);
        if (role == QLatin1String("developer"))
            role = QStringLiteral("system");
        if (role != QLatin1String("user") && role != QLatin1String("assistant") && role != QLatin1String("system"))
            throw ApiError::invalid(path + QStringLiteral(".role"),
                                    QStringLiteral("Unknown role '%1' (use user, assistant, system or developer).")
                                        .arg(role));
        const QJsonValue content = o.value(QStringLiteral("content"));
        if (content.isUndefined() || content.isNull())
            throw ApiError::invalid(path + QStringLiteral(".content"),
                                    QStringLiteral("'%1.content' is required.").arg(path),
                                    QStringLiteral("missing_required_parameter"));
        return {{QStringLiteral("type"), type},
                {QStringLiteral("role"), role},
                {QStringLiteral("content"), readMessageContent(content, path + QStringLiteral(".content"), role)}};
    }
    if (type == QLatin1String("function_call")) {
        return {{QStringLiteral("type"), type},
                {QStringLiteral("call_id"), readString(o, QStringLiteral("call_id"), path + QStringLiteral(".call_id"), true)},
                {QStringLiteral("name"), readString(o, QStringLiteral("name"), path + QStringLiteral(".name"), true)},
                {QStringLiteral("arguments"),
                 readString(o, QStringLiteral("arguments"), path + QStringLiteral(".arguments"), true)}};
    }
    if (type == QLatin1String("function_call_output")) {
        const QJsonValue out = o.value(QStringLiteral("output"));
        QString text;
        if (out.isString()) {
            text = out.toString();
        } else if (out.isArray()) {
            // Text parts only: a tool's pictures have no place in a tool message.
            const QJsonArray parts = readMessageContent(out, path + QStringLiteral(".output"), QStringLiteral("tool"));
            for (const QJsonValue &p : parts)
                text += p.toObject().value(QStringLiteral("text")).toString();
        } else {
            wrongType(path + QStringLiteral(".output"), QStringLiteral("a string"), out);
        }
        return {{QStringLiteral("type"), type},
                {QStringLiteral("call_id"), readString(o, QStringLiteral("call_id"), path + QStringLiteral(".call_id"), true)},
                {QStringLiteral("output"), text}};
    }
    if (type == QLatin1String("reasoning")) {
        // The reasoning of an earlier turn goes back to the model with its answer.
        QString text;
        for (const QString &key : {QStringLiteral("content"), QStringLiteral("summary")}) {
            const QJsonArray parts = readArray(o, key, path + QLatin1Char('.') + key);
            for (qsizetype i = 0; i < parts.size() && text.isEmpty(); ++i)
                text += parts[i].toObject().value(QStringLiteral("text")).toString();
        }
        return {{QStringLiteral("type"), type},
                {QStringLiteral("content"), QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("reasoning_text")},
                                                                   {QStringLiteral("text"), text}}}}};
    }
    throw ApiError::invalid(path + QStringLiteral(".type"),
                            QStringLiteral("Input item type '%1' is not supported (use message, function_call, "
                                           "function_call_output or reasoning).").arg(type));
}

QJsonArray readInput(const QJsonObject &body)
{
    const QJsonValue input = body.value(QStringLiteral("input"));
    if (input.isUndefined() || input.isNull())
        throw ApiError::invalid(QStringLiteral("input"), QStringLiteral("'input' is required."),
                                QStringLiteral("missing_required_parameter"));
    if (input.isString())
        return QJsonArray{readItem(QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                               {QStringLiteral("content"), input}},
                                   QStringLiteral("input"))};
    if (!input.isArray())
        wrongType(QStringLiteral("input"), QStringLiteral("a string or an array of input items"), input);
    QJsonArray items;
    const QJsonArray arr = input.toArray();
    for (qsizetype i = 0; i < arr.size(); ++i)
        items.append(readItem(arr[i], at(QStringLiteral("input"), i)));
    return items;
}

QJsonValue readToolChoice(const QJsonObject &body)
{
    if (!present(body, QStringLiteral("tool_choice")))
        return QJsonValue(QJsonValue::Undefined);
    const QJsonValue c = body.value(QStringLiteral("tool_choice"));
    if (c.isString()) {
        const QString s = c.toString();
        if (s != QLatin1String("auto") && s != QLatin1String("none") && s != QLatin1String("required"))
            throw ApiError::invalid(QStringLiteral("tool_choice"),
                                    QStringLiteral("'tool_choice' must be auto, none, required or a function "
                                                   "(got '%1').").arg(s));
        return c;
    }
    if (!c.isObject())
        wrongType(QStringLiteral("tool_choice"), QStringLiteral("a string or an object"), c);
    const QJsonObject o = c.toObject();
    const QString type = readString(o, QStringLiteral("type"), QStringLiteral("tool_choice.type"), true);
    if (type != QLatin1String("function"))
        throw ApiError::invalid(QStringLiteral("tool_choice.type"),
                                QStringLiteral("'tool_choice' of type '%1' is not supported (use function).").arg(type));
    const QString name = readString(o, QStringLiteral("name"), QStringLiteral("tool_choice.name"), true);
    return QJsonObject{{QStringLiteral("type"), QStringLiteral("function")},
                       {QStringLiteral("function"), QJsonObject{{QStringLiteral("name"), name}}}};
}

// text.format as the chat's response_format (undefined: plain text).
QJsonValue readTextFormat(const QJsonObject &body)
{
    const QJsonObject text = readObject(body, QStringLiteral("text"), QStringLiteral("text"));
    const QJsonObject format = readObject(text, QStringLiteral("format"), QStringLiteral("text.format"));
    if (format.isEmpty())
        return QJsonValue(QJsonValue::Undefined);
    const QString type = readString(format, QStringLiteral("type"), QStringLiteral("text.format.type"), true);
    if (type == QLatin1String("text"))
        return QJsonValue(QJsonValue::Undefined);
    if (type == QLatin1String("json_object"))
        return QJsonObject{{QStringLiteral("type"), type}};
    if (type != QLatin1String("json_schema"))
        throw ApiError::invalid(QStringLiteral("text.format.type"),
                                QStringLiteral("'text.format.type' must be text, json_object or json_schema (got '%1').")
                                    .arg(type));
    QJsonObject js{{QStringLiteral("name"),
                    readString(format, QStringLiteral("name"), QStringLiteral("text.format.name"), true)},
                   {QStringLiteral("strict"), readBool(format, QStringLiteral("strict"), false,
                                                       QStringLiteral("text.format.strict"))}};
    if (present(format, QStringLiteral("schema")))
        js.insert(QStringLiteral("schema"),
                  readObject(format, QStringLiteral("schema"), QStringLiteral("text.format.schema")));
    return QJsonObject{{QStringLiteral("type"), type}, {QStringLiteral("json_schema"), js}};
}

// reasoning.effort in the spelling the chat templates read: none and minimal switch thinking
// off, low and high pass as they are, xhigh is K3's max, medium leaves the model's default.
QJsonValue readEffort(const QJsonObject &body)
{
    const QJsonObject reasoning = readObject(body, QStringLiteral("reasoning"), QStringLiteral("reasoning"));
    const QString effort = readString(reasoning, QStringLiteral("effort"), QStringLiteral("reasoning.effort"), false);
    if (effort.isEmpty() || effort == QLatin1String("medium"))
        return QJsonValue(QJsonValue::Undefined);
    if (effort == QLatin1String("none") || effort == QLatin1String("minimal"))
        return QStringLiteral("none");
    if (effort == QLatin1String("low") || effort == QLatin1String("high"))
        return effort;
    if (effort == QLatin1String("xhigh"))
        return QStringLiteral("max");
    throw ApiError::invalid(QStringLiteral("reasoning.effort"),
                            QStringLiteral("'reasoning.effort' must be none, minimal, low, medium, high or xhigh "
                                           "(got '%1').").arg(effort));
}

void insertIf(QJsonObject &o, const QString &key, const QJsonValue &v)
{
    if (!v.isUndefined())
        o.insert(key, v);
}

} // namespace

QJsonArray responsesItemsToChat(const QJsonArray &items, const QString &instructions)
{
    QJsonArray messages;
    if (!instructions.isEmpty())
        messages.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("system")},
                                    {QStringLiteral("content"), instructions}});
    QString reasoning;            // waits for the assistant message it belongs to
    QHash<QString, QString> names; // call id -> function, so tool results name their tool
    // The assistant message being built: its text, calls and reasoning.
    QJsonObject assistant;
    auto flush = [&] {
        if (!assistant.isEmpty())
            messages.append(assistant);
        assistant = {};
    };
    auto openAssistant = [&] {
        if (assistant.isEmpty()) {
            assistant.insert(QStringLiteral("role"), QStringLiteral("assistant"));
            if (!reasoning.isEmpty())
                assistant.insert(QStringLiteral("reasoning_content"), reasoning);
            reasoning.clear();
        }
    };
    for (const QJsonValue &v : items) {
        const QJsonObject item = v.toObject();
        const QString type = item.value(QStringLiteral("type")).toString();
        if (type == QLatin1String("reasoning")) {
            flush();
            for (const QJsonValue &p : item.value(QStringLiteral("content")).toArray())
                reasoning += p.toObject().value(QStringLiteral("text")).toString();
        } else if (type == QLatin1String("function_call")) {
            openAssistant();
            QJsonArray calls = assistant.value(QStringLiteral("tool_calls")).toArray();
            const QString id = item.value(QStringLiteral("call_id")).toString();
            names.insert(id, item.value(QStringLiteral("name")).toString());
            calls.append(QJsonObject{{QStringLiteral("id"), id},
                                     {QStringLiteral("type"), QStringLiteral("function")},
                                     {QStringLiteral("function"),
                                      QJsonObject{{QStringLiteral("name"), item.value(QStringLiteral("name"))},
                                                  {QStringLiteral("arguments"), item.value(QStringLiteral("arguments"))}}}});
            assistant.insert(QStringLiteral("tool_calls"), calls);
        } else if (type == QLatin1String("function_call_output")) {
            flush();
            const QString id = item.value(QStringLiteral("call_id")).toString();
            QJsonObject tool{{QStringLiteral("role"), QStringLiteral("tool")},
                             {QStringLiteral("tool_call_id"), id},
                             {QStringLiteral("content"), item.value(QStringLiteral("output"))}};
            if (names.contains(id))
                tool.insert(QStringLiteral("name"), names.value(id));
            messages.append(tool);
        } else { // message
            const QString role = item.value(QStringLiteral("role")).toString();
            const QJsonArray parts = item.value(QStringLiteral("content")).toArray();
            if (role == QLatin1String("assistant")) {
                flush();
                openAssistant();
                QString text;
                for (const QJsonValue &p : parts)
                    text += p.toObject().value(QStringLiteral("text")).toString();
                assistant.insert(QStringLiteral("content"), text);
                continue; // calls that follow belong to this message
            }
            flush();
            QJsonArray content;
            for (const QJsonValue &pv : parts) {
                const QJsonObject p = pv.toObject();
                if (p.value(QStringLiteral("type")).toString() == QLatin1String("input_image"))
                    content.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("image_url")},
                                               {QStringLiteral("image_url"),
                                                QJsonObject{{QStringLiteral("url"), p.value(QStringLiteral("image_url"))}}}});
                else
                    content.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("text")},
                                               {QStringLiteral("text"), p.value(QStringLiteral("text"))}});
            }
            messages.append(QJsonObject{{QStringLiteral("role"), role}, {QStringLiteral("content"), content}});
        }
    }
    flush();
    return messages;
}

ResponsesRequest parseResponsesRequest(const QJsonObject &body, const ResponseLookup &lookup, const ParseOptions &options)
{
    ResponsesRequest r;
    r.previousResponseId = readString(body, QStringLiteral("previous_response_id"),
                                      QStringLiteral("previous_response_id"), false);
    if (!r.previousResponseId.isEmpty()) {
        const std::optional<QJsonArray> earlier = lookup ? lookup(r.previousResponseId) : std::nullopt;
        if (!earlier)
            throw ApiError::invalid(QStringLiteral("previous_response_id"),
                                    QStringLiteral("Previous response with id '%1' not found (this server keeps the "
                                                   "latest responses in memory, and none sent with store: false).")
                                        .arg(r.previousResponseId),
                                    QStringLiteral("previous_response_not_found"));
        r.conversation = *earlier;
    }
    for (const QJsonValue &item : readInput(body))
        r.conversation.append(item);
    r.store = readBool(body, QStringLiteral("store"), true);
    if (readBool(body, QStringLiteral("background"), false))
        throw ApiError::invalid(QStringLiteral("background"),
                                QStringLiteral("Background responses are not supported: leave 'background' false."));
    const QString instructions = readString(body, QStringLiteral("instructions"), QStringLiteral("instructions"), false);

    // The request as Chat Completions reads it; its parser checks the shared fields again.
    QJsonObject chat{{QStringLiteral("messages"), responsesItemsToChat(r.conversation, instructions)}};
    insertIf(chat, QStringLiteral("model"), body.value(QStringLiteral("model")));
    chat.insert(QStringLiteral("stream"), readBool(body, QStringLiteral("stream"), false));
    if (const auto n = readInteger(body, QStringLiteral("max_output_tokens"), 1, 1 << 24))
        chat.insert(QStringLiteral("max_tokens"), double(*n));
    chat.insert(QStringLiteral("temperature"), readNumber(body, QStringLiteral("temperature"), 1.0, 0.0, 2.0));
    chat.insert(QStringLiteral("top_p"), readNumber(body, QStringLiteral("top_p"), 1.0, 0.0, 1.0));
    const QJsonArray tools =
        readFlatTools(body, {QStringLiteral("function"), true, QStringLiteral("parameters"), false, QStringLiteral("function tools")});
    if (!tools.isEmpty())
        chat.insert(QStringLiteral("tools"), tools);
    const QJsonValue choice = readToolChoice(body);
    insertIf(chat, QStringLiteral("tool_choice"), choice);
    insertIf(chat, QStringLiteral("response_format"), readTextFormat(body));
    insertIf(chat, QStringLiteral("reasoning_effort"), readEffort(body));
    try {
        r.chat = parseChatRequest(chat, options);
    } catch (ApiError &e) {
        // The chat parser names chat fields; what it can still find at fault here is the
        // conversation as a whole or a tool choice.
        if (e.param.startsWith(QLatin1String("messages")))
            e.param = QStringLiteral("input");
        else if (e.param.startsWith(QLatin1String("tool_choice")))
            e.param = QStringLiteral("tool_choice");
        throw;
    }

    const QJsonObject reasoning = readObject(body, QStringLiteral("reasoning"), QStringLiteral("reasoning"));
    r.echo = {{QStringLiteral("instructions"), instructions.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(instructions)},
              {QStringLiteral("max_output_tokens"), r.chat.maxTokens ? QJsonValue(*r.chat.maxTokens) : QJsonValue(QJsonValue::Null)},
              {QStringLiteral("temperature"), r.chat.temperature},
              {QStringLiteral("top_p"), r.chat.topP},
              {QStringLiteral("tools"), readArray(body, QStringLiteral("tools"), QStringLiteral("tools"))},
              {QStringLiteral("tool_choice"), present(body, QStringLiteral("tool_choice"))
                                                  ? body.value(QStringLiteral("tool_choice"))
                                                  : QJsonValue(QStringLiteral("auto"))},
              {QStringLiteral("text"), present(body, QStringLiteral("text"))
                                           ? body.value(QStringLiteral("text"))
                                           : QJsonValue(QJsonObject{{QStringLiteral("format"),
                                                                     QJsonObject{{QStringLiteral("type"), QStringLiteral("text")}}}})},
              {QStringLiteral("reasoning"), QJsonObject{{QStringLiteral("effort"), reasoning.value(QStringLiteral("effort")).isString()
                                                                                     ? reasoning.value(QStringLiteral("effort"))
                                                                                     : QJsonValue(QJsonValue::Null)},
                                                        {QStringLiteral("summary"), QJsonValue(QJsonValue::Null)}}},
              {QStringLiteral("metadata"), readObject(body, QStringLiteral("metadata"), QStringLiteral("metadata"))},
              {QStringLiteral("parallel_tool_calls"), readBool(body, QStringLiteral("parallel_tool_calls"), true)},
              {QStringLiteral("store"), r.store},
              {QStringLiteral("previous_response_id"), r.previousResponseId.isEmpty() ? QJsonValue(QJsonValue::Null)
                                                                                     : QJsonValue(r.previousResponseId)}};
    return r;
}
