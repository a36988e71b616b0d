#include "mcp/mcpreply.h"

void McpReply::finishWithResult(const QJsonObject &result)
{
    if (m_finished)
        return;
    m_finished = true;
    m_result = result;
    emit finished();
}

void McpReply::finishWithError(Error error, const QString &message, int rpcCode)
{
    if (m_finished)
        return;
    m_finished = true;
    m_error = error;
    m_errorString = QStringLiteral("%1: %2").arg(m_method, message);
    m_rpcCode = rpcCode;
    emit finished();
}
