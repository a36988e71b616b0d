#include "server/toolcallparser.h"

#include "server/openaijson.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QSet>

namespace {

QSet<QString> toolNames(const QJsonArray &tools)
{
    QSet<QString> names;
    for (const QJsonValue &t : tools)
        names.insert(t.toObject().value(QStringLiteral("function")).toObject().value(QStringLiteral("name")).toString());
    return names;
}

// {"name": "...", "arguments": {...} or "<json>"} -> a call, if the name is declared.
bool readCall(const QJsonValue &v, const QSet<QString> &names, ToolCall &call)
{
    if (!v.isObject())
        return false;
    const QJsonObject o = v.toObject();
    const QString name = o.value(QStringLiteral("name")).toString();
    if (!names.contains(name))
        return false;
    QJsonValue args = o.value(QStringLiteral("arguments"));
    if (args.isUndefined() || args.isNull())
        args = o.value(QStringLiteral("parameters"));
    if (args.isString()) {
        const QJsonDocument d = QJsonDocument::fromJson(args.toString().toUtf8());
        if (!d.isObject())
            return false;
        args = d.object();
    }
    if (args.isUndefined() || args.isNull())
        args = QJsonObject{};
    if (!args.isObject())
        return false;
    call.id = openai::newCallId();
    call.name = name;
    call.arguments = QString::fromUtf8(QJsonDocument(args.toObject()).toJson(QJsonDocument::Compact));
    return true;
}

bool readCalls(const QString &text, const QSet<QString> &names, QList<ToolCall> &calls)
{
    const QJsonDocument d = QJsonDocument::fromJson(text.trimmed().toUtf8());
    QList<ToolCall> found;
    if (d.isObject()) {
        ToolCall c;
        if (!readCall(d.object(), names, c))
            return false;
        found.append(c);
    } else if (d.isArray() && !d.array().isEmpty()) {
        for (const QJsonValue &v : d.array()) {
            ToolCall c;
            if (!readCall(v, names, c))
                return false;
            found.append(c);
        }
    } else {
        return false;
    }
    calls += found;
    return true;
}

} // namespace

ParsedReply parseToolCalls(const QString &reply, const QJsonArray &tools)
{
    ParsedReply out;
    const QSet<QString> names = toolNames(tools);
    if (names.isEmpty()) {
        out.content = reply;
        return out;
    }
    if (readCalls(reply, names, out.toolCalls))
        return out;

    static const QLatin1String open("<tool_call>"), close("</tool_call>");
    QString rest;
    qsizetype pos = 0;
    while (true) {
        const qsizetype a = reply.indexOf(open, pos);
        if (a < 0)
            break;
        const qsizetype b = reply.indexOf(close, a + open.size());
        const qsizetype end = b < 0 ? reply.size() : b;
        const QString inner = reply.mid(a + open.size(), end - a - open.size());
        if (!readCalls(inner, names, out.toolCalls)) {
            rest += reply.mid(pos, (b < 0 ? reply.size() : b + close.size()) - pos);
        } else {
            rest += reply.mid(pos, a - pos);
        }
        pos = b < 0 ? reply.size() : b + close.size();
    }
    rest += reply.mid(pos);
    out.content = out.toolCalls.isEmpty() ? reply : rest.trimmed();
    return out;
}
