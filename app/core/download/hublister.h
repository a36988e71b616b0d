// Fetches a repository's file listing from the hub, following pagination (Link: rel="next")
// and redirects, retrying busy or broken answers with the same backoff as file transfers.
#pragma once

#include "download/downloadoptions.h"
#include "download/hubendpoint.h"
#include "download/hublisting.h"

#include <QObject>
#include <QPointer>
#include <QTimer>
#include <random>

class QNetworkAccessManager;
class QNetworkReply;

class HubLister : public QObject {
    Q_OBJECT
public:
    HubLister(QNetworkAccessManager *nam, const HubEndpoint &endpoint, const QString &repo, const QString &revision,
              const DownloadOptions &options, std::mt19937_64 *rng, QObject *parent);
    ~HubLister() override;
    void start();
    // Consecutive failed attempts so far.
    int attempts() const { return m_attempts; }

Q_SIGNALS:
    void listed(const QList<HubFile> &files);
    void failed(const QString &reason);
    void retrying(const QString &reason, qint64 delayMs);

private:
    void fetch(const QUrl &url, int hop);
    void onFinished();
    void retry(const QString &reason, qint64 retryAfterMs);

    QNetworkAccessManager *m_nam;
    HubEndpoint m_endpoint;
    QString m_repo;
    QString m_revision;
    DownloadOptions m_options;
    std::mt19937_64 *m_rng;
    QPointer<QNetworkReply> m_reply;
    QUrl m_pageUrl;
    int m_hop = 0;
    int m_attempts = 0;
    int m_pages = 0;
    QList<HubFile> m_files;
    QTimer m_retryTimer;
};
