// Where the hub is and who may see the access token. The endpoint comes from --endpoint, else
// HF_ENDPOINT, else https://huggingface.co. The token (HF_TOKEN or the app's settings) is sent
// only to that endpoint's own origin, and never over plain http except to a loopback host;
// redirects to a CDN or anywhere else get no Authorization header.
#pragma once

#include <QString>
#include <QUrl>

class HubEndpoint {
public:
    HubEndpoint() = default;
    // Throws std::invalid_argument with a readable message for a malformed endpoint.
    explicit HubEndpoint(const QString &endpoint, const QString &token = {});

    // explicitValue (e.g. --endpoint) wins, then HF_ENDPOINT, then the public hub.
    static QString resolve(const QString &explicitValue);
    static QString defaultEndpoint() { return QStringLiteral("https://huggingface.co"); }
    // HF_TOKEN from the environment, else fallback (the token saved in settings).
    static QString resolveToken(const QString &fallback);

    QUrl base() const { return m_base; }
    QString token() const { return m_token; }

    // GET {endpoint}/api/models/{repo}/tree/{rev}?recursive=1
    QUrl treeUrl(const QString &repo, const QString &revision) const;
    // GET {endpoint}/{repo}/resolve/{rev}/{path}
    QUrl fileUrl(const QString &repo, const QString &revision, const QString &path) const;

    // True when a request to url may carry the token: same scheme, host and port as the
    // endpoint, and either https or a loopback host.
    bool mayCarryToken(const QUrl &url) const;

    // "owner/name" from what a user pastes: the id itself, or a hub URL of the repository
    // (https://huggingface.co/owner/name/tree/main). Returns an empty string if it is neither.
    static QString normalizeRepo(const QString &text);
    // "owner--name": the folder a repository is downloaded into.
    static QString folderName(const QString &repo);

private:
    QString joinPath(const QString &tail) const;
    QUrl m_base;
    QString m_token;
};
