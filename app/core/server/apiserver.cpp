// The one translation unit that includes QHttpServer (heavy to compile): listening,
// routing, auth, CORS and the glue between HTTP exchanges and engine requests.
#include "server/apiserver.h"

#include "server/apirequest.h"
#include "server/chatformat.h"
#include "engine/enginecontroller.h"
#include "server/httpexchange.h"
#include "prompt/mediablock.h"
#include "server/openaijson.h"
#include "server/promptrenderer.h"
#include "server/replyassembler.h"
#include "server/requestconstraint.h"

#include <QDateTime>
#include <QFile>
#include <QHostAddress>
#include <QHttpServer>
#include <QHttpServerRequest>
#include <QHttpServerResponder>
#include <QJsonArray>
#include <QRandomGenerator>
#include <QSettings>
#include <QTcpServer>
#include <QTemporaryDir>

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

QString mapFinishReason(const QString &engineReason)
{
    if (engineReason == QLatin1String("length") || engineReason == QLatin1String("context_full"))
        return QStringLiteral("length");
    return QStringLiteral("stop");
}

// Known routes, with aliases for clients whose base URL lacks "/v1".
enum class Route { None, Health, Models, Model, Chat, Completions };

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
    return Route::None;
}

QString routeMethod(Route r)
{
    return (r == Route::Chat || r == Route::Completions) ? QStringLiteral("POST") : QStringLiteral("GET");
}

} // namespace

struct ApiServer::Job {
    std::shared_ptr<HttpExchange> ex;
    quint64 engineId = 0;
    ApiRequest::Kind kind = ApiRequest::Chat;
    bool stream = false;
    bool includeUsage = false;
    ChatFormat format = ChatFormat::Raw;
    std::unique_ptr<ChatReplyAssembler> reply; // chat: the parsed reply, turned into OpenAI deltas
    QString id;
    QString model;
    qint64 created = 0;
    int promptTokens = 0;
    bool started = false;
    quint64 logKey = 0;
    QElapsedTimer clock;
    QMetaObject::Connection disconnect;
    std::unique_ptr<QTemporaryDir> images;
};

