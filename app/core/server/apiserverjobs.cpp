// ApiServer's completion requests: a parsed request turned into an engine request, and the
// engine's answer streamed or sent back to the client, until the request ends.
#include "server/apiserverjob.h"

#include "engine/enginecontroller.h"
#include "server/openaijson.h"
#include "server/chatprompt.h"
#include "server/requestconstraint.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QTcpSocket>

namespace {

// OpenAI's finish_reason for the engine's ("tool_calls" is decided by the reply).
QString finishReasonJson(waste::FinishReason reason)
{
    switch (reason) {
    case waste::FinishReason::Length:
    case waste::FinishReason::ContextFull:
        return QStringLiteral("length");
    case waste::FinishReason::Stop:
    case waste::FinishReason::Cancelled:
        break;
    }
    return QStringLiteral("stop");
}

} // namespace

void ApiServer::requireModel() const
{
    switch (m_engine->state()) {
    case EngineController::Ready:
    case EngineController::Generating:
        return;
    case EngineController::Loading:
        throw ApiError::noModel(tr("The model is still loading (%1%); try again shortly (GET /health says when).")
                                    .arg(int(m_engine->loadProgress() * 100)));
    default:
        throw ApiError::noModel(tr("No model is loaded: open one in WASTE Studio or start `waste serve MODEL`."));
    }
}

RequestPrompt ApiServer::chatPrompt(const ApiRequest &request, waste::ChatFormat format, RequestImages &files)
{
    QStringList prompts;
    for (const ApiChatMessage &m : std::as_const(request.messages))
        for (const ContentPart &part : m.parts)
            if (part.kind == ContentPart::Image) {
                if (!m_engine->hasVision())
                    throw ApiError::invalid(QStringLiteral("messages"),
                                            tr("The open model (%1) does not read images.").arg(modelId()));
                prompts << files.mediaBlock(part);
            }
    return renderRequestPrompt(format, request, prompts);
}

void ApiServer::startCompletion(const std::shared_ptr<HttpExchange> &ex, ApiRequest request, quint64 logKey,
                                QElapsedTimer clock, std::unique_ptr<ReplyDialect> dialect)
{
    requireModel();
    // Bounded: as many as the engine decodes at once, and a queue behind them.
    if (m_engine->activeRequests() >= m_engine->maxConcurrent() + m_maxQueued)
        throw ApiError::busy(m_engine->runningRequests(), m_engine->waitingRequests());

    auto job = std::make_shared<Job>();
    job->ex = ex;
    job->kind = request.kind;
    job->stream = request.stream;
    job->includeUsage = request.stream && request.includeUsage;
    job->format = m_engine->modelInfo().value(QStringLiteral("chatFormat")).value<waste::ChatFormat>();
    job->id = openai::newId(request.kind == ApiRequest::Chat ? QStringLiteral("chatcmpl") : QStringLiteral("cmpl"));
    job->model = modelId();
    job->created = QDateTime::currentSecsSinceEpoch();
    job->logKey = logKey;
    job->clock = clock;
    if (dialect) {
        job->id = dialect->id();
        job->dialect = std::move(dialect);
    }

    GenerationRequest gen;
    if (request.kind == ApiRequest::Chat) {
        const RequestPrompt prompt = chatPrompt(request, job->format, job->images);
        gen.segments = prompt.segments;
        gen.imagePaths = job->images.paths();
        // What comes before the last message (system prompt, tools, earlier turns) is what the
        // prompt cache keeps, where it holds no image (PromptFeeder::cacheMark).
        gen.reusableSegments = prompt.sharedSegments;
    } else {
        gen.segments = {PromptSegment{request.prompt, false}}; // a completion's prompt is plain text
    }

    waste::GenParams &p = gen.params;
    p.temperature = float(request.topP <= 0.0 ? 0.0 : request.temperature);
    p.topP = float(qMax(request.topP, 1e-6));
    p.topK = request.topK;
    p.keepSpecialText = request.kind == ApiRequest::Completion && request.keepSpecialText;
    p.seed = request.seed ? *request.seed : QRandomGenerator::system()->generate64();
    const int ctx = m_engine->contextTokens() > 0 ? m_engine->contextTokens() : m_defaultMaxTokens;
    p.maxTokens = request.maxTokens ? *request.maxTokens : qMin(m_defaultMaxTokens, ctx);
    for (const QString &s : std::as_const(request.stop))
        p.stopStrings.push_back(s.toStdString());
    gen.makeConstraint = constraintFor(request);
    if (request.kind == ApiRequest::Chat) {
        gen.parseReply = true;
        if (request.toolsActive())
            gen.replyTools = QJsonDocument(request.tools).toJson(QJsonDocument::Compact);
        job->reply = std::make_unique<ChatReplyAssembler>();
    }

    GenerationHandle *handle = m_engine->generate(std::move(gen));
    job->handle = handle;
    Job *j = job.get(); // kept in m_jobs until its request ends
    connect(handle, &GenerationHandle::started, this, [this, j](int promptTokens, int) { onStarted(*j, promptTokens); });
    connect(handle, &GenerationHandle::tokens, this,
            [this, j](const QString &text, const GenerationStats &) { onTokens(*j, text); });
    connect(handle, &GenerationHandle::reply, this, [this, j](const waste::ReplyDelta &delta) { onReply(*j, delta); });
    connect(handle, &GenerationHandle::finished, this, [this, j](const GenerationResult &r) { onFinished(*j, r); });
    connect(handle, &GenerationHandle::failed, this, [this, j](const GenerationError &e) { onFailed(*j, e); });
    if (QTcpSocket *sock = ex->socket())
        job->disconnect = connect(sock, &QAbstractSocket::disconnected, handle, &GenerationHandle::cancel);
    m_jobs.insert(j, job);
    Q_EMIT activeRequestsChanged();
}

