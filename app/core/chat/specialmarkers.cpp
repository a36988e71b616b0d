#include "chat/specialmarkers.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

QStringList containerSpecialTexts(const QString &containerPath)
{
    if (containerPath.isEmpty())
        return {};
    QFile f(QDir(containerPath).filePath(QStringLiteral("specials.json")));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    QStringList texts;
    for (const QJsonValue &v : QJsonDocument::fromJson(f.readAll()).array()) {
        const QString t = v.toObject().value(QLatin1String("text")).toString();
        if (!t.isEmpty())
            texts << t;
    }
    std::sort(texts.begin(), texts.end(), [](const QString &a, const QString &b) { return a.size() > b.size(); });
    texts.removeDuplicates();
    return texts;
}

QString withoutSpecials(const QString &text, const QStringList &specials)
{
    QString out = text;
    for (const QString &s : specials)
        if (out.contains(s))
            out.remove(s);
    return out;
}
