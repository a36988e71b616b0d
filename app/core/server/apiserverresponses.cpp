// POST /v1/responses: a Responses request, with the conversation it continues, started as a
// chat request whose reply the ResponsesDialect writes.
#include "server/apiserver.h"

#include "server/apiserverjob.h"
#include "server/responsesjson.h"
#include "server/responsestore.h"

#include <QDateTime>

void ApiServer::startResponse(const std::shared_ptr<HttpExchange> &ex, const QJsonObject &body,
                              const ParseOptions &options, quint64 logKey, QElapsedTimer clock)
{
    ResponseStore *store = m_responses.get();
    ResponsesRequest request =
        parseResponsesRequest(body, [store](const QString &id) { return store->get(id); }, options);
    auto dialect = std::make_unique<ResponsesDialect>(request, modelId(), QDateTime::currentSecsSinceEpoch(), store);
    startCompletion(ex, std::move(request.chat), logKey, clock, std::move(dialect));
}
