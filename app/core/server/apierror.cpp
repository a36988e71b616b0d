#include "apierror.h"

#include <QJsonValue>

QJsonObject ApiError::toJson() const
{
    QJsonObject e{{QStringLiteral("message"), message}, {QStringLiteral("type"), type}};
    e.insert(QStringLiteral("param"), param.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(param));
    e.insert(QStringLiteral("code"), code.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(code));
    return {{QStringLiteral("error"), e}};
}

ApiError ApiError::invalid(const QString &param, const QString &message, const QString &code)
{
    ApiError e;
    e.status = 400;
    e.param = param;
    e.message = message;
    e.code = code;
    return e;
}

ApiError ApiError::malformedJson(const QString &detail)
{
    ApiError e;
    e.status = 400;
    e.message = QStringLiteral("The request body is not valid JSON (%1).").arg(detail);
    e.code = QStringLiteral("invalid_json");
    return e;
}

ApiError ApiError::unauthorized()
{
    ApiError e;
    e.status = 401;
    e.message = QStringLiteral("Missing or wrong API key: send the header \"Authorization: Bearer <key>\" "
                               "with the key shown on WASTE Studio's Server page.");
    e.code = QStringLiteral("invalid_api_key");
    return e;
}

ApiError ApiError::notFound(const QString &method, const QString &path)
{
    ApiError e;
    e.status = 404;
    e.message = QStringLiteral("No route %1 %2. This server offers GET /health, GET /v1/models, "
                               "POST /v1/chat/completions and POST /v1/completions.")
                    .arg(method, path);
    e.code = QStringLiteral("unknown_url");
    return e;
}

ApiError ApiError::methodNotAllowed(const QString &method, const QString &path)
{
    ApiError e;
    e.status = 405;
    e.message = QStringLiteral("%1 is not allowed on %2.").arg(method, path);
    e.code = QStringLiteral("method_not_allowed");
    return e;
}

ApiError ApiError::tooLarge(qint64 limit)
{
    ApiError e;
    e.status = 413;
    e.message = QStringLiteral("The request body is larger than this server accepts (%1 MB).")
                    .arg(double(limit) / (1024.0 * 1024.0), 0, 'f', limit >= 1024 * 1024 ? 0 : 3);
    e.code = QStringLiteral("request_too_large");
    return e;
}

ApiError ApiError::noModel(const QString &why)
{
    ApiError e;
    e.status = 503;
    e.message = why;
    e.type = QStringLiteral("server_error");
    e.code = QStringLiteral("model_not_ready");
    return e;
}

ApiError ApiError::server(const QString &message)
{
    ApiError e;
    e.status = 500;
    e.message = message;
    e.type = QStringLiteral("server_error");
    return e;
}
