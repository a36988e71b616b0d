#include "remote/remoteengine.h"

#include "remote/remotehttp.h"
#include "remote/remotemessages.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QNetworkReply>
#include <QTimer>

struct RemoteEngine::Request {
    GenerationRequest request;
    QPointer<QNetworkReply> reply;
    bool cancelled = false;
    bool ended = false;
    SseParser sse;
    waste::ChatReply sofar;        // what replyReady has carried
    bool sawEnd = false;           // a finish_reason or [DONE] arrived: the answer is complete
    waste::FinishReason finish = waste::FinishReason::Stop;
    QString streamError;           // an error event inside the stream
    int promptTokens = 0;
    int completionTokens = 0;      // from the usage the server sends last (0 when it sends none)
    QElapsedTimer clock;
    double firstDelta = -1;        // seconds from the start to the first streamed word
    // Tool calls as they stream (OpenAI's tool_calls deltas, by index: the id and name come
    // first, the arguments in pieces); handed on whole when the answer ends.
    QMap<int, waste::ReplyToolCall> calls;
};

namespace {

waste::FinishReason finishFrom(const QString &reason)
{
    if (reason == QLatin1String("length"))
        return waste::FinishReason::Length;
    return waste::FinishReason::Stop;
}

} // namespace

RemoteEngine::RemoteEngine(QObject *parent) : QObject(parent)
{
}

RemoteEngine::~RemoteEngine()
{
    // Aborting emits finished(): nothing may report to a controller that is going away.
    if (m_openReply) {
        m_openReply->disconnect(this);
        m_openReply->abort();
    }
    for (const auto &r : std::as_const(m_requests))
        if (r->reply) {
            r->reply->disconnect(this);
            r->reply->abort();
        }
}

QVariantMap RemoteEngine::describe(const QJsonObject &modelEntry) const
{
    QVariantMap info{
        {QStringLiteral("remote"), true},
        {QStringLiteral("name"), m_endpoint.name},
        {QStringLiteral("baseUrl"), m_endpoint.baseUrl.toString()},
        {QStringLiteral("remoteModel"), m_endpoint.model},
        // The server renders the chat with its own template; ChatML is only what the chat
        // page's local rendering (kept for its bookkeeping) uses meanwhile.
        {QStringLiteral("chatFormat"), QVariant::fromValue(waste::genericChatFormat())},
        {QStringLiteral("hasChatTemplate"), true},
        // Whether the remote model reads images is the server's to say: it answers in words.
        {QStringLiteral("hasVision"), true},
    };
    // vLLM and SGLang say how long a context the model was started with.
    if (const int ctx = modelEntry.value(QStringLiteral("max_model_len")).toInt(); ctx > 0)
        info.insert(QStringLiteral("ctxMax"), ctx);
    return info;
}

void RemoteEngine::open(const RemoteEndpoint &endpoint, const QString &apiKey)
{
    close();
    m_endpoint = endpoint;
    m_key = apiKey;
    m_opening = true;
    const QString path = remoteendpoint::pathFor(endpoint.id);
    QNetworkReply *reply = m_net.get(remotehttp::request(remoteendpoint::routeUrl(endpoint.baseUrl, QStringLiteral("/models")), apiKey));
    m_openReply = reply;
    connect(reply, &QNetworkReply::finished, this, [this, reply, path] {
        reply->deleteLater();
        if (reply != m_openReply)
            return;
        m_openReply = nullptr;
        m_opening = false;
        const QByteArray body = reply->peek(reply->bytesAvailable());
        const remotehttp::ModelList list = remotehttp::readModels(reply, m_endpoint.baseUrl);
        noteReachability(reply, list.error);
        if (!list.error.isEmpty()) {
            Q_EMIT openFailed(path, list.error);
            return;
        }
        if (!list.ids.contains(m_endpoint.model)) {
            Q_EMIT openFailed(path, remotehttp::modelGone(m_endpoint.model, m_endpoint.baseUrl, list.ids));
            return;
        }
        QJsonObject entry;
        for (const QJsonValue &m : QJsonDocument::fromJson(body).object().value(QStringLiteral("data")).toArray())
            if (m.toObject().value(QStringLiteral("id")).toString() == m_endpoint.model)
                entry = m.toObject();
        m_open = true;
        Q_EMIT opened(path, describe(entry));
    });
}

void RemoteEngine::close()
{
    if (m_openReply) {
        m_openReply->disconnect(this);
        m_openReply->abort();
        m_openReply = nullptr;
    }
    m_opening = false;
    m_open = false;
    const auto requests = m_requests;
    for (const auto &r : requests)
        cancel(r->request.id);
}

