// ApiServer's settings: the address, port, key, CORS list and image setting, checked and
// kept in QSettings, apart from listening and routing.
#include "server/apiserver.h"

#include <QHostAddress>
#include <QRandomGenerator>
#include <QSettings>

void ApiServer::setHost(const QString &host)
{
    const QString h = host.trimmed();
    if (h == m_host)
        return;
    m_host = h;
    Q_EMIT settingsChanged();
}

void ApiServer::setPort(int port)
{
    if (port == m_port)
        return;
    m_port = port;
    Q_EMIT settingsChanged();
}

void ApiServer::setApiKey(const QString &key)
{
    const QString k = key.trimmed();
    if (k == m_apiKey)
        return;
    m_apiKey = k;
    Q_EMIT settingsChanged();
}

void ApiServer::setCorsOrigins(const QStringList &origins)
{
    QStringList clean;
    for (const QString &o : origins) {
        QString t = o.trimmed();
        while (t.endsWith(QLatin1Char('/')))
            t.chop(1);
        if (!t.isEmpty() && !clean.contains(t))
            clean << t;
    }
    if (clean == m_corsOrigins)
        return;
    m_corsOrigins = clean;
    Q_EMIT settingsChanged();
}

void ApiServer::setAllowLocalImages(bool allow)
{
    if (allow == m_allowLocalImages)
        return;
    m_allowLocalImages = allow;
    Q_EMIT settingsChanged();
}

bool ApiServer::hostIsLoopback() const
{
    if (m_host.isEmpty() || m_host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0)
        return true;
    const QHostAddress a(m_host);
    return !a.isNull() && a.isLoopback();
}

QString ApiServer::url() const
{
    if (!running())
        return {};
    QString h = m_host.isEmpty() ? QStringLiteral("127.0.0.1") : m_host;
    if (h == QLatin1String("0.0.0.0") || h == QLatin1String("::"))
        h = QStringLiteral("127.0.0.1");
    if (h.contains(QLatin1Char(':')))
        h = QLatin1Char('[') + h + QLatin1Char(']');
    return QStringLiteral("http://%1:%2/v1").arg(h).arg(m_boundPort);
}

void ApiServer::persistSettings()
{
    QSettings s;
    s.beginGroup(QStringLiteral("server"));
    m_host = s.value(QStringLiteral("host"), m_host).toString();
    m_port = s.value(QStringLiteral("port"), m_port).toInt();
    m_apiKey = s.value(QStringLiteral("apiKey"), m_apiKey).toString();
    m_corsOrigins = s.value(QStringLiteral("corsOrigins"), m_corsOrigins).toStringList();
    m_allowLocalImages = s.value(QStringLiteral("allowLocalImages"), m_allowLocalImages).toBool();
    s.endGroup();
    Q_EMIT settingsChanged();
    if (m_persist)
        return;
    m_persist = true;
    connect(this, &ApiServer::settingsChanged, this, [this] {
        QSettings s;
        s.beginGroup(QStringLiteral("server"));
        s.setValue(QStringLiteral("host"), m_host);
        s.setValue(QStringLiteral("port"), m_port);
        s.setValue(QStringLiteral("apiKey"), m_apiKey);
        s.setValue(QStringLiteral("corsOrigins"), m_corsOrigins);
        s.setValue(QStringLiteral("allowLocalImages"), m_allowLocalImages);
    });
}

QString ApiServer::generateApiKey() const
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    QString key = QStringLiteral("sk-waste-");
    for (int i = 0; i < 40; ++i)
        key += QLatin1Char(alphabet[QRandomGenerator::system()->bounded(int(sizeof(alphabet) - 1))]);
    return key;
}
