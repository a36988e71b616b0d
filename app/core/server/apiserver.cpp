// The one translation unit that includes QHttpServer (heavy to compile): listening,
// routing, auth and CORS. Settings: apiserversettings.cpp; requests: apiserverjobs.cpp.
#include "server/apiserver.h"

#include "server/apirequest.h"
#include "server/apiserverjob.h"
#include "engine/enginecontroller.h"
#include "server/httpexchange.h"
#include "server/messagesjson.h"
#include "server/openaijson.h"
#include "server/remoteforward.h"
#include "server/responsestore.h"

#include <QDateTime>
#include <QHostAddress>
#include <QHttpServer>
#include <QHttpServerRequest>
#include <QHttpServerResponder>
#include <QJsonArray>
#include <QTcpServer>

namespace {

QString methodName(QHttpServerRequest::Method m)
{
    switch (m) {
    case QHttpServerRequest::Method::Get:
        return QStringLiteral("GET");
    case QHttpServerRequest::Method::Post:
        return QStringLiteral("POST");
    case QHttpServerRequest::Method::Put:
        return QStringLiteral("PUT");
    case QHttpServerRequest::Method::Delete:
        return QStringLiteral("DELETE");
    case QHttpServerRequest::Method::Head:
        return QStringLiteral("HEAD");
    case QHttpServerRequest::Method::Options:
        return QStringLiteral("OPTIONS");
    case QHttpServerRequest::Method::Patch:
        return QStringLiteral("PATCH");
    default:
        return QStringLiteral("OTHER");
    }
}

QByteArray header(const QHttpServerRequest &request, const QByteArray &name)
{
    for (const auto &h : request.headers())
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return h.second;
    return {};
}

// Constant-time comparison so the key cannot be guessed byte by byte from timings.
bool sameSecret(const QByteArray &a, const QByteArray &b)
{
    quint8 diff = a.size() == b.size() ? 0 : 1;
    for (qsizetype i = 0; i < b.size(); ++i)
        diff |= quint8(quint8(i < a.size() ? a[i] : 0) ^ quint8(b[i]));
    return diff == 0;
}

QString clientName(const QHostAddress &a)
{
    bool v4 = false;
    const quint32 ip4 = a.toIPv4Address(&v4);
    return v4 ? QHostAddress(ip4).toString() : a.toString();
}

// Known routes, with aliases for clients whose base URL lacks "/v1".
enum class Route { None, Health, Models, Model, Chat, Completions, Responses, StoredResponse, Messages, CountTokens };

Route routeOf(QString path, QString *modelId)
{
    while (path.size() > 1 && path.endsWith(QLatin1Char('/')))
        path.chop(1);
    if (path == QLatin1String("/health"))
        return Route::Health;
    if (path.startsWith(QLatin1String("/v1/")))
        path = path.mid(3);
    if (path == QLatin1String("/models"))
        return Route::Models;
    if (path.startsWith(QLatin1String("/models/")) && path.size() > 8) {
        *modelId = path.mid(8);
        return Route::Model;
    }
    if (path == QLatin1String("/chat/completions"))
        return Route::Chat;
    if (path == QLatin1String("/completions"))
        return Route::Completions;
    if (path == QLatin1String("/responses"))
        return Route::Responses;
    if (path.startsWith(QLatin1String("/responses/")) && path.size() > 11 && path.indexOf(QLatin1Char('/'), 11) < 0) {
        *modelId = path.mid(11); // the response's id
        return Route::StoredResponse;
    }
    if (path == QLatin1String("/messages"))
        return Route::Messages;
    if (path == QLatin1String("/messages/count_tokens"))
        return Route::CountTokens;
    return Route::None;
}

// The methods a route answers, as an Allow header lists them.
QString routeMethods(Route r)
{
    if (r == Route::StoredResponse)
        return QStringLiteral("GET, DELETE");
    return (r == Route::Health || r == Route::Models || r == Route::Model) ? QStringLiteral("GET")
                                                                             : QStringLiteral("POST");
}

} // namespace

