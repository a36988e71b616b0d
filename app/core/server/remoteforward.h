// RemoteForward: the API server's requests passed on to the open remote engine, so local
// tools keep one address (this server) whatever serves the model. The client's request body
// goes to the remote server's route as it came, with "model" set to the remote model; the
// answer comes back as the remote server gave it: a stream relayed chunk by chunk as it
// arrives, a JSON answer with its status. When the remote engine cannot be reached the
// client gets a 502 with the same sentence the chat page shows (remote/remotehttp.h); a
// stream cut mid-answer ends with an error event. A client that leaves aborts the request.
#pragma once

#include "remote/remoteendpoint.h"

#include <QNetworkAccessManager>
#include <QObject>

#include <functional>
#include <memory>

class HttpExchange;

class RemoteForward : public QObject {
    Q_OBJECT
public:
    explicit RemoteForward(QObject *parent = nullptr);

    // route: "/chat/completions", "/completions"; done(): called once the exchange has ended.
    void forward(const std::shared_ptr<HttpExchange> &ex, const QString &route, const QByteArray &body,
                 const RemoteEndpoint &endpoint, const QString &apiKey, std::function<void()> done);

private:
    QNetworkAccessManager m_net;
};
