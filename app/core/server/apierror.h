// An error the API reports to its client as an OpenAI error object:
// {"error": {"message", "type", "param", "code"}} with the matching HTTP status.
// Types and codes follow OpenAI's: invalid_request_error for everything the client can
// fix (400 invalid_json / missing_required_parameter / invalid_type / invalid_value /
// empty_array / decimal_above_max_value ... / context_length_exceeded, 401
// invalid_api_key, 404 unknown_url / model_not_found, 405 method_not_allowed, 413
// request_too_large), server_error for the server's side (503 model_not_ready /
// request_cancelled, 500).
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QString>

struct GenerationError;

struct ApiError {
    int status = 400;
    QString message;
    QString type = QStringLiteral("invalid_request_error");
    QString param; // the request field at fault, empty if none
    QString code;  // machine-readable reason, empty if none
    QList<QPair<QByteArray, QByteArray>> headers; // HTTP headers the status calls for (Allow, WWW-Authenticate)

    QJsonObject toJson() const;

    // 400: a field is missing, has the wrong type or an out-of-range value.
    static ApiError invalid(const QString &param, const QString &message,
                            const QString &code = QStringLiteral("invalid_value"));
    static ApiError malformedJson(const QString &detail);
    static ApiError unauthorized();
    static ApiError notFound(const QString &method, const QString &path);
    static ApiError methodNotAllowed(const QString &method, const QString &path, const QString &allowed);
    // 400 for a number outside [lo, hi]: OpenAI's decimal_/integer_ above_max / below_min codes.
    static ApiError outOfRange(const QString &param, double value, double lo, double hi, bool integer);
    static ApiError tooLarge(qint64 limit);
    static ApiError noModel(const QString &why);
    // 503: the request was cancelled on the server's side (the server or the model stopping).
    static ApiError cancelled();
    // 503: every place is taken, the queue too: `running` at once (the most the budget holds)
    // and `waiting` more; Retry-After says when to try again.
    static ApiError busy(int running, int waiting);
    // The same while the open model is a remote engine: `running` are with it (the most this
    // server sends it at once) and `waiting` more wait here.
    static ApiError remoteBusy(int running, int waiting);
    static ApiError server(const QString &message);
    // A generation the engine refused or could not finish, by its error code: a prompt
    // longer than the context is the client's (400 context_length_exceeded on promptParam),
    // so is anything refused before generating began (400, on the argument the engine
    // names); a failure while generating is the server's (500).
    static ApiError fromGeneration(const GenerationError &error, bool generating, const QString &promptParam);
};
