#include "server/replydialect.h"

#include <QJsonDocument>

QByteArray sseNamedEvent(const QString &name, const QJsonObject &payload)
{
    return "event: " + name.toUtf8() + "\ndata: " + QJsonDocument(payload).toJson(QJsonDocument::Compact) + "\n\n";
}
