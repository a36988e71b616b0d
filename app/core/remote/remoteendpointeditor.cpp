#include "remote/remoteendpointeditor.h"

#include "remote/remoteendpoint.h"
#include "remote/remotehttp.h"
#include "remote/remotestore.h"

#include <QNetworkReply>

RemoteEndpointEditor::RemoteEndpointEditor(QObject *parent) : QObject(parent)
{
}

void RemoteEndpointEditor::setBaseUrl(const QString &url)
{
    if (url == m_baseUrl)
        return;
    m_baseUrl = url;
    // Another server: the models listed were the previous one's.
    setModels({});
    Q_EMIT baseUrlChanged();
}

void RemoteEndpointEditor::setApiKey(const QString &key)
{
    if (key == m_apiKey)
        return;
    m_apiKey = key;
    Q_EMIT apiKeyChanged();
}

void RemoteEndpointEditor::setName(const QString &name)
{
    if (name == m_name)
        return;
    m_name = name;
    Q_EMIT nameChanged();
}

QString RemoteEndpointEditor::resolvedUrl() const
{
    return remoteendpoint::normaliseBaseUrl(m_baseUrl).toString();
}

void RemoteEndpointEditor::setError(const QString &error)
{
    if (error == m_error)
        return;
    m_error = error;
    Q_EMIT errorChanged();
}

void RemoteEndpointEditor::setModels(const QStringList &models)
{
    if (models == m_models)
        return;
    m_models = models;
    Q_EMIT modelsChanged();
}

void RemoteEndpointEditor::listModels()
{
    const QUrl base = remoteendpoint::normaliseBaseUrl(m_baseUrl);
    if (!base.isValid()) {
        setError(tr("\"%1\" is not a server address: give one like http://gpu-box:8000/v1.").arg(m_baseUrl.trimmed()));
        return;
    }
    if (m_reply) {
        m_reply->disconnect(this);
        m_reply->abort();
    }
    setError({});
    setModels({});
    QNetworkReply *reply = m_net.get(remotehttp::request(remoteendpoint::routeUrl(base, QStringLiteral("/models")), m_apiKey.trimmed()));
    m_reply = reply;
    Q_EMIT busyChanged();
    connect(reply, &QNetworkReply::finished, this, [this, reply, base] {
        reply->deleteLater();
        m_reply = nullptr;
        const remotehttp::ModelList list = remotehttp::readModels(reply, base);
        setError(list.error);
        setModels(list.ids);
        Q_EMIT busyChanged();
    });
}

QString RemoteEndpointEditor::add(const QString &model)
{
    RemoteEndpoint e;
    e.baseUrl = remoteendpoint::normaliseBaseUrl(m_baseUrl);
    e.model = model.trimmed();
    e.name = m_name.trimmed();
    if (!e.baseUrl.isValid() || e.model.isEmpty()) {
        setError(tr("Give the server's address and choose one of its models (List models) first."));
        return {};
    }
    QString id;
    if (const QString problem = remotestore::add(e, m_apiKey, &id); !problem.isEmpty()) {
        setError(tr("The remote engine was not saved: %1").arg(problem));
        return {};
    }
    setError({});
    return remoteendpoint::pathFor(id);
}

void RemoteEndpointEditor::clear()
{
    if (m_reply) {
        m_reply->disconnect(this);
        m_reply->abort();
        m_reply = nullptr;
        Q_EMIT busyChanged();
    }
    setBaseUrl({});
    setApiKey({});
    setName({});
    setModels({});
    setError({});
}
