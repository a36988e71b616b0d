#include "remote/remotestore.h"

#include "settings/tokenstore.h"

#include <QFile>
#include <QSettings>
#include <QStandardPaths>
#include <QUuid>

namespace remotestore {

namespace {

const QString kArray = QStringLiteral("remote/endpoints");

void write(const QList<RemoteEndpoint> &all)
{
    QSettings s;
    s.remove(kArray);
    s.beginWriteArray(kArray, int(all.size()));
    for (int i = 0; i < all.size(); ++i) {
        s.setArrayIndex(i);
        s.setValue(QStringLiteral("id"), all[i].id);
        s.setValue(QStringLiteral("name"), all[i].name);
        s.setValue(QStringLiteral("baseUrl"), all[i].baseUrl.toString());
        s.setValue(QStringLiteral("model"), all[i].model);
    }
    s.endArray();
    s.sync();
}

} // namespace

QList<RemoteEndpoint> list()
{
    QSettings s;
    QList<RemoteEndpoint> out;
    const int n = s.beginReadArray(kArray);
    for (int i = 0; i < n; ++i) {
        s.setArrayIndex(i);
        RemoteEndpoint e;
        e.id = s.value(QStringLiteral("id")).toString();
        e.name = s.value(QStringLiteral("name")).toString();
        e.baseUrl = QUrl(s.value(QStringLiteral("baseUrl")).toString());
        e.model = s.value(QStringLiteral("model")).toString();
        if (e.isValid()) // a hand-edited entry that lost a field is skipped, not shown half
            out << e;
    }
    s.endArray();
    return out;
}

RemoteEndpoint find(const QString &id)
{
    for (const RemoteEndpoint &e : list())
        if (e.id == id)
            return e;
    return {};
}

QString add(RemoteEndpoint endpoint, const QString &apiKey, QString *id)
{
    if (endpoint.id.isEmpty())
        endpoint.id = QUuid::createUuid().toString(QUuid::Id128).left(12);
    if (endpoint.name.trimmed().isEmpty())
        endpoint.name = QStringLiteral("%1 on %2").arg(endpoint.model, endpoint.baseUrl.host());
    if (!endpoint.isValid())
        return QStringLiteral("a remote engine needs a base URL and a model");
    // The key first: an engine is never listed without the key it was added with.
    if (const QString error = tokenstore::saveAt(keyPath(endpoint.id), apiKey); !error.isEmpty())
        return error;
    QList<RemoteEndpoint> all = list();
    all.removeIf([&](const RemoteEndpoint &e) { return e.id == endpoint.id; });
    all << endpoint;
    write(all);
    if (id)
        *id = endpoint.id;
    return {};
}

void remove(const QString &id)
{
    QList<RemoteEndpoint> all = list();
    all.removeIf([&](const RemoteEndpoint &e) { return e.id == id; });
    write(all);
    QFile::remove(keyPath(id));
}

QString keyPath(const QString &id)
{
    return QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) + QStringLiteral("/remote-keys/") + id;
}

QString loadKey(const QString &id)
{
    return tokenstore::loadFrom(keyPath(id));
}

} // namespace remotestore