ApiServer::ApiServer(EngineController *engine, QObject *parent)
    : QObject(parent), m_engine(engine), m_log(new RequestLogModel(this))
{
    m_uptime.start();
    connect(m_engine, &EngineController::generationStarted, this,
            [this](quint64 id, int promptTokens, int) { onStarted(id, promptTokens); });
    connect(m_engine, &EngineController::tokensReady, this,
            [this](quint64 id, const QString &text, const GenerationStats &) { onTokens(id, text); });
    connect(m_engine, &EngineController::replyReady, this, &ApiServer::onReply);
    connect(m_engine, &EngineController::generationFinished, this, &ApiServer::onFinished);
    connect(m_engine, &EngineController::generationFailed, this, &ApiServer::onFailed);
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

void ApiServer::setHost(const QString &host)
{
    const QString h = host.trimmed();
    if (h == m_host)
        return;
    m_host = h;
    Q_EMIT settingsChanged();
}

void ApiServer::setPort(int port)
{
    if (port == m_port)
        return;
    m_port = port;
    Q_EMIT settingsChanged();
}

void ApiServer::setApiKey(const QString &key)
{
    const QString k = key.trimmed();
    if (k == m_apiKey)
        return;
    m_apiKey = k;
    Q_EMIT settingsChanged();
}

void ApiServer::setCorsOrigins(const QStringList &origins)
{
    QStringList clean;
    for (const QString &o : origins) {
        QString t = o.trimmed();
        while (t.endsWith(QLatin1Char('/')))
            t.chop(1);
        if (!t.isEmpty() && !clean.contains(t))
            clean << t;
    }
    if (clean == m_corsOrigins)
        return;
    m_corsOrigins = clean;
    Q_EMIT settingsChanged();
}

void ApiServer::setAllowLocalImages(bool allow)
{
    if (allow == m_allowLocalImages)
        return;
    m_allowLocalImages = allow;
    Q_EMIT settingsChanged();
}

bool ApiServer::hostIsLoopback() const
{
    if (m_host.isEmpty() || m_host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0)
        return true;
    const QHostAddress a(m_host);
    return !a.isNull() && a.isLoopback();
}

QString ApiServer::url() const
{
    if (!running())
        return {};
    QString h = m_host.isEmpty() ? QStringLiteral("127.0.0.1") : m_host;
    if (h == QLatin1String("0.0.0.0") || h == QLatin1String("::"))
        h = QStringLiteral("127.0.0.1");
    if (h.contains(QLatin1Char(':')))
        h = QLatin1Char('[') + h + QLatin1Char(']');
    return QStringLiteral("http://%1:%2/v1").arg(h).arg(m_boundPort);
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

void ApiServer::persistSettings()
{
    QSettings s;
    s.beginGroup(QStringLiteral("server"));
    m_host = s.value(QStringLiteral("host"), m_host).toString();
    m_port = s.value(QStringLiteral("port"), m_port).toInt();
    m_apiKey = s.value(QStringLiteral("apiKey"), m_apiKey).toString();
    m_corsOrigins = s.value(QStringLiteral("corsOrigins"), m_corsOrigins).toStringList();
    m_allowLocalImages = s.value(QStringLiteral("allowLocalImages"), m_allowLocalImages).toBool();
    s.endGroup();
    Q_EMIT settingsChanged();
    if (m_persist)
        return;
    m_persist = true;
    connect(this, &ApiServer::settingsChanged, this, [this] {
        QSettings s;
        s.beginGroup(QStringLiteral("server"));
        s.setValue(QStringLiteral("host"), m_host);
        s.setValue(QStringLiteral("port"), m_port);
        s.setValue(QStringLiteral("apiKey"), m_apiKey);
        s.setValue(QStringLiteral("corsOrigins"), m_corsOrigins);
        s.setValue(QStringLiteral("allowLocalImages"), m_allowLocalImages);
    });
}

QString ApiServer::generateApiKey() const
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    QString key = QStringLiteral("sk-waste-");
    for (int i = 0; i < 40; ++i)
        key += QLatin1Char(alphabet[QRandomGenerator::system()->bounded(int(sizeof(alphabet) - 1))]);
    return key;
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
        m_engine->cancel(job->engineId);
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
    const quint64 logKey = m_log->begin(clientName(request.remoteAddress()), method + QLatin1Char(' ') + path);
    auto answer = [&](const ApiError &e) {
        ex->sendJson(e.status, e.toJson(), e.headers);
        finishLog(logKey, *ex, 0, clock);
    };

    QString modelParam;
    const Route route = routeOf(path, &modelParam);
    if (route == Route::None)
        return answer(ApiError::notFound(method, path));

    if (request.method() == QHttpServerRequest::Method::Options) {
        HttpExchange::Headers h;
        h.append(qMakePair(QByteArrayLiteral("Allow"), routeMethod(route).toLatin1() + ", OPTIONS"));
        if (originAllowed) {
            h.append(qMakePair(QByteArrayLiteral("Access-Control-Allow-Methods"), routeMethod(route).toLatin1() + ", OPTIONS"));
            h.append(qMakePair(QByteArrayLiteral("Access-Control-Allow-Headers"),
                               QByteArrayLiteral("Authorization, Content-Type")));
            h.append(qMakePair(QByteArrayLiteral("Access-Control-Max-Age"), QByteArrayLiteral("600")));
        }
        ex->sendEmpty(204, h);
        finishLog(logKey, *ex, 0, clock);
        return;
    }
    if (method != routeMethod(route))
        return answer(ApiError::methodNotAllowed(method, path, routeMethod(route)));

    if (route != Route::Health && !m_apiKey.isEmpty()) {
        const QByteArray auth = header(request, "authorization").trimmed();
        const QByteArray expected = "Bearer " + m_apiKey.toUtf8();
        if (!sameSecret(auth, expected))
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
    default:
        break;
    }

    bool lengthOk = true;
    const qint64 declared = header(request, "content-length").toLongLong(&lengthOk);
    if ((lengthOk && declared > m_maxBodyBytes) || request.body().size() > m_maxBodyBytes)
        return answer(ApiError::tooLarge(m_maxBodyBytes));

    try {
        const QJsonObject body = parseJsonBody(request.body());
        ParseOptions options;
        options.allowLocalImages = m_allowLocalImages;
        ApiRequest parsed = route == Route::Chat ? parseChatRequest(body, options) : parseCompletionRequest(body, options);
        startCompletion(ex, std::move(parsed), logKey, clock);
    } catch (const ApiError &e) {
        answer(e);
    }
}

void ApiServer::answerHealth(HttpExchange &ex)
{
    QJsonObject o{{QStringLiteral("engine"), QString::fromStdString(waste::buildInfo())},
                  {QStringLiteral("uptime_s"), double(m_uptime.elapsed() / 1000)},
                  {QStringLiteral("active_requests"), activeRequests()}};
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

void ApiServer::startCompletion(const std::shared_ptr<HttpExchange> &ex, ApiRequest request, quint64 logKey,
                                QElapsedTimer clock)
{
    switch (m_engine->state()) {
    case EngineController::Ready:
    case EngineController::Generating:
        break;
    case EngineController::Loading:
        throw ApiError::noModel(tr("The model is still loading (%1%); try again shortly (GET /health says when).")
                                    .arg(int(m_engine->loadProgress() * 100)));
    default:
        throw ApiError::noModel(tr("No model is loaded: open one in WASTE Studio or start `waste serve MODEL`."));
    }

    auto job = std::make_shared<Job>();
    job->ex = ex;
    job->kind = request.kind;
    job->stream = request.stream;
    job->includeUsage = request.stream && request.includeUsage;
    job->format = chatFormatFor(m_engine->modelInfo());
    job->id = openai::newId(request.kind == ApiRequest::Chat ? QStringLiteral("chatcmpl") : QStringLiteral("cmpl"));
    job->model = modelId();
    job->created = QDateTime::currentSecsSinceEpoch();
    job->logKey = logKey;
    job->clock = clock;

    GenerationRequest gen;
    if (request.kind == ApiRequest::Chat) {
        ImageMarkup images = [&](const ContentPart &part) -> QString {
            if (!m_engine->hasVision())
                throw ApiError::invalid(QStringLiteral("messages"),
                                        tr("The open model (%1) does not read images.").arg(modelId()));
            QByteArray bytes = part.imageData;
            QString path = part.imagePath;
            if (!path.isEmpty()) {
                QFile f(path);
                if (!f.open(QIODevice::ReadOnly))
                    throw ApiError::invalid(QStringLiteral("messages"), tr("Cannot read the image %1.").arg(path));
            } else {
                if (!job->images)
                    job->images = std::make_unique<QTemporaryDir>();
                path = job->images->filePath(QStringLiteral("image-%1").arg(gen.imagePaths.size()));
                QFile f(path);
                if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size())
                    throw ApiError::server(tr("Cannot write a temporary image file to %1.").arg(path));
            }
            // The same media block as the chat page and the CLI: the size once decoded, EXIF
            // orientation applied, read from the header as the engine reads it.
            QString block;
            try {
                block = imageMediaBlock(path);
            } catch (const std::exception &e) {
                // The reason names the file; a data URL's temporary file means nothing to the client.
                const QString which = part.imagePath.isEmpty() ? tr("image %1 (data URL)").arg(gen.imagePaths.size() + 1)
                                                               : part.imagePath;
                throw ApiError::invalid(QStringLiteral("messages"),
                                        tr("An image could not be read: %1")
                                            .arg(QString::fromStdString(e.what()).replace(path, which)));
            }
            gen.imagePaths << path;
            return block;
        };
        if (job->format == ChatFormat::Raw) {
            gen.segments = renderRawChat(request, images);
        } else {
            QStringList prompts;
            for (const ApiChatMessage &m : std::as_const(request.messages))
                for (const ContentPart &part : m.parts)
                    if (part.kind == ContentPart::Image)
                        prompts << images(part);
            gen.segments = renderTemplatedChat(job->format, request, prompts);
        }
    } else {
        gen.segments = renderCompletion(request);
    }

    waste::GenParams &p = gen.params;
    p.temperature = float(request.topP <= 0.0 ? 0.0 : request.temperature);
    p.topP = float(qMax(request.topP, 1e-6));
    p.topK = request.topK;
    p.seed = request.seed ? *request.seed : QRandomGenerator::system()->generate64();
    const int ctx = m_engine->contextTokens() > 0 ? m_engine->contextTokens() : m_defaultMaxTokens;
    p.maxTokens = request.maxTokens ? *request.maxTokens : qMin(m_defaultMaxTokens, ctx);
    for (const QString &s : std::as_const(request.stop))
        p.stopStrings.push_back(s.toStdString());
    gen.makeConstraint = constraintFor(request);
    if (request.kind == ApiRequest::Chat) {
        gen.parseReply = true;
        job->reply = std::make_unique<ChatReplyAssembler>(job->format, request);
    }

    job->engineId = m_engine->generate(std::move(gen));
    if (QTcpSocket *sock = ex->socket()) {
        const quint64 engineId = job->engineId;
        job->disconnect = connect(sock, &QAbstractSocket::disconnected, this, [this, engineId] {
            m_engine->cancel(engineId);
        });
    }
    m_jobs.insert(job->engineId, job);
    Q_EMIT activeRequestsChanged();
}

void ApiServer::beginStream(Job &job)
{
    if (job.ex->streaming())
        return;
    job.ex->beginStream("text/event-stream");
    if (job.kind == ApiRequest::Chat) {
        const QJsonObject delta{{QStringLiteral("role"), QStringLiteral("assistant")},
                                {QStringLiteral("content"), QString()}};
        job.ex->send(openai::sseEvent(openai::chatChunk(job.id, job.created, job.model, delta, {}, job.includeUsage)));
    }
}

void ApiServer::onStarted(quint64 id, int promptTokens)
{
    const auto it = m_jobs.constFind(id);
    if (it == m_jobs.cend())
        return;
    Job &job = **it;
    job.started = true;
    job.promptTokens = promptTokens;
    if (job.stream)
        beginStream(job);
}

void ApiServer::onTokens(quint64 id, const QString &text)
{
    const auto it = m_jobs.constFind(id);
    if (it == m_jobs.cend())
        return;
    Job &job = **it;
    if (!job.stream || job.kind == ApiRequest::Chat || text.isEmpty())
        return; // chat replies arrive parsed, through onReply
    beginStream(job);
    job.ex->send(openai::sseEvent(openai::textChunk(job.id, job.created, job.model, text, {}, job.includeUsage)));
}

void ApiServer::onReply(quint64 id, const waste::ReplyDelta &delta)
{
    const auto it = m_jobs.constFind(id);
    if (it == m_jobs.cend() || !(*it)->reply)
        return;
    Job &job = **it;
    const QList<QJsonObject> deltas = job.reply->push(delta);
    if (!job.stream)
        return;
    beginStream(job);
    for (const QJsonObject &d : deltas)
        job.ex->send(openai::sseEvent(openai::chatChunk(job.id, job.created, job.model, d, {}, job.includeUsage)));
}

void ApiServer::onFinished(quint64 id, const GenerationResult &result)
{
    const auto it = m_jobs.constFind(id);
    if (it == m_jobs.cend())
        return;
    const std::shared_ptr<Job> job = *it;
    HttpExchange &ex = *job->ex;
    const int promptTokens = result.stats.promptTokens ? result.stats.promptTokens : job->promptTokens;
    const int completionTokens = result.stats.completionTokens;

    if (result.finishReason == QLatin1String("cancelled")) {
        // The client left (nothing to send), or the server is stopping.
        if (ex.streaming())
            ex.endStream();
        else if (ex.isOpen())
            ex.sendJson(503, ApiError::cancelled().toJson());
        m_log->finish(job->logKey, 499, promptTokens + completionTokens, job->clock.elapsed());
        endJob(id);
        return;
    }

    QString finish = mapFinishReason(result.finishReason);
    QList<QJsonObject> lastDeltas;
    ParsedReply reply;
    if (job->reply) {
        lastDeltas = job->reply->finish(result.text);
        reply = job->reply->reply();
    } else {
        reply.content = result.text;
    }
    if (!reply.toolCalls.isEmpty())
        finish = QStringLiteral("tool_calls");
    const QJsonObject usage = openai::usage(promptTokens, completionTokens);

    if (!job->stream) {
        QJsonObject body = job->kind == ApiRequest::Chat
            ? openai::chatCompletion(job->id, job->created, job->model, reply, finish, usage)
            : openai::textCompletion(job->id, job->created, job->model, result.text, finish, usage);
        body.insert(QStringLiteral("waste"), openai::wasteStats(result.stats, job->clock.elapsed()));
        ex.sendJson(200, body);
    } else {
        beginStream(*job);
        if (job->kind == ApiRequest::Chat) {
            for (const QJsonObject &d : std::as_const(lastDeltas))
                ex.send(openai::sseEvent(openai::chatChunk(job->id, job->created, job->model, d, {}, job->includeUsage)));
            ex.send(openai::sseEvent(openai::chatChunk(job->id, job->created, job->model, {}, finish,
                                                       job->includeUsage)));
        } else {
            ex.send(openai::sseEvent(openai::textChunk(job->id, job->created, job->model, QString(), finish,
                                                       job->includeUsage)));
        }
        if (job->includeUsage) {
            QJsonObject last = openai::usageChunk(
                job->kind == ApiRequest::Chat ? QStringLiteral("chat.completion.chunk") : QStringLiteral("text_completion"),
                job->id, job->created, job->model, usage);
            last.insert(QStringLiteral("waste"), openai::wasteStats(result.stats, job->clock.elapsed()));
            ex.send(openai::sseEvent(last));
        }
        ex.send(openai::sseDone());
        ex.endStream();
    }
    const bool delivered = ex.socket() != nullptr;
    m_log->finish(job->logKey, delivered ? ex.status() : 499, promptTokens + completionTokens, job->clock.elapsed());
    endJob(id);
}

void ApiServer::onFailed(quint64 id, const QString &message)
{
    const auto it = m_jobs.constFind(id);
    if (it == m_jobs.cend())
        return;
    const std::shared_ptr<Job> job = *it;
    HttpExchange &ex = *job->ex;
    ApiError e;
    const bool ready = m_engine->state() == EngineController::Ready || m_engine->state() == EngineController::Generating;
    if (!ready)
        e = ApiError::noModel(message);
    else if (message.contains(QLatin1String("does not fit")) && message.contains(QLatin1String("context")))
        e = ApiError::invalid(job->kind == ApiRequest::Chat ? QStringLiteral("messages") : QStringLiteral("prompt"),
                              message, QStringLiteral("context_length_exceeded"));
    else if (!job->started) // refused before generating: the prompt, an image, a schema, too few tokens
        e = ApiError::invalid(message.contains(QLatin1String("max_tokens")) ? QStringLiteral("max_tokens") : QString(),
                              message);
    else
        e = ApiError::server(message);
    if (ex.streaming()) {
        ex.send(openai::sseEvent(e.toJson()));
        ex.send(openai::sseDone());
        ex.endStream();
    } else {
        ex.sendJson(e.status, e.toJson());
    }
    m_log->finish(job->logKey, ex.socket() ? ex.status() : 499, job->promptTokens, job->clock.elapsed());
    endJob(id);
}

void ApiServer::endJob(quint64 id)
{
    const auto job = m_jobs.take(id);
    if (job)
        QObject::disconnect(job->disconnect);
    Q_EMIT activeRequestsChanged();
}
