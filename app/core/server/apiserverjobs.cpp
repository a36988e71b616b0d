// ApiServer's completion requests: a parsed request turned into an engine request, and the
// engine's answer streamed or sent back to the client, until the request ends.
#include "server/apiserverjob.h"

#include "engine/enginecontroller.h"
#include "prompt/mediablock.h"
#include "server/openaijson.h"
#include "server/promptrenderer.h"
#include "server/requestconstraint.h"

#include <QDateTime>
#include <QFile>
#include <QRandomGenerator>
#include <QTcpSocket>

namespace {

QString mapFinishReason(const QString &engineReason)
{
    if (engineReason == QLatin1String("length") || engineReason == QLatin1String("context_full"))
        return QStringLiteral("length");
    return QStringLiteral("stop");
}

} // namespace

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
