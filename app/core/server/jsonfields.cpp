#include "server/jsonfields.h"

#include <QJsonArray>

#include <cmath>

namespace jsonfields {

namespace {
const QString kNumber = QStringLiteral("a number");
} // namespace


QString typeName(const QJsonValue &v)
{
    switch (v.type()) {
    case QJsonValue::Null:
        return QStringLiteral("null");
    case QJsonValue::Bool:
        return QStringLiteral("a boolean");
    case QJsonValue::Double:
        return QStringLiteral("a number");
    case QJsonValue::String:
        return QStringLiteral("a string");
    case QJsonValue::Array:
        return QStringLiteral("an array");
    case QJsonValue::Object:
        return QStringLiteral("an object");
    case QJsonValue::Undefined:
        break;
    }
    return QStringLiteral("missing");
}

void wrongType(const QString &param, const QString &expected, const QJsonValue &got)
{
    throw ApiError::invalid(param, QStringLiteral("'%1' must be %2, not %3.").arg(param, expected, typeName(got)),
                            QStringLiteral("invalid_type"));
}

// A field that may be absent or null; returns false in that case.
bool present(const QJsonObject &o, const QString &key)
{
    const QJsonValue v = o.value(key);
    return !v.isUndefined() && !v.isNull();
}

bool readBool(const QJsonObject &o, const QString &key, bool fallback, const QString &path)
{
    if (!present(o, key))
        return fallback;
    const QJsonValue v = o.value(key);
    if (!v.isBool())
        wrongType(path.isEmpty() ? key : path, QStringLiteral("true or false"), v);
    return v.toBool();
}

double readNumber(const QJsonObject &o, const QString &key, double fallback, double lo, double hi, const QString &path)
{
    if (!present(o, key))
        return fallback;
    const QString p = path.isEmpty() ? key : path;
    const QJsonValue v = o.value(key);
    if (!v.isDouble())
        wrongType(p, kNumber, v);
    const double d = v.toDouble();
    if (!std::isfinite(d))
        wrongType(p, kNumber, v);
    if (d < lo || d > hi)
        throw ApiError::outOfRange(p, d, lo, hi, false);
    return d;
}

std::optional<qint64> readInteger(const QJsonObject &o, const QString &key, qint64 lo, qint64 hi, const QString &path)
{
    if (!present(o, key))
        return std::nullopt;
    const QString p = path.isEmpty() ? key : path;
    const QJsonValue v = o.value(key);
    if (!v.isDouble())
        wrongType(p, QStringLiteral("an integer"), v);
    const double d = v.toDouble();
    if (!std::isfinite(d) || std::floor(d) != d)
        throw ApiError::invalid(p, QStringLiteral("'%1' must be an integer (got %2).").arg(p).arg(d),
                                QStringLiteral("invalid_type"));
    if (d < double(lo) || d > double(hi))
        throw ApiError::outOfRange(p, d, double(lo), double(hi), true);
    return qint64(d);
}

QString readString(const QJsonObject &o, const QString &key, const QString &path, bool required)
{
    const QJsonValue v = o.value(key);
    if (v.isUndefined() || v.isNull()) {
        if (required)
            throw ApiError::invalid(path, QStringLiteral("'%1' is required.").arg(path),
                                    QStringLiteral("missing_required_parameter"));
        return {};
    }
    if (!v.isString())
        wrongType(path, QStringLiteral("a string"), v);
    return v.toString();
}

QJsonObject readObject(const QJsonObject &o, const QString &key, const QString &path)
{
    if (!present(o, key))
        return {};
    const QJsonValue v = o.value(key);
    if (!v.isObject())
        wrongType(path, QStringLiteral("an object"), v);
    return v.toObject();
}

QJsonArray readArray(const QJsonObject &o, const QString &key, const QString &path)
{
    if (!present(o, key))
        return {};
    const QJsonValue v = o.value(key);
    if (!v.isArray())
        wrongType(path, QStringLiteral("an array"), v);
    return v.toArray();
}

QJsonArray readNonEmptyArray(const QJsonObject &o, const QString &key, const QString &item)
{
    const QJsonValue v = o.value(key);
    if (v.isUndefined() || v.isNull())
        throw ApiError::invalid(key, QStringLiteral("'%1' is required.").arg(key),
                                QStringLiteral("missing_required_parameter"));
    if (!v.isArray())
        wrongType(key, QStringLiteral("an array"), v);
    const QJsonArray arr = v.toArray();
    if (arr.isEmpty())
        throw ApiError::invalid(key, QStringLiteral("'%1' must hold at least one %2.").arg(key, item),
                                QStringLiteral("empty_array"));
    return arr;
}

QString at(const QString &path, qsizetype i) { return QStringLiteral("%1[%2]").arg(path).arg(i); }

QJsonObject chatToolFromFlat(const QJsonObject &t, const QString &path, const QString &schemaKey, bool schemaRequired)
{
    QJsonObject fn{{QStringLiteral("name"), readString(t, QStringLiteral("name"), path + QStringLiteral(".name"), true)}};
    const QString description = readString(t, QStringLiteral("description"), path + QStringLiteral(".description"), false);
    if (!description.isEmpty())
        fn.insert(QStringLiteral("description"), description);
    const QString schemaPath = path + QLatin1Char('.') + schemaKey;
    if (schemaRequired && !present(t, schemaKey))
        throw ApiError::invalid(schemaPath, QStringLiteral("'%1' is required.").arg(schemaPath),
                                QStringLiteral("missing_required_parameter"));
    if (present(t, schemaKey))
        fn.insert(QStringLiteral("parameters"), readObject(t, schemaKey, schemaPath));
    return QJsonObject{{QStringLiteral("type"), QStringLiteral("function")}, {QStringLiteral("function"), fn}};
}

QJsonArray readFlatTools(const QJsonObject &body, const FlatToolRules &rules)
{
    QJsonArray tools;
    const QJsonArray arr = readArray(body, QStringLiteral("tools"), QStringLiteral("tools"));
    for (qsizetype i = 0; i < arr.size(); ++i) {
        const QString path = at(QStringLiteral("tools"), i);
        if (!arr[i].isObject())
            wrongType(path, QStringLiteral("an object"), arr[i]);
        const QJsonObject t = arr[i].toObject();
        const QString type = readString(t, QStringLiteral("type"), path + QStringLiteral(".type"), rules.typeRequired);
        if (type != rules.type && !(type.isEmpty() && !rules.typeRequired))
            throw ApiError::invalid(path + QStringLiteral(".type"),
                                    QStringLiteral("Tool type '%1' is not supported: this server runs %2 only.")
                                        .arg(type, rules.runs));
        tools.append(chatToolFromFlat(t, path, rules.schemaKey, rules.schemaRequired));
        readBool(t, QStringLiteral("strict"), false, path + QStringLiteral(".strict")); // checked, then implied by the schema
    }
    return tools;
}

} // namespace jsonfields
