#include "server/apirequest.h"

#include "server/jsonfields.h"
#include "units/units.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QRegularExpression>
#include <QUrl>

#include <cmath>

namespace {

using namespace jsonfields;

// Fields every completion request shares.
void readCommon(const QJsonObject &body, ApiRequest &r)
{
    r.model = readString(body, QStringLiteral("model"), QStringLiteral("model"), false);
    r.stream = readBool(body, QStringLiteral("stream"), false);
    if (present(body, QStringLiteral("stream_options"))) {
        const QJsonValue so = body.value(QStringLiteral("stream_options"));
        if (!so.isObject())
            wrongType(QStringLiteral("stream_options"), QStringLiteral("an object"), so);
        r.includeUsage = readBool(so.toObject(), QStringLiteral("include_usage"), false,
                                  QStringLiteral("stream_options.include_usage"));
    }

    const qint64 kMaxTokens = 1 << 24;
    const auto mct = readInteger(body, QStringLiteral("max_completion_tokens"), 1, kMaxTokens);
    const auto mt = readInteger(body, QStringLiteral("max_tokens"), 1, kMaxTokens);
    if (mct)
        r.maxTokens = int(*mct);
    else if (mt)
        r.maxTokens = int(*mt);

    r.temperature = readNumber(body, QStringLiteral("temperature"), 1.0, 0.0, 2.0);
    r.topP = readNumber(body, QStringLiteral("top_p"), 1.0, 0.0, 1.0);
    r.topK = int(readInteger(body, QStringLiteral("top_k"), 0, 1 << 20).value_or(0));
    r.keepSpecialText = !readBool(body, QStringLiteral("skip_special_tokens"), true, QStringLiteral("skip_special_tokens"));
    if (const auto seed = readInteger(body, QStringLiteral("seed"), -(qint64(1) << 53), qint64(1) << 53))
        r.seed = quint64(*seed);
    if (const auto n = readInteger(body, QStringLiteral("n"), 1, 128); n && *n != 1)
        throw ApiError::invalid(QStringLiteral("n"), QStringLiteral("'n' must be 1: this server returns one choice."));

    if (present(body, QStringLiteral("stop"))) {
        const QJsonValue s = body.value(QStringLiteral("stop"));
        QJsonArray list;
        if (s.isString())
            list.append(s);
        else if (s.isArray())
            list = s.toArray();
        else
            wrongType(QStringLiteral("stop"), QStringLiteral("a string or an array of strings"), s);
        if (list.size() > 16)
            throw ApiError::invalid(QStringLiteral("stop"), QStringLiteral("'stop' holds at most 16 strings."));
        for (const QJsonValue &v : list) {
            if (!v.isString())
                wrongType(QStringLiteral("stop"), QStringLiteral("a string or an array of strings"), v);
            if (v.toString().isEmpty())
                throw ApiError::invalid(QStringLiteral("stop"), QStringLiteral("'stop' strings must not be empty."));
            r.stop << v.toString();
        }
    }
}

// data:[<mime>][;base64],<payload>
ContentPart readDataUrl(const QString &url, const QString &path, const ParseOptions &options)
{
    const qsizetype comma = url.indexOf(QLatin1Char(','));
    if (comma < 0)
        throw ApiError::invalid(path, QStringLiteral("'%1' is not a valid data: URL.").arg(path));
    const QString header = url.mid(5, comma - 5);
    const QStringList bits = header.split(QLatin1Char(';'));
    ContentPart p;
    p.kind = ContentPart::Image;
    p.imageMime = bits.value(0).trimmed().toLower();
    if (!p.imageMime.isEmpty() && !p.imageMime.startsWith(QLatin1String("image/")))
        throw ApiError::invalid(path, QStringLiteral("'%1' holds %2, not an image.").arg(path, p.imageMime));
    const QByteArray payload = url.mid(comma + 1).toLatin1();
    if (bits.contains(QStringLiteral("base64"))) {
        auto decoded = QByteArray::fromBase64Encoding(payload, QByteArray::AbortOnBase64DecodingErrors);
        if (!decoded)
            throw ApiError::invalid(path, QStringLiteral("'%1' has invalid base64 data.").arg(path));
        p.imageData = *decoded;
    } else {
        p.imageData = QByteArray::fromPercentEncoding(payload);
    }
    if (p.imageData.isEmpty())
        throw ApiError::invalid(path, QStringLiteral("'%1' holds an empty image.").arg(path));
    if (p.imageData.size() > options.maxImageBytes)
        throw ApiError::invalid(path, QStringLiteral("'%1' is larger than %2.")
                                          .arg(path, Units::bytes(options.maxImageBytes)));
    return p;
}

ContentPart readImageUrl(const QString &url, const QString &path, const ParseOptions &options)
{
    if (url.startsWith(QLatin1String("data:"), Qt::CaseInsensitive))
        return readDataUrl(url, path, options);
    if (url.startsWith(QLatin1String("http:"), Qt::CaseInsensitive)
        || url.startsWith(QLatin1String("https:"), Qt::CaseInsensitive))
        throw ApiError::invalid(path, QStringLiteral("This server never fetches remote URLs: send the image "
                                                     "inline as a data: URL (base64)."));
    if (!options.allowLocalImages)
        throw ApiError::invalid(path, QStringLiteral("Local image files are not allowed on this server "
                                                     "(enable \"allow local images\"); send a data: URL."));
    const QString file = url.startsWith(QLatin1String("file:"), Qt::CaseInsensitive) ? QUrl(url).toLocalFile() : url;
    const QFileInfo info(file);
    if (!info.isAbsolute() || !info.isFile() || !info.isReadable())
        throw ApiError::invalid(path, QStringLiteral("'%1': no readable image file at %2 (give an absolute path).")
                                          .arg(path, file));
    ContentPart p;
    p.kind = ContentPart::Image;
    p.imagePath = info.absoluteFilePath();
    return p;
}

QList<ContentPart> readContent(const QJsonValue &content, const QString &path, bool imagesAllowed,
                               const ParseOptions &options)
{
    QList<ContentPart> parts;
    if (content.isUndefined() || content.isNull())
        return parts;
    if (content.isString()) {
        parts.append(ContentPart{ContentPart::Text, content.toString(), {}, {}, {}});
        return parts;
    }
    if (!content.isArray())
        wrongType(path, QStringLiteral("a string or an array of content parts"), content);
    const QJsonArray arr = content.toArray();
    for (qsizetype i = 0; i < arr.size(); ++i) {
        const QString pp = QStringLiteral("%1[%2]").arg(path).arg(i);
        if (!arr[i].isObject())
            wrongType(pp, QStringLiteral("an object"), arr[i]);
        const QJsonObject part = arr[i].toObject();
        const QString type = readString(part, QStringLiteral("type"), pp + QStringLiteral(".type"), true);
        if (type == QLatin1String("text") || type == QLatin1String("input_text")) {
            parts.append(ContentPart{ContentPart::Text,
                                     readString(part, QStringLiteral("text"), pp + QStringLiteral(".text"), true),
                                     {}, {}, {}});
        } else if (type == QLatin1String("image_url")) {
            if (!imagesAllowed)
                throw ApiError::invalid(pp, QStringLiteral("Only user messages may carry images."));
            const QJsonValue iu = part.value(QStringLiteral("image_url"));
            QString url;
            if (iu.isString())
                url = iu.toString();
            else if (iu.isObject())
                url = readString(iu.toObject(), QStringLiteral("url"), pp + QStringLiteral(".image_url.url"), true);
            else
                wrongType(pp + QStringLiteral(".image_url"), QStringLiteral("an object with a url"), iu);
            parts.append(readImageUrl(url, pp + QStringLiteral(".image_url.url"), options));
        } else {
            throw ApiError::invalid(pp + QStringLiteral(".type"),
                                    QStringLiteral("Content part type '%1' is not supported (use text or image_url).")
                                        .arg(type));
        }
    }
    return parts;
}

ApiChatMessage readMessage(const QJsonValue &value, int index, const ParseOptions &options)
{
    const QString path = QStringLiteral("messages[%1]").arg(index);
    if (!value.isObject())
        wrongType(path, QStringLiteral("an object"), value);
    const QJsonObject o = value.toObject();
    ApiChatMessage m;
    m.role = readString(o, QStringLiteral("role"), path + QStringLiteral(".role"), true);
    if (m.role == QLatin1String("developer"))
        m.role = QStringLiteral("system");
    static const QStringList roles{QStringLiteral("system"), QStringLiteral("user"), QStringLiteral("assistant"),
                                   QStringLiteral("tool")};
    if (!roles.contains(m.role))
        throw ApiError::invalid(path + QStringLiteral(".role"),
                                QStringLiteral("Unknown role '%1' (use system, user, assistant or tool).").arg(m.role));
    m.name = readString(o, QStringLiteral("name"), path + QStringLiteral(".name"), false);
    m.parts = readContent(o.value(QStringLiteral("content")), path + QStringLiteral(".content"),
                          m.role == QLatin1String("user"), options);
    if (m.role == QLatin1String("tool"))
        m.toolCallId = readString(o, QStringLiteral("tool_call_id"), path + QStringLiteral(".tool_call_id"), false);
    if (m.role == QLatin1String("assistant") && present(o, QStringLiteral("tool_calls"))) {
        const QJsonValue tc = o.value(QStringLiteral("tool_calls"));
        if (!tc.isArray())
            wrongType(path + QStringLiteral(".tool_calls"), QStringLiteral("an array"), tc);
        m.toolCalls = tc.toArray();
        for (qsizetype i = 0; i < m.toolCalls.size(); ++i) {
            const QString cp = QStringLiteral("%1.tool_calls[%2]").arg(path).arg(i);
            if (!m.toolCalls[i].isObject())
                wrongType(cp, QStringLiteral("an object"), m.toolCalls[i]);
            const QJsonValue fn = m.toolCalls[i].toObject().value(QStringLiteral("function"));
            if (!fn.isObject())
                wrongType(cp + QStringLiteral(".function"), QStringLiteral("an object"), fn);
            readString(fn.toObject(), QStringLiteral("name"), cp + QStringLiteral(".function.name"), true);
        }
    }
    const bool hasContent = !o.value(QStringLiteral("content")).isUndefined() && !o.value(QStringLiteral("content")).isNull();
    if (!hasContent && m.toolCalls.isEmpty())
        throw ApiError::invalid(path + QStringLiteral(".content"), QStringLiteral("'%1.content' is required.").arg(path),
                                QStringLiteral("missing_required_parameter"));
    return m;
}

void readTools(const QJsonObject &body, ApiRequest &r)
{
    if (present(body, QStringLiteral("tools"))) {
        const QJsonValue t = body.value(QStringLiteral("tools"));
        if (!t.isArray())
            wrongType(QStringLiteral("tools"), QStringLiteral("an array"), t);
        static const QRegularExpression validName(QStringLiteral("^[A-Za-z0-9_-]{1,64}$"));
        const QJsonArray arr = t.toArray();
        for (qsizetype i = 0; i < arr.size(); ++i) {
            const QString path = QStringLiteral("tools[%1]").arg(i);
            if (!arr[i].isObject())
                wrongType(path, QStringLiteral("an object"), arr[i]);
            const QJsonObject tool = arr[i].toObject();
            const QString type = readString(tool, QStringLiteral("type"), path + QStringLiteral(".type"), true);
            if (type != QLatin1String("function"))
                throw ApiError::invalid(path + QStringLiteral(".type"),
                                        QStringLiteral("Only tools of type 'function' are supported."));
            const QJsonValue fn = tool.value(QStringLiteral("function"));
            if (!fn.isObject())
                wrongType(path + QStringLiteral(".function"), QStringLiteral("an object"), fn);
            const QJsonObject f = fn.toObject();
            const QString name = readString(f, QStringLiteral("name"), path + QStringLiteral(".function.name"), true);
            if (!validName.match(name).hasMatch())
                throw ApiError::invalid(path + QStringLiteral(".function.name"),
                                        QStringLiteral("Tool names are 1 to 64 letters, digits, '_' or '-' (got '%1').")
                                            .arg(name));
            if (present(f, QStringLiteral("parameters")) && !f.value(QStringLiteral("parameters")).isObject())
                wrongType(path + QStringLiteral(".function.parameters"), QStringLiteral("an object (a JSON Schema)"),
                          f.value(QStringLiteral("parameters")));
            readString(f, QStringLiteral("description"), path + QStringLiteral(".function.description"), false);
        }
        r.tools = arr;
    }

    if (present(body, QStringLiteral("tool_choice"))) {
        const QJsonValue c = body.value(QStringLiteral("tool_choice"));
        if (c.isString()) {
            const QString s = c.toString();
            if (s == QLatin1String("auto"))
                r.toolChoice = ToolChoice::Auto;
            else if (s == QLatin1String("none"))
                r.toolChoice = ToolChoice::None;
            else if (s == QLatin1String("required"))
                r.toolChoice = ToolChoice::Required;
            else
                throw ApiError::invalid(QStringLiteral("tool_choice"),
                                        QStringLiteral("'tool_choice' must be auto, none, required or a named function "
                                                       "(got '%1').").arg(s));
        } else if (c.isObject()) {
            const QJsonValue fn = c.toObject().value(QStringLiteral("function"));
            if (!fn.isObject())
                wrongType(QStringLiteral("tool_choice.function"), QStringLiteral("an object"), fn);
            r.toolName = readString(fn.toObject(), QStringLiteral("name"), QStringLiteral("tool_choice.function.name"), true);
            r.toolChoice = ToolChoice::Named;
        } else {
            wrongType(QStringLiteral("tool_choice"), QStringLiteral("a string or an object"), c);
        }
    }
    if ((r.toolChoice == ToolChoice::Required || r.toolChoice == ToolChoice::Named) && r.tools.isEmpty())
        throw ApiError::invalid(QStringLiteral("tool_choice"), QStringLiteral("'tool_choice' asks for a tool call but "
                                                                              "'tools' is empty."));
    if (r.toolChoice == ToolChoice::Named) {
        bool found = false;
        for (const QJsonValue &t : r.tools)
            found = found
                || t.toObject().value(QStringLiteral("function")).toObject().value(QStringLiteral("name")).toString()
                    == r.toolName;
        if (!found)
            throw ApiError::invalid(QStringLiteral("tool_choice.function.name"),
                                    QStringLiteral("'tool_choice' names '%1', which is not in 'tools'.").arg(r.toolName));
    }
}

void readResponseFormat(const QJsonObject &body, ApiRequest &r)
{
    if (!present(body, QStringLiteral("response_format")))
        return;
    const QJsonValue v = body.value(QStringLiteral("response_format"));
    if (!v.isObject())
        wrongType(QStringLiteral("response_format"), QStringLiteral("an object"), v);
    const QJsonObject rf = v.toObject();
    const QString type = readString(rf, QStringLiteral("type"), QStringLiteral("response_format.type"), true);
    if (type == QLatin1String("text")) {
        r.responseFormat = ResponseFormat::Text;
    } else if (type == QLatin1String("json_object")) {
        r.responseFormat = ResponseFormat::JsonObject;
    } else if (type == QLatin1String("json_schema")) {
        const QJsonValue js = rf.value(QStringLiteral("json_schema"));
        if (!js.isObject())
            wrongType(QStringLiteral("response_format.json_schema"), QStringLiteral("an object"), js);
        const QJsonObject o = js.toObject();
        r.schemaName = readString(o, QStringLiteral("name"), QStringLiteral("response_format.json_schema.name"), true);
        readBool(o, QStringLiteral("strict"), false, QStringLiteral("response_format.json_schema.strict"));
        const QJsonValue schema = o.value(QStringLiteral("schema"));
        if (schema.isUndefined() || schema.isNull())
            r.schema = QJsonObject{}; // any JSON value, as OpenAI reads a missing schema
        else if (!schema.isObject())
            wrongType(QStringLiteral("response_format.json_schema.schema"), QStringLiteral("an object"), schema);
        else
            r.schema = schema.toObject();
        r.responseFormat = ResponseFormat::JsonSchema;
    } else {
        throw ApiError::invalid(QStringLiteral("response_format.type"),
                                QStringLiteral("'response_format.type' must be text, json_object or json_schema "
                                               "(got '%1').").arg(type));
    }
}

} // namespace