void ApiServer::beginStream(Job &job)
{
    if (job.ex->streaming())
        return;
    job.ex->beginStream("text/event-stream");
    if (job.dialect) {
        job.ex->send(job.dialect->streamStart(job.promptTokens));
    } else if (job.kind == ApiRequest::Chat) {
        const QJsonObject delta{{QStringLiteral("role"), QStringLiteral("assistant")},
                                {QStringLiteral("content"), QString()}};
        job.ex->send(openai::sseEvent(openai::chatChunk(job.id, job.created, job.model, delta, {}, job.includeUsage)));
    }
}

void ApiServer::keepStreamsAlive()
{
    for (const auto &job : std::as_const(m_jobs)) {
        HttpExchange &ex = *job->ex;
        if (!job->stream || !ex.streaming() || !ex.isOpen() || ex.msSinceSent() < m_keepAliveMs)
            continue;
        ex.send(job->dialect ? job->dialect->streamKeepAlive() : openai::sseKeepAlive());
    }
}

void ApiServer::onStarted(Job &job, int promptTokens)
{
    job.started = true;
    job.promptTokens = promptTokens;
    if (job.stream)
        beginStream(job);
}

void ApiServer::onTokens(Job &job, const QString &text)
{
    if (!job.stream || job.kind == ApiRequest::Chat || text.isEmpty())
        return; // chat replies arrive parsed, through onReply
    beginStream(job);
    job.ex->send(openai::sseEvent(openai::textChunk(job.id, job.created, job.model, text, {}, job.includeUsage)));
}

void ApiServer::onReply(Job &job, const waste::ReplyDelta &delta)
{
    if (!job.reply)
        return;
    const QList<QJsonObject> deltas = job.reply->push(delta);
    if (!job.stream)
        return;
    beginStream(job);
    for (const QJsonObject &d : deltas)
        job.ex->send(job.dialect ? job.dialect->streamDelta(d)
                                 : openai::sseEvent(openai::chatChunk(job.id, job.created, job.model, d, {}, job.includeUsage)));
}

void ApiServer::onFinished(Job &jobRef, const GenerationResult &result)
{
    Job *const job = &jobRef;
    HttpExchange &ex = *job->ex;
    const int promptTokens = result.stats.promptTokens ? result.stats.promptTokens : job->promptTokens;
    const int completionTokens = result.stats.completionTokens;

    if (result.finishReason == waste::FinishReason::Cancelled) {
        // The client left (nothing to send), or the server is stopping.
        if (ex.streaming())
            ex.endStream();
        else if (ex.isOpen())
            ex.sendJson(503, job->dialect ? job->dialect->errorBody(ApiError::cancelled()) : ApiError::cancelled().toJson());
        m_log->finish(job->logKey, 499, promptTokens + completionTokens, job->clock.elapsed());
        endJob(*job);
        return;
    }

    QString finish = finishReasonJson(result.finishReason);
    ParsedReply reply;
    if (job->reply) {
        reply = job->reply->reply(); // the parser's last step came before the end (GenerationHandle::reply)
    } else {
        reply.content = result.text;
    }
    if (!reply.toolCalls.isEmpty())
        finish = QStringLiteral("tool_calls");
    // Reasoning is told apart only where the reply was read as a chat (Completions has none).
    const int reasoningTokens = job->kind == ApiRequest::Chat ? qMin(result.stats.reasoningTokens, completionTokens) : -1;
    const QJsonObject usage = openai::usage(promptTokens, completionTokens, result.stats.reusedTokens, reasoningTokens);

    if (job->dialect) {
        const ReplyEnd end{result.finishReason, result.text, promptTokens, completionTokens, result.stats.reusedTokens,
                           qMax(0, reasoningTokens)};
        if (!job->stream) {
            ex.sendJson(200, job->dialect->body(reply, end));
        } else {
            beginStream(*job);
            ex.send(job->dialect->streamEnd(reply, end));
            ex.endStream();
        }
    } else if (!job->stream) {
        QJsonObject body = job->kind == ApiRequest::Chat
            ? openai::chatCompletion(job->id, job->created, job->model, reply, finish, usage)
            : openai::textCompletion(job->id, job->created, job->model, result.text, finish, usage);
        body.insert(QStringLiteral("waste"), openai::wasteStats(result.stats, job->clock.elapsed()));
        ex.sendJson(200, body);
    } else {
        beginStream(*job);
        if (job->kind == ApiRequest::Chat) {
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
    endJob(*job);
}

void ApiServer::onFailed(Job &job, const GenerationError &error)
{
    HttpExchange &ex = *job.ex;
    const bool ready = m_engine->state() == EngineController::Ready || m_engine->state() == EngineController::Generating;
    const ApiError e = ready ? ApiError::fromGeneration(error, job.started,
                                                        job.kind == ApiRequest::Chat ? QStringLiteral("messages")
                                                                                     : QStringLiteral("prompt"))
                             : ApiError::noModel(error.message);
    if (ex.streaming() && job.dialect) {
        ex.send(job.dialect->streamError(e));
        ex.endStream();
    } else if (ex.streaming()) {
        ex.send(openai::sseEvent(e.toJson()));
        ex.send(openai::sseDone());
        ex.endStream();
    } else {
        ex.sendJson(e.status, job.dialect ? job.dialect->errorBody(e) : e.toJson());
    }
    m_log->finish(job.logKey, ex.socket() ? ex.status() : 499, job.promptTokens, job.clock.elapsed());
    endJob(job);
}

void ApiServer::endJob(const Job &job)
{
    QObject::disconnect(job.disconnect);
    m_jobs.remove(&job); // the last use of `job`
    Q_EMIT activeRequestsChanged();
}