ApiServer::ApiServer(EngineController *engine, QObject *parent)
    : QObject(parent), m_engine(engine), m_log(new RequestLogModel(this)), m_responses(std::make_unique<ResponseStore>())
{
    m_uptime.start();
    m_keepAlive = new QTimer(this);
    connect(m_keepAlive, &QTimer::timeout, this, &ApiServer::keepStreamsAlive);
    setKeepAliveMs(m_keepAliveMs);
}

void ApiServer::setKeepAliveMs(int ms)
{
    m_keepAliveMs = qMax(1, ms);
    m_keepAlive->start(qMax(1, m_keepAliveMs / 4));
}

ApiServer::~ApiServer()
{
    stop();
    for (const auto &job : std::as_const(m_jobs))
        QObject::disconnect(job->disconnect);
    m_jobs.clear();
}

bool ApiServer::running() const
{
    return m_http != nullptr;
}

QString ApiServer::modelId() const
{
    return m_modelId.isEmpty() ? m_engine->modelName() : m_modelId;
}

void ApiServer::setError(const QString &error)
{
    if (error == m_error)
        return;
    m_error = error;
    Q_EMIT errorStringChanged();
}

void ApiServer::setRunning(bool on)
{
    if (on)
        start();
    else
        stop();
}

bool ApiServer::start()
{
    if (running())
        return true;
    QHostAddress address;
    const QString host = m_host.isEmpty() ? QStringLiteral("127.0.0.1") : m_host;
    if (host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0)
        address = QHostAddress(QHostAddress::LocalHost);
    else if (!address.setAddress(host)) {
        setError(tr("\"%1\" is not an IP address. Use 127.0.0.1 (this computer only), 0.0.0.0 (every network) "
                    "or one of this computer's addresses.").arg(host));
        return false;
    }
    if (!address.isLoopback() && m_apiKey.isEmpty()) {
        setError(tr("Listening on %1 lets other computers use the model: set an API key first.").arg(host));
        return false;
    }
    if (m_port < 0 || m_port > 65535) {
        setError(tr("Port %1 is not a valid port: choose one from 1 to 65535.").arg(m_port));
        return false;
    }

    auto http = std::make_unique<QHttpServer>();
    auto *tcp = new QTcpServer(http.get());
    if (!tcp->listen(address, quint16(m_port))) {
        switch (tcp->serverError()) {
        case QAbstractSocket::AddressInUseError:
            setError(tr("Port %1 is in use by another program. Choose another port, or close that program.")
                         .arg(m_port));
            break;
        case QAbstractSocket::SocketAccessError:
            setError(tr("Port %1 needs administrator rights. Choose a port above 1023.").arg(m_port));
            break;
        case QAbstractSocket::SocketAddressNotAvailableError:
            setError(tr("This computer has no network address %1. Use 127.0.0.1 or 0.0.0.0.").arg(host));
            break;
        default:
            setError(tr("Cannot listen on %1 port %2: %3.").arg(host).arg(m_port).arg(tcp->errorString()));
            break;
        }
        return false;
    }
    // One dispatcher for every request: no QHttpServer routes, so auth, CORS, 404/405 and
    // 413 are decided in one place and every answer goes through an HttpExchange.
    http->setMissingHandler([this](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
        handle(request, std::move(responder));
    });
    http->bind(tcp);
    m_tcp = tcp;
    m_boundPort = tcp->serverPort();
    m_http = std::move(http);
    setError({});
    Q_EMIT runningChanged();
    return true;
}

void ApiServer::stop()
{
    if (!m_http)
        return;
    // Requests still in the engine are cancelled; their sockets close with the server.
    for (const auto &job : std::as_const(m_jobs)) {
        QObject::disconnect(job->disconnect);
        job->handle->cancel();
    }
    m_http.reset();
    m_tcp = nullptr;
    m_boundPort = 0;
    Q_EMIT runningChanged();
}

void ApiServer::finishLog(quint64 logKey, const HttpExchange &ex, int tokens, const QElapsedTimer &clock)
{
    // 499: the client closed the connection before the answer (nginx's convention).
    const int status = ex.status() ? ex.status() : 499;
    m_log->finish(logKey, status, tokens, clock.elapsed());
}

