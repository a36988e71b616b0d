// POST /v1/messages and /v1/messages/count_tokens: an Anthropic request started as a chat
// request whose reply the MessagesDialect writes, or its prompt counted in the model's tokens.
#include "server/apiserver.h"

#include "engine/enginecontroller.h"
#include "server/apiserverjob.h"
#include "server/messagesjson.h"
#include "server/messagesrequest.h"

void ApiServer::startMessage(const std::shared_ptr<HttpExchange> &ex, const QJsonObject &body,
                             const ParseOptions &options, quint64 logKey, QElapsedTimer clock)
{
    MessagesRequest request = parseMessagesRequest(body, options);
    auto dialect = std::make_unique<MessagesDialect>(modelId(), request.chat.stop);
    startCompletion(ex, std::move(request.chat), logKey, clock, std::move(dialect));
}

void ApiServer::countMessageTokens(const std::shared_ptr<HttpExchange> &ex, const QJsonObject &body,
                                   const ParseOptions &options, quint64 logKey, QElapsedTimer clock)
{
    requireModel();
    const MessagesRequest request = parseMessagesRequest(body, options, true);
    // The prompt exactly as a generation would feed it; its pictures are only measured (the
    // media block holds their size), so their files may go when this returns.
    RequestImages files;
    const auto format = m_engine->modelInfo().value(QStringLiteral("chatFormat")).value<waste::ChatFormat>();
    TokenCount *count = m_engine->countSegments(chatPrompt(request.chat, format, files).segments);
    connect(count, &TokenCount::counted, this, [this, ex, logKey, clock](int tokens) {
        if (tokens < 0)
            ex->sendJson(503, anthropic::errorBody(ApiError::noModel(tr("The model closed before the tokens were counted."))));
        else
            ex->sendJson(200, QJsonObject{{QStringLiteral("input_tokens"), tokens}});
        finishLog(logKey, *ex, 0, clock);
    });
}