void RemoteEngine::cancel(quint64 id)
{
    if (id == 0) {
        if (!m_openReply)
            return;
        m_openReply->disconnect(this);
        m_openReply->abort();
        m_openReply = nullptr;
        m_opening = false;
        Q_EMIT openFailed(remoteendpoint::pathFor(m_endpoint.id), tr("Opening %1 was cancelled.").arg(m_endpoint.name));
        return;
    }
    const std::shared_ptr<Request> r = m_requests.value(id);
    if (!r || r->cancelled)
        return;
    r->cancelled = true;
    // Aborting the HTTP request stops the server's generation too (it sees the client go).
    if (r->reply)
        r->reply->abort(); // finished() follows, synchronously, and ends the request
    else
        QTimer::singleShot(0, this, [this, r] { end(r); });
}

void RemoteEngine::generate(const GenerationRequest &request)
{
    auto r = std::make_shared<Request>();
    r->request = request;
    r->clock.start();
    m_requests.insert(request.id, r);
    // Reported from the event loop: the caller connects to the handle after this returns.
    QTimer::singleShot(0, this, [this, r] {
        if (r->cancelled) {
            end(r);
            return;
        }
        if (!m_open) {
            fail(*r, tr("No model is open: open one on the Models page first."));
            end(r);
            return;
        }
        // Only a conversation can be sent (the chat page's; the API server forwards its own
        // completions as they came): a request rendered for a local template has none.
        if (r->request.dialogue.turns.isEmpty()) {
            fail(*r, tr("This request cannot run on the remote engine %1: only chats are sent to it.").arg(m_endpoint.name));
            end(r);
            return;
        }
        Q_EMIT generationStarted(r->request.id, 0, 0);
        checkModel(r);
    });
}

void RemoteEngine::checkModel(const std::shared_ptr<Request> &r)
{
    QNetworkReply *reply = m_net.get(remotehttp::request(remoteendpoint::routeUrl(m_endpoint.baseUrl, QStringLiteral("/models")), m_key));
    r->reply = reply;
    connect(reply, &QNetworkReply::finished, this, [this, r, reply] {
        reply->deleteLater();
        r->reply = nullptr;
        if (r->cancelled) {
            end(r);
            return;
        }
        const remotehttp::ModelList list = remotehttp::readModels(reply, m_endpoint.baseUrl);
        noteReachability(reply, list.error);
        if (!list.error.isEmpty())
            fail(*r, list.error);
        else if (!list.ids.contains(m_endpoint.model))
            fail(*r, remotehttp::modelGone(m_endpoint.model, m_endpoint.baseUrl, list.ids));
        else {
            post(r);
            return;
        }
        end(r);
    });
}

void RemoteEngine::post(const std::shared_ptr<Request> &r)
{
    QJsonObject body;
    try {
        body = remotemessages::chatRequest(m_endpoint.model, r->request.dialogue, r->request.params);
    } catch (const std::exception &e) {
        fail(*r, tr("The conversation cannot be sent: %1").arg(QString::fromStdString(e.what())));
        end(r);
        return;
    }
    QNetworkRequest req = remotehttp::request(remoteendpoint::routeUrl(m_endpoint.baseUrl, QStringLiteral("/chat/completions")), m_key);
    req.setRawHeader("Accept", "text/event-stream");
    QNetworkReply *reply = m_net.post(req, QJsonDocument(body).toJson(QJsonDocument::Compact));
    r->reply = reply;
    connect(reply, &QNetworkReply::readyRead, this, [this, r, reply] {
        if (!r->cancelled)
            read(*r, reply);
    });
    connect(reply, &QNetworkReply::finished, this, [this, r, reply] {
        reply->deleteLater();
        r->reply = nullptr;
        if (!r->cancelled) {
            const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
            if (status == 200)
                read(*r, reply); // what arrived with the end
            const QString failure = remotehttp::failure(reply, m_endpoint.baseUrl, status == 200 ? QByteArray() : reply->readAll());
            noteReachability(reply, failure);
            if (!failure.isEmpty())
                fail(*r, failure);
            else if (!r->streamError.isEmpty())
                fail(*r, r->streamError);
            else if (!r->sawEnd)
                fail(*r, tr("The stream from %1 ended before the answer was complete (the server stopped or the "
                            "connection broke). What arrived is kept.").arg(m_endpoint.baseUrl.toString()));
        }
        end(r);
    });
}

void RemoteEngine::read(Request &r, QNetworkReply *reply)
{
    if ( reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt() != 200)
        return; // an error body is read whole at the end
    waste::ReplyDelta delta;
    for (const QByteArray &data : r.sse.feed(reply->readAll()))
        readEvent(r, data, delta);
    if (delta.empty())
        return;
    if (r.firstDelta < 0)
        r.firstDelta = r.clock.elapsed() / 1000.0;
    r.sofar.reasoning += delta.reasoning;
    r.sofar.content += delta.content;
    Q_EMIT tokensReady(r.request.id, QString::fromStdString(delta.content), statsOf(r));
    Q_EMIT replyReady(r.request.id, delta);
}

