// Readers for the fields of a JSON request body, shared by every API's request parser
// (Chat Completions, Responses, Messages). Each one checks the field's type and range and
// throws ApiError (400) naming the field by its path in the request, so a client learns
// exactly what to fix.
#pragma once

#include "server/apierror.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QString>

#include <optional>

namespace jsonfields {

// "a string", "an array", ... for messages; "missing" for an absent value.
QString typeName(const QJsonValue &v);
[[noreturn]] void wrongType(const QString &param, const QString &expected, const QJsonValue &got);
// A field that is there and not null.
bool present(const QJsonObject &o, const QString &key);
// `path` names the field in errors (defaults to `key`).
bool readBool(const QJsonObject &o, const QString &key, bool fallback, const QString &path = {});
double readNumber(const QJsonObject &o, const QString &key, double fallback, double lo, double hi,
                  const QString &path = {});
// Integers arrive as JSON numbers: fractions and values beyond exact doubles are refused.
std::optional<qint64> readInteger(const QJsonObject &o, const QString &key, qint64 lo, qint64 hi,
                                  const QString &path = {});
QString readString(const QJsonObject &o, const QString &key, const QString &path, bool required);
// An object or array field (absent or null: an empty one).
QJsonObject readObject(const QJsonObject &o, const QString &key, const QString &path);
QJsonArray readArray(const QJsonObject &o, const QString &key, const QString &path);
// An array field that must be there and hold at least one `item` ("message").
QJsonArray readNonEmptyArray(const QJsonObject &o, const QString &key, const QString &item);
// "path[i]": an array element's path in errors.
QString at(const QString &path, qsizetype i);
// A tool declared flat, {name, description, SCHEMA}, as the Responses (`parameters`) and
// Messages (`input_schema`, required) APIs declare them, as a Chat Completions tool:
// {"type": "function", "function": {name, description, parameters}}. Its type is the
// caller's to check.
QJsonObject chatToolFromFlat(const QJsonObject &tool, const QString &path, const QString &schemaKey,
                             bool schemaRequired);
// How an API declares its flat tools: the one `type` this server runs for it, whether the
// type may be left out, the schema's key and whether it must be there, and the words for
// what it runs (in the error for any other type).
struct FlatToolRules {
    QString type;
    bool typeRequired = false;
    QString schemaKey;
    bool schemaRequired = false;
    QString runs;
};
// The body's `tools`, each checked against `rules`, as Chat Completions tools.
QJsonArray readFlatTools(const QJsonObject &body, const FlatToolRules &rules);

} // namespace jsonfields
