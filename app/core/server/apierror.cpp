#include "server/apierror.h"

#include "generation/generationtypes.h"
#include "units/units.h"

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
                               "(or \"x-api-key: <key>\") with the key shown on WASTE Studio's Server page.");
    e.code = QStringLiteral("invalid_api_key");
    e.headers.append(qMakePair(QByteArrayLiteral("WWW-Authenticate"), QByteArrayLiteral("Bearer")));
    return e;
}

ApiError ApiError::notFound(const QString &method, const QString &path)
{
    ApiError e;
    e.status = 404;
    e.message = QStringLiteral("No route %1 %2. This server offers GET /health, GET /v1/models, "
                               "POST /v1/chat/completions, POST /v1/completions, POST /v1/responses, GET and DELETE /v1/responses/{id}, "
                               "POST /v1/messages and POST /v1/messages/count_tokens.")
                    .arg(method, path);
    e.code = QStringLiteral("unknown_url");
    return e;
}

ApiError ApiError::methodNotAllowed(const QString &method, const QString &path, const QString &allowed)
{
    ApiError e;
    e.status = 405;
    e.message = QStringLiteral("%1 is not allowed on %2 (use %3).").arg(method, path, allowed);
    e.code = QStringLiteral("method_not_allowed");
    e.headers.append(qMakePair(QByteArrayLiteral("Allow"), allowed.toLatin1() + ", OPTIONS"));
    return e;
}

ApiError ApiError::outOfRange(const QString &param, double value, double lo, double hi, bool integer)
{
    const bool above = value > hi;
    ApiError e = invalid(param,
                         QStringLiteral("Invalid '%1': %2 %3 value. Expected a value %4 %5, but got %6 instead.")
                             .arg(param, integer ? QStringLiteral("integer") : QStringLiteral("decimal"),
                                  above ? QStringLiteral("above maximum") : QStringLiteral("below minimum"),
                                  above ? QStringLiteral("<=") : QStringLiteral(">="))
                             .arg(above ? hi : lo, 0, 'g', 17)
                             .arg(value, 0, 'g', 17),
                         QStringLiteral("%1_%2").arg(integer ? QStringLiteral("integer") : QStringLiteral("decimal"),
                                                     above ? QStringLiteral("above_max_value")
                                                           : QStringLiteral("below_min_value")));
    return e;
}

ApiError ApiError::tooLarge(qint64 limit)
{
    ApiError e;
    e.status = 413;
    e.message = QStringLiteral("The request body is larger than this server accepts (%1).").arg(Units::bytes(limit));
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

ApiError ApiError::cancelled()
{
    ApiError e;
    e.status = 503;
    e.message = QStringLiteral("The request was cancelled: the server or its model is stopping. Try again.");
    e.type = QStringLiteral("server_error");
    e.code = QStringLiteral("request_cancelled");
    return e;
}

ApiError ApiError::busy(int running, int waiting)
{
    ApiError e;
    e.status = 503;
    e.message = QStringLiteral("The server is busy: %1 requests are being answered (the most the model's RAM budget "
                               "holds at once) and %2 more are waiting, which is all the queue holds. Try again "
                               "shortly, or send fewer requests at once.")
                    .arg(running)
                    .arg(waiting);
    e.type = QStringLiteral("server_error");
    e.code = QStringLiteral("server_busy");
    e.headers.append({QByteArrayLiteral("Retry-After"), QByteArrayLiteral("1")});
    return e;
}

ApiError ApiError::remoteBusy(int running, int waiting)
{
    ApiError e = busy(running, waiting);
    e.message = QStringLiteral("The server is busy: %1 requests are with the remote engine (the most this server "
                               "sends it at once) and %2 more are waiting, which is all the queue holds. Try again "
                               "shortly, or send fewer requests at once.")
                    .arg(running)
                    .arg(waiting);
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

ApiError ApiError::fromGeneration(const GenerationError &error, bool generating, const QString &promptParam)
{
    if (error.code == waste::ErrorCode::ContextFull)
        return invalid(promptParam, error.message, QStringLiteral("context_length_exceeded"));
    if (!generating) // refused before generating: the prompt, an image, a schema, too few tokens
        return invalid(error.argument, error.message);
    return server(error.message);
}
