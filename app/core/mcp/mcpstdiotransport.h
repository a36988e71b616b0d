#pragma once

#include "mcp/mcptransport.h"

#include <QProcess>
#include <QStringList>

// MCP over a child process's stdin/stdout: one JSON-RPC message per line (the spec's stdio
// framing). stderr is the server's log; its tail is kept so that an exit can say why.
class McpStdioTransport : public McpTransport
{
    Q_OBJECT
public:
    McpStdioTransport(QString program, QStringList arguments, QObject *parent = nullptr);
    ~McpStdioTransport() override;

    void open() override;
    void send(const QJsonObject &message) override;
    void close() override;

    // The server's process id while it runs (0 otherwise): lets a caller or test signal it.
    qint64 processId() const { return m_process.processId(); }

private:
    void readStdout();
    void readStderr();
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void onError(QProcess::ProcessError error);
    QString stderrTail() const;

    QString m_program;
    QStringList m_arguments;
    QProcess m_process;
    QByteArray m_pending;   // stdout bytes after the last newline
    QByteArray m_stderr;    // last few KiB of the server's log
    bool m_closed = false;
    bool m_closing = false; // close() asked for the exit: it is not a failure
};
