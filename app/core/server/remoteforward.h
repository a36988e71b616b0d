// RemoteForward: the API server's requests passed on to the open remote engine, so local
// tools keep one address (this server) whatever serves the model. The client's request body
// goes to the remote server's route as it came, with "model" set to the remote model; the
// answer comes back as the remote server gave it: a stream relayed chunk by chunk as it
// arrives, a JSON answer with its status. When the remote engine cannot be reached the
// client gets a 502 with the same sentence the chat page shows (remote/remotehttp.h); a
// stream cut mid-answer ends with an error event. A client that leaves aborts the request.
//
// Requests are bounded as local ones are: at most maxConcurrent are with the remote engine
// at once, up to maxQueued more wait here in the order they came (a client that leaves
// while waiting is dropped), and past that a request gets 503 server_busy with Retry-After
// at once, instead of piling onto the remote server. /health reports the counts.
#pragma once

#include "remote/remoteendpoint.h"

#include <QNetworkAccessManager>
#include <QObject>

#include <deque>
#include <functional>
#include <memory>

class HttpExchange;

class RemoteForward : public QObject {
    Q_OBJECT
public:
    explicit RemoteForward(QObject *parent = nullptr);

    void setLimits(int maxConcurrent, int maxQueued);
    int running() const { return m_running; }
    int queued() const { return int(m_queue.size()); }

    // route: "/chat/completions", "/completions"; done(): called once the exchange has ended
    // (answered, refused, or its client gone while it waited).
    void forward(const std::shared_ptr<HttpExchange> &ex, const QString &route, const QByteArray &body,
                 const RemoteEndpoint &endpoint, const QString &apiKey, std::function<void()> done);

Q_SIGNALS:
    void countsChanged();

private:
    struct Pending {
        std::shared_ptr<HttpExchange> ex;
        QString route;
        QByteArray body; // the request as it goes on, "model" already the remote's
        RemoteEndpoint endpoint;
        QString apiKey;
        std::function<void()> done;
    };
    void start(Pending p);
    void startWaiting(); // as many waiting requests as there are free places

    QNetworkAccessManager m_net;
    int m_maxConcurrent = 4, m_maxQueued = 32;
    int m_running = 0;
    std::deque<Pending> m_queue;
};
