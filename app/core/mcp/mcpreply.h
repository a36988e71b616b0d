#pragma once

#include <QJsonObject>
#include <QObject>
#include <QString>

// One MCP request in flight, like QNetworkReply: finished() fires exactly once, with either
// a result or an error, so a caller never waits on a request the client has forgotten. The
// caller deletes it (deleteLater) once read; the client deletes those left at its end.
class McpReply : public QObject
{
    Q_OBJECT
public:
    enum class Error {
        None,
        ServerUnavailable, // failed to start, exited, or closed before answering
        Timeout,           // no answer within the request's time limit
        Malformed,         // the server sent bytes that are not a JSON-RPC message
        Transport,         // HTTP status or an unreadable HTTP reply
        Rpc,               // the server answered with a JSON-RPC error
    };
    Q_ENUM(Error)

    explicit McpReply(QString method, QObject *parent = nullptr)
        : QObject(parent), m_method(std::move(method)) {}

    QString method() const { return m_method; }
    bool isFinished() const { return m_finished; }
    Error error() const { return m_error; }
    QString errorString() const { return m_errorString; }
    int rpcErrorCode() const { return m_rpcCode; } // Error::Rpc only
    QJsonObject result() const { return m_result; }

    // Called by McpClient only; a second call is ignored (the first answer wins).
    void finishWithResult(const QJsonObject &result);
    void finishWithError(Error error, const QString &message, int rpcCode = 0);

signals:
    void finished();

private:
    QString m_method;
    bool m_finished = false;
    Error m_error = Error::None;
    QString m_errorString;
    int m_rpcCode = 0;
    QJsonObject m_result;
};
