// POST /v1/responses: a Responses request, with the conversation it continues, started as a
// chat request whose reply the ResponsesDialect writes. GET and DELETE /v1/responses/{id}:
// the responses kept for previous_response_id, read back or forgotten.
#include "server/apiserver.h"

#include "server/apierror.h"
#include "server/apiserverjob.h"
#include "server/httpexchange.h"
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

void ApiServer::answerStoredResponse(HttpExchange &ex, const QString &method, const QString &id)
{
    const std::optional<QJsonObject> kept = m_responses->response(id);
    if (!kept) {
        ApiError e;
        e.status = 404;
        e.message = QStringLiteral("Response with id '%1' not found. Responses are kept in this server's memory "
                                   "(the latest 256, unless created with store: false) until it stops.")
                        .arg(id);
        e.param = QStringLiteral("response_id");
        ex.sendJson(e.status, e.toJson(), e.headers);
        return;
    }
    if (method == QLatin1String("DELETE")) {
        m_responses->remove(id);
        ex.sendJson(200, QJsonObject{{QStringLiteral("id"), id},
                                     {QStringLiteral("object"), QStringLiteral("response")},
                                     {QStringLiteral("deleted"), true}});
        return;
    }
    ex.sendJson(200, *kept);
}
