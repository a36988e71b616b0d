// RemoteEndpointEditor: the "Add a remote engine" dialog's controller. The person types a
// base URL and, if the server wants one, an API key; listModels() asks the server's
// GET /v1/models and offers what it serves; add() keeps the chosen model in the library
// (remote/remotestore.h: the key in its own owner-only file). Every failure is a sentence
// in `error` (remote/remotehttp.h), never only a log line.
#pragma once

#include <QNetworkAccessManager>
#include <QObject>
#include <QPointer>
#include <QQmlEngine>
#include <QStringList>
#include <QUrl>

#include <QNetworkReply>

class RemoteEndpointEditor : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QString baseUrl READ baseUrl WRITE setBaseUrl NOTIFY baseUrlChanged)
    Q_PROPERTY(QString apiKey READ apiKey WRITE setApiKey NOTIFY apiKeyChanged)
    Q_PROPERTY(QString name READ name WRITE setName NOTIFY nameChanged)
    // The base URL as it will be used (".../v1"), or "" while what was typed is not a URL.
    Q_PROPERTY(QString resolvedUrl READ resolvedUrl NOTIFY baseUrlChanged)
    Q_PROPERTY(QStringList models READ models NOTIFY modelsChanged)
    Q_PROPERTY(bool busy READ busy NOTIFY busyChanged)
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)

public:
    explicit RemoteEndpointEditor(QObject *parent = nullptr);

    QString baseUrl() const { return m_baseUrl; }
    void setBaseUrl(const QString &url);
    QString apiKey() const { return m_apiKey; }
    void setApiKey(const QString &key);
    QString name() const { return m_name; }
    void setName(const QString &name);
    QString resolvedUrl() const;
    QStringList models() const { return m_models; }
    bool busy() const { return m_reply != nullptr; }
    QString error() const { return m_error; }

    // Asks the server which models it serves; answers through models / error.
    Q_INVOKABLE void listModels();
    // Keeps `model` of this server in the library. Returns its library path ("remote:ID"),
    // or "" with `error` set.
    Q_INVOKABLE QString add(const QString &model);
    // Starts over (the dialog opens empty each time).
    Q_INVOKABLE void clear();

Q_SIGNALS:
    void baseUrlChanged();
    void apiKeyChanged();
    void nameChanged();
    void modelsChanged();
    void busyChanged();
    void errorChanged();

private:
    void setError(const QString &error);
    void setModels(const QStringList &models);

    QNetworkAccessManager m_net;
    QPointer<QNetworkReply> m_reply;
    QString m_baseUrl;
    QString m_apiKey;
    QString m_name;
    QStringList m_models;
    QString m_error;
};
