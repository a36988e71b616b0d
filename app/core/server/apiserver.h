// ApiServer: the OpenAI-compatible HTTP API over the open model (GET /health, GET /v1/models,
// POST /v1/chat/completions, POST /v1/completions, POST /v1/responses; SSE streaming), and
// Anthropic's Messages API (POST /v1/messages, POST /v1/messages/count_tokens). Runs on the GUI thread;
// requests reach the engine through EngineController (queued, one model, served in turn) and
// a client that disconnects cancels its request. No socket is open while it is stopped.
// Binds 127.0.0.1 by default; any other address requires an API key. CORS is off unless
// origins are allowed explicitly.
#pragma once

#include "server/chatprompt.h"
#include "server/requestlogmodel.h"
#include "singleton/appsingleton.h"

#include <QElapsedTimer>
#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QTimer>
#include <QQmlEngine>
#include <QStringList>

#include <memory>

class EngineController;
class HttpExchange;
class QHttpServer;
class QHttpServerRequest;
class QHttpServerResponder;
class RemoteForward;
class QTcpServer;
class ReplyDialect;
class RequestImages;
class ResponseStore;
struct ApiError;
struct ApiRequest;
struct ParseOptions;
struct PromptSegment;
struct GenerationError;
struct GenerationResult;
struct GenerationStats;
namespace waste {
struct ReplyDelta;
enum class ChatFormat;
}

class ApiServer : public QObject, public AppSingleton<ApiServer> {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON
    Q_PROPERTY(bool running READ running NOTIFY runningChanged)
    Q_PROPERTY(QString host READ host WRITE setHost NOTIFY settingsChanged)
    Q_PROPERTY(int port READ port WRITE setPort NOTIFY settingsChanged)
    Q_PROPERTY(QString apiKey READ apiKey WRITE setApiKey NOTIFY settingsChanged)
    Q_PROPERTY(QStringList corsOrigins READ corsOrigins WRITE setCorsOrigins NOTIFY settingsChanged)
    Q_PROPERTY(bool allowLocalImages READ allowLocalImages WRITE setAllowLocalImages NOTIFY settingsChanged)
    Q_PROPERTY(bool hostIsLoopback READ hostIsLoopback NOTIFY settingsChanged)
    Q_PROPERTY(int boundPort READ boundPort NOTIFY runningChanged)
    Q_PROPERTY(QString url READ url NOTIFY runningChanged)
    Q_PROPERTY(QString errorString READ errorString NOTIFY errorStringChanged)
    Q_PROPERTY(int activeRequests READ activeRequests NOTIFY activeRequestsChanged)
    Q_PROPERTY(RequestLogModel *log READ log CONSTANT)

public:
    // No default argument: Qt 6.4 prefers a default constructor over create() for QML singletons.
    explicit ApiServer(EngineController *engine, QObject *parent);
    ~ApiServer() override;

    bool running() const;
    QString host() const { return m_host; }
    void setHost(const QString &host);
    int port() const { return m_port; }
    void setPort(int port);
    QString apiKey() const { return m_apiKey; }
    void setApiKey(const QString &key);
    QStringList corsOrigins() const { return m_corsOrigins; }
    void setCorsOrigins(const QStringList &origins);
    bool allowLocalImages() const { return m_allowLocalImages; }
    void setAllowLocalImages(bool allow);
    bool hostIsLoopback() const;
    int boundPort() const { return m_boundPort; }
    QString url() const;
    QString errorString() const { return m_error; }
    int activeRequests() const { return int(m_jobs.size()); }
    RequestLogModel *log() const { return m_log; }

    // Bodies larger than this are refused with 413 (default 64 MB).
    void setMaxBodyBytes(qint64 bytes) { m_maxBodyBytes = bytes; }
    // A request with a body at least this large has its connection closed after the answer.
    static constexpr qsizetype kLargeBodyBytes = 1 << 20;
    qint64 maxBodyBytes() const { return m_maxBodyBytes; }
    // Requests that may wait for the engine beyond those it decodes at once (the model's
    // maxConcurrent); past them a request is refused with 503 server_busy (default 32).
    void setMaxQueued(int n) { m_maxQueued = qMax(0, n); }
    int maxQueued() const { return m_maxQueued; }
    // While the open model is a remote engine: how many requests are passed on to it at
    // once (default 4); more wait in the same bounded queue (maxQueued) as local ones.
    void setRemoteMaxConcurrent(int n) { m_remoteMaxConcurrent = qMax(1, n); }
    int remoteMaxConcurrent() const { return m_remoteMaxConcurrent; }
    // A stream with nothing to send for this long (a long prompt being read) gets a keep-alive
    // (ReplyDialect::streamKeepAlive: an SSE comment, Messages' ping), so clients and proxies
    // that drop a quiet connection keep it; default 10 s, checked a few times per interval.
    void setKeepAliveMs(int ms);
    int keepAliveMs() const { return m_keepAliveMs; }
    // max_tokens when a request gives none (clamped to the context).
    void setDefaultMaxTokens(int n) { m_defaultMaxTokens = n; }
    // The id /v1/models shows; empty: the container's name.
    void setModelId(const QString &id) { m_modelId = id; }
    QString modelId() const;

