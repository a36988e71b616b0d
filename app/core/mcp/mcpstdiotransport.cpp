#include "mcp/mcpstdiotransport.h"

#include <QJsonDocument>
#include <QJsonParseError>

namespace {
constexpr qsizetype kStderrKept = 4096;
}

McpStdioTransport::McpStdioTransport(QString program, QStringList arguments, QObject *parent)
    : McpTransport(parent), m_program(std::move(program)), m_arguments(std::move(arguments))
{
    connect(&m_process, &QProcess::started, this, &McpTransport::started);
    connect(&m_process, &QProcess::readyReadStandardOutput, this, &McpStdioTransport::readStdout);
    connect(&m_process, &QProcess::readyReadStandardError, this, &McpStdioTransport::readStderr);
    connect(&m_process, &QProcess::finished, this, &McpStdioTransport::onFinished);
    connect(&m_process, &QProcess::errorOccurred, this, &McpStdioTransport::onError);
}

McpStdioTransport::~McpStdioTransport()
{
    // The server must not outlive the app: a child left running would hold its tools' files.
    m_process.disconnect(this);
    if (m_process.state() != QProcess::NotRunning) {
        m_process.kill();
        m_process.waitForFinished(2000);
    }
}

void McpStdioTransport::open()
{
    m_closed = false;
    m_closing = false;
    m_pending.clear();
    m_stderr.clear();
    m_process.start(m_program, m_arguments);
}

void McpStdioTransport::send(const QJsonObject &message)
{
    if (m_process.state() != QProcess::Running)
        return; // closed() has been or will be emitted; the client fails the request then
    QByteArray line = QJsonDocument(message).toJson(QJsonDocument::Compact);
    line.append('\n');
    m_process.write(line);
}

void McpStdioTransport::close()
{
    if (m_process.state() == QProcess::NotRunning)
        return;
    m_closing = true;
    // The spec's shutdown for stdio: close the server's input, then signal it if it stays.
    m_process.closeWriteChannel();
    m_process.terminate();
}

void McpStdioTransport::readStdout()
{
    m_pending.append(m_process.readAllStandardOutput());
    qsizetype nl;
    while ((nl = m_pending.indexOf('\n')) >= 0) {
        const QByteArray line = m_pending.left(nl).trimmed();
        m_pending.remove(0, nl + 1);
        if (line.isEmpty())
            continue;
        QJsonParseError err{};
        const QJsonDocument doc = QJsonDocument::fromJson(line, &err);
        if (err.error != QJsonParseError::NoError || !doc.isObject()) {
            emit malformed(QStringLiteral("the server wrote a line that is not a JSON-RPC message (%1): %2")
                               .arg(err.error != QJsonParseError::NoError ? err.errorString()
                                                                          : QStringLiteral("not an object"),
                                    QString::fromUtf8(line.left(200))));
            continue;
        }
        emit messageReceived(doc.object());
    }
}

void McpStdioTransport::readStderr()
{
    m_stderr.append(m_process.readAllStandardError());
    if (m_stderr.size() > kStderrKept)
        m_stderr.remove(0, m_stderr.size() - kStderrKept);
}

QString McpStdioTransport::stderrTail() const
{
    const QString tail = QString::fromUtf8(m_stderr).trimmed();
    return tail.isEmpty() ? QString() : QStringLiteral("; its last output: ") + tail.right(600);
}

void McpStdioTransport::onFinished(int exitCode, QProcess::ExitStatus status)
{
    readStdout(); // answers written just before the exit still count
    readStderr();
    if (m_closed)
        return;
    m_closed = true;
    if (m_closing) {
        emit closed(QStringLiteral("the connection to the server was closed"));
    } else if (status == QProcess::CrashExit) {
        emit closed(QStringLiteral("the server %1 was killed or crashed%2").arg(m_program, stderrTail()));
    } else {
        emit closed(QStringLiteral("the server %1 exited with code %2%3")
                        .arg(m_program).arg(exitCode).arg(stderrTail()));
    }
}

void McpStdioTransport::onError(QProcess::ProcessError error)
{
    // Crashes arrive through finished(); only a start failure ends here without it.
    if (error != QProcess::FailedToStart || m_closed)
        return;
    m_closed = true;
    emit closed(QStringLiteral("the server could not be started (%1): %2")
                    .arg(m_program, m_process.errorString()));
}