QString ApiChatMessage::text() const
{
    QString out;
    for (const ContentPart &p : parts) {
        if (p.kind != ContentPart::Text)
            continue;
        if (!out.isEmpty())
            out += QLatin1Char('\n');
        out += p.text;
    }
    return out;
}

bool ApiRequest::hasImages() const
{
    for (const ApiChatMessage &m : messages)
        for (const ContentPart &p : m.parts)
            if (p.kind == ContentPart::Image)
                return true;
    return false;
}

QJsonObject parseJsonBody(const QByteArray &body)
{
    if (body.trimmed().isEmpty())
        throw ApiError::malformedJson(QStringLiteral("the body is empty"));
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(body, &error);
    if (error.error != QJsonParseError::NoError)
        throw ApiError::malformedJson(QStringLiteral("%1 at offset %2").arg(error.errorString()).arg(error.offset));
    if (!doc.isObject())
        throw ApiError::malformedJson(QStringLiteral("expected an object"));
    return doc.object();
}

ApiRequest parseChatRequest(const QJsonObject &body, const ParseOptions &options)
{
    ApiRequest r;
    r.kind = ApiRequest::Chat;
    readCommon(body, r);
    const QJsonArray arr = readNonEmptyArray(body, QStringLiteral("messages"), QStringLiteral("message"));
    for (qsizetype i = 0; i < arr.size(); ++i)
        r.messages.append(readMessage(arr[i], int(i), options));
    readTools(body, r);
    readResponseFormat(body, r);
    r.body = body;
    return r;
}

ApiRequest parseCompletionRequest(const QJsonObject &body, const ParseOptions &)
{
    ApiRequest r;
    r.kind = ApiRequest::Completion;
    readCommon(body, r);
    const QJsonValue p = body.value(QStringLiteral("prompt"));
    if (p.isUndefined() || p.isNull())
        throw ApiError::invalid(QStringLiteral("prompt"), QStringLiteral("'prompt' is required."),
                                QStringLiteral("missing_required_parameter"));
    if (p.isString()) {
        r.prompt = p.toString();
    } else if (p.isArray() && p.toArray().size() == 1 && p.toArray().first().isString()) {
        r.prompt = p.toArray().first().toString();
    } else if (p.isArray()) {
        throw ApiError::invalid(QStringLiteral("prompt"), QStringLiteral("'prompt' must be one string (batches and "
                                                                         "token arrays are not supported)."));
    } else {
        wrongType(QStringLiteral("prompt"), QStringLiteral("a string"), p);
    }
    if (present(body, QStringLiteral("suffix")))
        throw ApiError::invalid(QStringLiteral("suffix"), QStringLiteral("'suffix' (fill-in-the-middle) is not supported."));
    return r;
}
