// An error the API reports to its client as an OpenAI error object:
// {"error": {"message", "type", "param", "code"}} with the matching HTTP status.
#pragma once

#include <QJsonObject>
#include <QString>

struct ApiError {
    int status = 400;
    QString message;
    QString type = QStringLiteral("invalid_request_error");
    QString param; // the request field at fault, empty if none
    QString code;  // machine-readable reason, empty if none

    QJsonObject toJson() const;

    // 400: a field is missing, has the wrong type or an out-of-range value.
    static ApiError invalid(const QString &param, const QString &message,
                            const QString &code = QStringLiteral("invalid_value"));
    static ApiError malformedJson(const QString &detail);
    static ApiError unauthorized();
    static ApiError notFound(const QString &method, const QString &path);
    static ApiError methodNotAllowed(const QString &method, const QString &path);
    static ApiError tooLarge(qint64 limit);
    static ApiError noModel(const QString &why);
    static ApiError server(const QString &message);
};
