// A remote OpenAI-compatible engine as the library keeps it: where it answers (the base URL,
// e.g. http://gpu-box:8000/v1), which of its models to use (an id from its GET /v1/models),
// and the name the library shows. The API key is not part of it: it lives in a file of its
// own (remotestore.h), like the hub token. In the library and in EngineController a remote
// engine is named by a path "remote:ID", so the Open button and the open-model bookkeeping
// work for it as they do for a container folder.
#pragma once

#include <QString>
#include <QUrl>

struct RemoteEndpoint {
    QString id;      // stable, chosen when it is added (remotestore::add)
    QString name;    // shown in the library and the status bar
    QUrl baseUrl;    // normalised: ends in /v1 (remoteendpoint::normaliseBaseUrl)
    QString model;   // the id the server lists in /v1/models
    bool isValid() const { return !id.isEmpty() && baseUrl.isValid() && !model.isEmpty(); }
};

namespace remoteendpoint {

// "remote:ID": the library path of a remote engine.
QString pathFor(const QString &id);
// The ID in a "remote:ID" path, or "" when `path` names a folder.
QString idOf(const QString &path);
bool isRemotePath(const QString &path);

// What a person types ("gpu-box:8000", "http://gpu-box:8000", ".../v1/") as the base URL the
// OpenAI routes hang from ("http://gpu-box:8000/v1"); invalid when it is not an http(s) URL.
QUrl normaliseBaseUrl(const QString &typed);
// base + "/chat/completions", "/models", ...
QUrl routeUrl(const QUrl &base, const QString &route);

} // namespace remoteendpoint
