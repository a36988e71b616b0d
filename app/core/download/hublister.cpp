#include "download/hublister.h"

#include "download/hubrequest.h"
#include "download/resumerules.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>

HubLister::HubLister(QNetworkAccessManager *nam, const HubEndpoint &endpoint, const QString &repo,
                     const QString &revision, const DownloadOptions &options, std::mt19937_64 *rng, QObject *parent)
    : QObject(parent), m_nam(nam), m_endpoint(endpoint), m_repo(repo), m_revision(revision), m_options(options), m_rng(rng)
{
    m_retryTimer.setSingleShot(true);
    connect(&m_retryTimer, &QTimer::timeout, this, [this] { fetch(m_pageUrl, 0); });
}

HubLister::~HubLister()
{
    if (m_reply) {
        m_reply->disconnect(this);
        m_reply->abort();
        m_reply->deleteLater();
    }
}

namespace {
constexpr int kListingTimeoutMs = 15000;
}

void HubLister::start()
{
    m_files.clear();
    m_pages = 0;
    m_attempts = 0;
    m_pageUrl = m_endpoint.treeUrl(m_repo, m_revision);
    fetch(m_pageUrl, 0);
}

void HubLister::fetch(const QUrl &url, int hop)
{
    m_hop = hop;
    QNetworkRequest req = hubrequest::make(url, m_endpoint);
    req.setRawHeader("Accept", "application/json");
    // A listing is small: a silent connection is reported within seconds, not after the
    // minute a stalled file transfer is given.
    req.setTransferTimeout(qMin(m_options.stallMs, kListingTimeoutMs));
    m_reply = m_nam->get(req);
    connect(m_reply, &QNetworkReply::finished, this, &HubLister::onFinished);
}

void HubLister::retry(const QString &reason, qint64 retryAfterMs)
{
    ++m_attempts;
    if (m_attempts >= m_options.maxAttempts) {
        Q_EMIT failed(QStringLiteral("could not list %1 at %2 after %3 tries: %4").arg(m_repo, m_revision).arg(m_attempts).arg(reason));
        return;
    }
    const qint64 delay = retryAfterMs >= 0 ? qMin<qint64>(retryAfterMs, m_options.retryAfterCapMs)
                                           : resumerules::backoffMs(m_attempts, m_options.backoffBaseMs, m_options.backoffMaxMs, *m_rng);
    Q_EMIT retrying(reason, delay);
    m_retryTimer.start(static_cast<int>(qMin<qint64>(delay, INT_MAX)));
}

void HubLister::onFinished()
{
    QNetworkReply *reply = m_reply;
    if (!reply || sender() != reply)
        return;
    reply->deleteLater();
    m_reply = nullptr;
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status == 0) {
        retry(hubrequest::describeError(reply), -1);
        return;
    }
    if (status >= 300 && status < 400) {
        QString why;
        const QUrl target = hubrequest::redirectTarget(reply, &why);
        if (target.isEmpty() || m_hop >= m_options.maxRedirects) {
            Q_EMIT failed(QStringLiteral("listing %1: %2").arg(m_repo, target.isEmpty() ? why : QStringLiteral("too many redirects")));
            return;
        }
        fetch(target, m_hop + 1);
        return;
    }
    if (status != 200) {
        resumerules::ResponseFacts facts;
        facts.status = status;
        const auto d = resumerules::classify(facts);
        QString reason = d.reason;
        if (status == 404)
            reason = QStringLiteral("repository %1 or revision %2 not found on %3 (404); check the name, and for a gated or private "
                                    "repository set an access token")
                         .arg(m_repo, m_revision, m_endpoint.base().toString());
        if (d.verdict == resumerules::Verdict::RetryLater) {
            const auto after = resumerules::parseRetryAfter(reply->rawHeader("Retry-After"), QDateTime::currentDateTimeUtc());
            retry(reason, after ? *after : -1);
        } else {
            Q_EMIT failed(QStringLiteral("listing %1: %2").arg(m_repo, reason));
        }
        return;
    }
    try {
        m_files += hublisting::parse(reply->readAll());
    } catch (const std::exception &e) {
        Q_EMIT failed(QString::fromUtf8(e.what()));
        return;
    }
    m_attempts = 0;
    const QUrl next = hublisting::nextPage(reply->rawHeader("Link"), reply->url());
    if (!next.isEmpty() && ++m_pages < 10000) {
        m_pageUrl = next;
        fetch(next, 0);
        return;
    }
    Q_EMIT listed(m_files);
}
