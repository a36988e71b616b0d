// One place that builds every request to the hub or its CDN: TLS verification stays Qt's
// default (on; we never ignore SSL errors), HTTP/2 is allowed when the server offers it,
// redirects are followed by us (so the token can be dropped when they leave the endpoint),
// and the body is asked for as-is (no gzip) so byte offsets mean file offsets.
#pragma once

#include "download/hubendpoint.h"

#include <QNetworkReply>
#include <QNetworkRequest>

namespace hubrequest {

QNetworkRequest make(const QUrl &url, const HubEndpoint &endpoint);

// The redirect target of a 3xx reply, resolved against its URL; an empty URL (with *why set)
// when it is missing or would downgrade https to http.
QUrl redirectTarget(QNetworkReply *reply, QString *why);

// A network error in words ("connection cut after 1.2 MB", "host not found").
QString describeError(QNetworkReply *reply);

} // namespace hubrequest