void RemoteEngine::readEvent(Request &r, const QByteArray &data, waste::ReplyDelta &delta)
{
    if (data.trimmed() == "[DONE]") {
        r.sawEnd = true;
        return;
    }
    const QJsonObject o = QJsonDocument::fromJson(data).object();
    if (const QJsonValue e = o.value(QStringLiteral("error")); !e.isUndefined() && !e.isNull()) {
        const QString message = e.isObject() ? e.toObject().value(QStringLiteral("message")).toString() : e.toString();
        r.streamError = tr("%1 stopped the answer with an error: %2").arg(m_endpoint.baseUrl.toString(), message);
        return;
    }
    if (const QJsonObject usage = o.value(QStringLiteral("usage")).toObject(); !usage.isEmpty()) {
        r.promptTokens = usage.value(QStringLiteral("prompt_tokens")).toInt();
        r.completionTokens = usage.value(QStringLiteral("completion_tokens")).toInt();
    }
    const QJsonObject choice = o.value(QStringLiteral("choices")).toArray().at(0).toObject();
    const QJsonObject d = choice.value(QStringLiteral("delta")).toObject();
    // "reasoning_content" (vLLM, SGLang, DeepSeek, WASTE Studio) or "reasoning" (newer vLLM).
    QString reasoning = d.value(QStringLiteral("reasoning_content")).toString();
    if (reasoning.isEmpty())
        reasoning = d.value(QStringLiteral("reasoning")).toString();
    delta.reasoning += reasoning.toStdString();
    delta.content += d.value(QStringLiteral("content")).toString().toStdString();
    for (const QJsonValue &v : d.value(QStringLiteral("tool_calls")).toArray()) {
        const QJsonObject c = v.toObject();
        waste::ReplyToolCall &call = r.calls[c.value(QStringLiteral("index")).toInt(int(r.calls.size()))];
        if (const QString id = c.value(QStringLiteral("id")).toString(); !id.isEmpty())
            call.id = id.toStdString();
        const QJsonObject fn = c.value(QStringLiteral("function")).toObject();
        call.name += fn.value(QStringLiteral("name")).toString().toStdString();
        call.arguments += fn.value(QStringLiteral("arguments")).toString().toStdString();
    }
    if (const QString reason = choice.value(QStringLiteral("finish_reason")).toString(); !reason.isEmpty()) {
        r.finish = finishFrom(reason);
        r.sawEnd = true;
    }
}

GenerationStats RemoteEngine::statsOf(const Request &r) const
{
    GenerationStats s;
    s.promptTokens = r.promptTokens;
    s.completionTokens = r.completionTokens;
    const double now = r.clock.elapsed() / 1000.0;
    s.prefillSeconds = r.firstDelta >= 0 ? r.firstDelta : now;
    s.decodeSeconds = r.firstDelta >= 0 ? now - r.firstDelta : 0;
    s.tokensPerSecond = s.decodeSeconds > 0 && r.completionTokens > 0 ? r.completionTokens / s.decodeSeconds : 0;
    s.hitRate = -1; // not known here: the expert cache, if any, is the remote server's
    return s;
}

void RemoteEngine::noteReachability(QNetworkReply *reply, const QString &failure)
{
    // No HTTP status at all: the connection itself failed. A status of any kind, even an
    // error, means the server is there.
    const bool reached = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt() > 0 ||
                         reply->error() == QNetworkReply::NoError || reply->error() == QNetworkReply::OperationCanceledError;
    if (reached == m_reachable)
        return;
    m_reachable = reached;
    Q_EMIT reachabilityChanged(reached, reached ? QString() : failure);
}

void RemoteEngine::fail(Request &r, const QString &message)
{
    if (r.ended)
        return;
    r.ended = true;
    Q_EMIT generationFailed(r.request.id, GenerationError{{}, {}, message});
}

void RemoteEngine::end(const std::shared_ptr<Request> &r)
{
    m_requests.remove(r->request.id);
    if (r->ended)
        return;
    r->ended = true;
    // The last reply step (done) comes before the end, as from the local engine.
    waste::ReplyDelta last;
    last.done = true;
    for (const waste::ReplyToolCall &c : std::as_const(r->calls))
        if (!c.name.empty())
            last.toolCalls.push_back(c);
    r->sofar.toolCalls = last.toolCalls;
    Q_EMIT replyReady(r->request.id, last);
    GenerationResult result;
    result.finishReason = r->cancelled ? waste::FinishReason::Cancelled : r->finish;
    result.text = QString::fromStdString(r->sofar.content);
    result.reply = r->sofar;
    result.stats = statsOf(*r);
    Q_EMIT generationFinished(r->request.id, result);
}
