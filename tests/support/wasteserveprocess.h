// WasteServe: a real `waste serve MODEL` in a child process, the OpenAI-compatible server the
// remote-engine tests talk to. It starts on a free port (or on a given one, to bring a server
// back where an earlier one was), is ready once GET /health says ok, and is stopped politely
// (SIGTERM) or killed mid-answer (SIGKILL), as a crashed or unplugged server would be.
#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>

class WasteServe {
public:
    explicit WasteServe(QString cliPath) : m_cli(std::move(cliPath)) {}
    ~WasteServe() { kill(); }

    // Starts `waste serve model extraArgs… --port port` and waits (up to timeoutMs) until the
    // model is loaded. False with error() set when it did not come up.
    bool start(const QString &model, const QStringList &extraArgs, int port = 0, int timeoutMs = 60000);
    int port() const { return m_port; }
    QString baseUrl() const { return QStringLiteral("http://127.0.0.1:%1/v1").arg(m_port); }
    QString error() const { return m_error; }
    bool running() const { return m_process.state() != QProcess::NotRunning; }
    qint64 pid() const { return m_process.processId(); } // to pause it (SIGSTOP) as a busy server

    void stop();
    void kill();

private:
    QString m_cli;
    QProcess m_process;
    int m_port = 0;
    QString m_error;
};