void ApiServer::handle(const QHttpServerRequest &request, QHttpServerResponder &&responder)
{
    QElapsedTimer clock;
    clock.start();
    const QString method = methodName(request.method());
    const QString path = request.url().path();

    // CORS: only origins on the allow-list get the headers that let a browser read answers.
    HttpExchange::Headers cors;
    const QByteArray origin = header(request, "origin");
    bool originAllowed = false;
    if (!origin.isEmpty()) {
        QString o = QString::fromUtf8(origin);
        while (o.endsWith(QLatin1Char('/')))
            o.chop(1);
        originAllowed = m_corsOrigins.contains(QStringLiteral("*")) || m_corsOrigins.contains(o);
        if (originAllowed) {
            cors.append(qMakePair(QByteArrayLiteral("Access-Control-Allow-Origin"), origin));
            cors.append(qMakePair(QByteArrayLiteral("Vary"), QByteArrayLiteral("Origin")));
        }
    }
    auto ex = std::make_shared<HttpExchange>(std::move(responder), cors);
    if (request.body().size() >= kLargeBodyBytes)
        ex->closeWhenAnswered(); // its connection would keep the body (HttpExchange::closeWhenAnswered)
    const quint64 logKey = m_log->begin(clientName(request.remoteAddress()), method + QLatin1Char(' ') + path);
    QString modelParam;
    const Route route = routeOf(path, &modelParam);
    // Anthropic's routes answer errors in Anthropic's shape, every other one in OpenAI's.
    const bool anthropicShape = route == Route::Messages || route == Route::CountTokens;
    auto answer = [&](const ApiError &e) {
        ex->sendJson(e.status, anthropicShape ? anthropic::errorBody(e) : e.toJson(), e.headers);
        finishLog(logKey, *ex, 0, clock);
    };
    if (route == Route::None)
        return answer(ApiError::notFound(method, path));

    if (request.method() == QHttpServerRequest::Method::Options) {
        HttpExchange::Headers h;
        h.append(qMakePair(QByteArrayLiteral("Allow"), routeMethods(route).toLatin1() + ", OPTIONS"));
        if (originAllowed) {
            h.append(qMakePair(QByteArrayLiteral("Access-Control-Allow-Methods"), routeMethods(route).toLatin1() + ", OPTIONS"));
            h.append(qMakePair(QByteArrayLiteral("Access-Control-Allow-Headers"),
                               QByteArrayLiteral("Authorization, Content-Type, X-Api-Key, Anthropic-Version")));
            h.append(qMakePair(QByteArrayLiteral("Access-Control-Max-Age"), QByteArrayLiteral("600")));
        }
        ex->sendEmpty(204, h);
        finishLog(logKey, *ex, 0, clock);
        return;
    }
    if (!routeMethods(route).split(QStringLiteral(", ")).contains(method))
        return answer(ApiError::methodNotAllowed(method, path, routeMethods(route)));

    if (route != Route::Health && !m_apiKey.isEmpty()) {
        // The bearer key (OpenAI's clients) or the same key as x-api-key (Anthropic's).
        const QByteArray auth = header(request, "authorization").trimmed();
        const QByteArray expected = "Bearer " + m_apiKey.toUtf8();
        const QByteArray apiKey = header(request, "x-api-key").trimmed();
        if (!sameSecret(auth, expected) && !(!apiKey.isEmpty() && sameSecret(apiKey, m_apiKey.toUtf8())))
            return answer(ApiError::unauthorized());
    }

    switch (route) {
    case Route::Health:
        answerHealth(*ex);
        finishLog(logKey, *ex, 0, clock);
        return;
    case Route::Models:
    case Route::Model:
        answerModels(*ex, route == Route::Model ? modelParam : QString());
        finishLog(logKey, *ex, 0, clock);
        return;
    case Route::StoredResponse:
        answerStoredResponse(*ex, method, modelParam);
        finishLog(logKey, *ex, 0, clock);
        return;
    default:
        break;
    }

    bool lengthOk = true;
    const qint64 declared = header(request, "content-length").toLongLong(&lengthOk);
    if ((lengthOk && declared > m_maxBodyBytes) || request.body().size() > m_maxBodyBytes)
        return answer(ApiError::tooLarge(m_maxBodyBytes));

    if (m_engine->isRemote()) {
        if (route == Route::Chat || route == Route::Completions)
            return forwardToRemote(ex, route == Route::Chat ? QStringLiteral("/chat/completions") : QStringLiteral("/completions"),
                                   request.body(), logKey, clock);
        return answer(notForwarded(path));
    }
    try {
        const QJsonObject body = parseJsonBody(request.body());
        ParseOptions options;
        options.allowLocalImages = m_allowLocalImages;
        switch (route) {
        case Route::Responses:
            return startResponse(ex, body, options, logKey, clock);
        case Route::Messages:
            return startMessage(ex, body, options, logKey, clock);
        case Route::CountTokens:
            return countMessageTokens(ex, body, options, logKey, clock);
        default:
            break;
        }
        ApiRequest parsed = route == Route::Chat ? parseChatRequest(body, options) : parseCompletionRequest(body, options);
        startCompletion(ex, std::move(parsed), logKey, clock);
    } catch (const ApiError &e) {
        answer(e);
    }
}

