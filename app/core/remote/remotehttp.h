// The HTTP pieces every talk with a remote engine shares: a request with its key, the model
// list (GET /v1/models) read from a reply, and the one place that turns a failed exchange
// (no answer, 401, 404, a server error with an OpenAI error body) into a sentence that says
// what happened and what to do.
#pragma once

#include <QNetworkRequest>
#include <QString>
#include <QStringList>
#include <QUrl>

class QNetworkReply;

namespace remotehttp {

// How long a remote engine may stay silent (no byte at all) before the exchange is given up:
// long enough for a big prompt's prefill on a busy server.
constexpr int kTransferTimeoutMs = 120000;

QNetworkRequest request(const QUrl &url, const QString &apiKey);

struct ModelList {
    QStringList ids;
    QString error; // "" when the list was read
};
// Reads a finished GET /v1/models reply (`base` names the server in messages).
ModelList readModels(QNetworkReply *reply, const QUrl &base);

// The sentence for a failed exchange with the engine at `base` (the reply has finished; its
// body, if any, has not been read yet). "" when the reply succeeded.
QString failure(QNetworkReply *reply, const QUrl &base, const QByteArray &body);

// The sentence for a model that the engine's /v1/models no longer lists.
QString modelGone(const QString &model, const QUrl &base, const QStringList &listed);

} // namespace remotehttp