    // Loads host, port, key, CORS list and image setting from QSettings and saves changes.
    void persistSettings();

    // Starts listening; false with errorString() set when it cannot.
    Q_INVOKABLE bool start();
    Q_INVOKABLE void stop();
    Q_INVOKABLE void setRunning(bool on);
    // A fresh random key ("sk-waste-" + 40 characters); does not set it.
    Q_INVOKABLE QString generateApiKey() const;

Q_SIGNALS:
    void runningChanged();
    void settingsChanged();
    void errorStringChanged();
    void activeRequestsChanged();

private:
    struct Job;

    void setError(const QString &error);
    void handle(const QHttpServerRequest &request, QHttpServerResponder &&responder);
    void answerHealth(HttpExchange &ex);
    void answerModels(HttpExchange &ex, const QString &id);
    // dialect: the API's reply shape when it is not Chat Completions / Completions.
    void startCompletion(const std::shared_ptr<HttpExchange> &ex, ApiRequest request, quint64 logKey,
                         QElapsedTimer clock, std::unique_ptr<ReplyDialect> dialect = {});
    // Throws ApiError (503) unless a model is open and ready.
    void requireModel() const;
    // A chat request's prompt in the model's format; its pictures are written to `files`.
    RequestPrompt chatPrompt(const ApiRequest &request, waste::ChatFormat format, RequestImages &files);
    // POST /v1/responses (apiserverresponses.cpp), /v1/messages and /v1/messages/count_tokens
    // (apiservermessages.cpp): their requests checked and started. Throw ApiError.
    void startResponse(const std::shared_ptr<HttpExchange> &ex, const QJsonObject &body, const ParseOptions &options,
                       quint64 logKey, QElapsedTimer clock);
    // GET /v1/responses/{id} (the response as answered) and DELETE (forgets it), for the
    // responses kept for previous_response_id; 404 for one not kept.
    void answerStoredResponse(HttpExchange &ex, const QString &method, const QString &id);
    void startMessage(const std::shared_ptr<HttpExchange> &ex, const QJsonObject &body, const ParseOptions &options,
                      quint64 logKey, QElapsedTimer clock);
    void countMessageTokens(const std::shared_ptr<HttpExchange> &ex, const QJsonObject &body,
                            const ParseOptions &options, quint64 logKey, QElapsedTimer clock);
    void finishLog(quint64 logKey, const HttpExchange &ex, int tokens, const QElapsedTimer &clock);
    // The open model is a remote engine: the request goes on to it (apiserverremote.cpp).
    void forwardToRemote(const std::shared_ptr<HttpExchange> &ex, const QString &route, const QByteArray &body,
                         quint64 logKey, QElapsedTimer clock);
    // A route a remote engine is not asked for (only completions are forwarded).
    static ApiError notForwarded(const QString &path);

    void onStarted(Job &job, int promptTokens);
    void onTokens(Job &job, const QString &text);
    void onReply(Job &job, const waste::ReplyDelta &delta);
    void onFinished(Job &job, const GenerationResult &result);
    void onFailed(Job &job, const GenerationError &error);
    void beginStream(Job &job);
    void endJob(const Job &job);
    void keepStreamsAlive();

    EngineController *m_engine;
    RequestLogModel *m_log;
    RemoteForward *m_forward = nullptr; // made on the first forwarded request
    std::unique_ptr<QHttpServer> m_http;
    QTcpServer *m_tcp = nullptr; // owned by m_http once bound
    QHash<const Job *, std::shared_ptr<Job>> m_jobs; // requests in the engine
    std::unique_ptr<ResponseStore> m_responses;       // the Responses API's previous_response_id memory

    QString m_host = QStringLiteral("127.0.0.1");
    int m_port = 8080;
    QString m_apiKey;
    QStringList m_corsOrigins;
    bool m_allowLocalImages = false;
    int m_boundPort = 0;
    QString m_error;
    QString m_modelId;
    qint64 m_maxBodyBytes = 64ll * 1024 * 1024;
    int m_defaultMaxTokens = 4096;
    int m_maxQueued = 32;
    int m_keepAliveMs = 10000;
    QTimer *m_keepAlive = nullptr;
    int m_remoteMaxConcurrent = 4;
    bool m_persist = false;
    QElapsedTimer m_uptime;
};
