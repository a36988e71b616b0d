// RemoteEngine: generation on a remote OpenAI-compatible server (vLLM, SGLang, llama-server,
// another WASTE Studio), for EngineController when the open model is a remote engine. It
// reports with the same signals, by request id, as EngineWorker, so every GenerationHandle
// (and so the chat page) works the same against it. It lives on the GUI thread: the network
// is asynchronous, nothing here blocks.
//
// Each request first asks GET /v1/models whether the model is still served (a clear message
// when it has gone or the server no longer answers, before anything is shown), then streams
// POST /v1/chat/completions: content deltas arrive as the reply's content, reasoning_content
// (or "reasoning") deltas as its reasoning. Stop aborts the HTTP request and ends the
// request as cancelled with what streamed; a failure (refused key, server gone, stream cut
// mid-answer) ends it with a message, and what streamed before stays with the caller.
#pragma once

#include "generation/generationtypes.h"
#include "remote/remoteendpoint.h"
#include "remote/sseparser.h"

#include <QElapsedTimer>
#include <QHash>
#include <QNetworkAccessManager>
#include <QObject>
#include <QPointer>
#include <QVariantMap>

#include <memory>

#include <QNetworkReply>

class RemoteEngine : public QObject {
    Q_OBJECT
public:
    explicit RemoteEngine(QObject *parent = nullptr);
    ~RemoteEngine() override;

    // Checks that `endpoint` answers and lists its model, then reports opened() (or
    // openFailed() with the reason). Opening again or close() drops a check in progress.
    void open(const RemoteEndpoint &endpoint, const QString &apiKey);
    void close();
    // An engine is open (opened() was reported and close() was not called since).
    bool isOpen() const { return m_open; }
    // Open, or being opened.
    bool isActive() const { return m_open || m_opening; }
    const RemoteEndpoint &endpoint() const { return m_endpoint; }
    QString apiKey() const { return m_key; }

    // Starts request.id on the open engine (request.dialogue is what is sent). Never reports
    // before it returns, so the caller can connect to the request's handle first.
    void generate(const GenerationRequest &request);
    bool owns(quint64 id) const { return m_requests.contains(id); }
    // Stops one request (id 0: the open in progress).
    void cancel(quint64 id);

Q_SIGNALS:
    void opened(const QString &path, const QVariantMap &info);
    void openFailed(const QString &path, const QString &message);

    void generationStarted(quint64 id, int promptTokens, int reusedTokens);
    void tokensReady(quint64 id, const QString &text, const GenerationStats &stats);
    void replyReady(quint64 id, const waste::ReplyDelta &delta);
    void generationFinished(quint64 id, const GenerationResult &result);
    void generationFailed(quint64 id, const GenerationError &error);
    // Whether the server answered its last request at all (any HTTP status), or the
    // connection failed (refused, reset, no route, timed out): `why` says which, in words.
    void reachabilityChanged(bool reachable, const QString &why);

private:
    struct Request;

    void checkModel(const std::shared_ptr<Request> &r);
    void post(const std::shared_ptr<Request> &r);
    void read(Request &r, QNetworkReply *reply);
    void readEvent(Request &r, const QByteArray &data, waste::ReplyDelta &delta);
    void end(const std::shared_ptr<Request> &r);
    void fail(Request &r, const QString &message);
    // Reads whether `reply` reached the server; reports a change.
    void noteReachability(QNetworkReply *reply, const QString &failure);
    bool m_reachable = true;
    GenerationStats statsOf(const Request &r) const;
    QVariantMap describe(const QJsonObject &modelEntry) const;

    QNetworkAccessManager m_net;
    RemoteEndpoint m_endpoint;
    QString m_key;
    bool m_open = false;
    bool m_opening = false;
    QPointer<QNetworkReply> m_openReply;
    QHash<quint64, std::shared_ptr<Request>> m_requests;
};