void ApiServer::answerHealth(HttpExchange &ex)
{
    // The engine's side: decoded now, waiting for room, and the bounds of both; for a remote
    // engine, the requests with it and those waiting here (server/remoteforward.h).
    const bool remote = m_engine->isRemote();
    const int running = remote ? (m_forward ? m_forward->running() : 0) : m_engine->runningRequests();
    const int queued = remote ? (m_forward ? m_forward->queued() : 0) : m_engine->waitingRequests();
    QJsonObject o{{QStringLiteral("engine"), QString::fromStdString(waste::buildInfo())},
                  {QStringLiteral("uptime_s"), double(m_uptime.elapsed() / 1000)},
                  {QStringLiteral("active_requests"), remote ? running + queued : activeRequests()},
                  {QStringLiteral("requests"),
                   QJsonObject{{QStringLiteral("running"), running},
                               {QStringLiteral("queued"), queued},
                               {QStringLiteral("max_concurrent"), remote ? m_remoteMaxConcurrent : m_engine->maxConcurrent()},
                               {QStringLiteral("max_queued"), m_maxQueued}}}};
    int status = 503;
    switch (m_engine->state()) {
    case EngineController::Ready:
    case EngineController::Generating:
        status = 200;
        o.insert(QStringLiteral("status"), QStringLiteral("ok"));
        o.insert(QStringLiteral("model"), modelId());
        break;
    case EngineController::Loading:
        o.insert(QStringLiteral("status"), QStringLiteral("loading"));
        o.insert(QStringLiteral("progress"), m_engine->loadProgress());
        break;
    case EngineController::Failed:
        o.insert(QStringLiteral("status"), QStringLiteral("error"));
        o.insert(QStringLiteral("message"), m_engine->errorString());
        break;
    case EngineController::NoModel:
        o.insert(QStringLiteral("status"), QStringLiteral("no_model"));
        break;
    }
    ex.sendJson(status, o);
}

void ApiServer::answerModels(HttpExchange &ex, const QString &id)
{
    const bool ready = m_engine->state() == EngineController::Ready || m_engine->state() == EngineController::Generating;
    const qint64 created = m_uptime.isValid() ? QDateTime::currentSecsSinceEpoch() - m_uptime.elapsed() / 1000 : 0;
    if (!id.isEmpty()) {
        if (!ready || id != modelId()) {
            ApiError e;
            e.status = 404;
            e.message = tr("The model '%1' does not exist: this server serves %2.")
                            .arg(id, ready ? QStringLiteral("'") + modelId() + QStringLiteral("'") : tr("no model yet"));
            e.param = QStringLiteral("model");
            e.code = QStringLiteral("model_not_found");
            ex.sendJson(404, e.toJson());
            return;
        }
        ex.sendJson(200, openai::modelObject(modelId(), created, m_engine->modelInfo()));
        return;
    }
    QJsonArray data;
    if (ready)
        data.append(openai::modelObject(modelId(), created, m_engine->modelInfo()));
    ex.sendJson(200, {{QStringLiteral("object"), QStringLiteral("list")}, {QStringLiteral("data"), data}});
}
