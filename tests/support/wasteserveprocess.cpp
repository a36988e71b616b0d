#include "wasteserveprocess.h"

#include <QDeadlineTimer>
#include <QEventLoop>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QThread>
#include <QTimer>

#include <csignal>

namespace {

// GET /health once; true when it answers 200 (the model is loaded).
bool healthy(int port)
{
    QNetworkAccessManager nam;
    QNetworkRequest request(QUrl(QStringLiteral("http://127.0.0.1:%1/health").arg(port)));
    request.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
    QNetworkReply *reply = nam.get(request);
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    QTimer::singleShot(5000, &loop, &QEventLoop::quit);
    loop.exec();
    const bool ok = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt() == 200;
    reply->deleteLater();
    return ok;
}

} // namespace

bool WasteServe::start(const QString &model, const QStringList &extraArgs, int port, int timeoutMs)
{
    kill();
    m_error.clear();
    m_port = 0;
    m_process.setProcessChannelMode(QProcess::SeparateChannels);
    m_process.start(m_cli, QStringList{QStringLiteral("serve"), model} + extraArgs
                               + QStringList{QStringLiteral("--port"), QString::number(port)});
    if (!m_process.waitForStarted(10000)) {
        m_error = QStringLiteral("waste serve did not start: %1").arg(m_process.errorString());
        return false;
    }
    const QDeadlineTimer deadline(timeoutMs);
    // The first line on stdout names the port actually bound.
    while (!m_process.canReadLine() && m_process.state() == QProcess::Running && !deadline.hasExpired())
        m_process.waitForReadyRead(200);
    m_port = QJsonDocument::fromJson(m_process.readLine()).object().value(QStringLiteral("port")).toInt();
    if (m_port <= 0) {
        m_error = QStringLiteral("waste serve did not say its port: %1").arg(QString::fromUtf8(m_process.readAllStandardError()));
        return false;
    }
    while (!deadline.hasExpired() && m_process.state() == QProcess::Running) {
        if (healthy(m_port))
            return true;
        QThread::msleep(100);
    }
    m_error = QStringLiteral("waste serve did not load the model: %1").arg(QString::fromUtf8(m_process.readAllStandardError()));
    return false;
}

void WasteServe::stop()
{
    if (m_process.state() == QProcess::NotRunning)
        return;
    ::kill(pid_t(m_process.processId()), SIGTERM);
    if (!m_process.waitForFinished(15000))
        kill();
}

void WasteServe::kill()
{
    if (m_process.state() == QProcess::NotRunning)
        return;
    m_process.kill(); // SIGKILL: no goodbye to the clients, as when a machine goes down
    m_process.waitForFinished(15000);
}
