// The remote engines a person added, kept in the app's settings (group "remote"), and their
// API keys, kept out of the settings file exactly like the hub token (settings/tokenstore.h):
// one owner-only file per engine in AppConfigLocation/remote-keys/. A settings file that is
// shared or pasted into a bug report then names the servers but carries no key.
#pragma once

#include "remote/remoteendpoint.h"

#include <QList>

namespace remotestore {

QList<RemoteEndpoint> list();
// The engine with this id; invalid (RemoteEndpoint::isValid false) when there is none.
RemoteEndpoint find(const QString &id);
// Adds an engine (a new id is chosen when endpoint.id is empty) and saves its key ("" for
// none). Returns "" or a one-line error; `id` receives the id it was saved under.
QString add(RemoteEndpoint endpoint, const QString &apiKey, QString *id = nullptr);
// Forgets an engine and removes its key file.
void remove(const QString &id);

QString keyPath(const QString &id);
QString loadKey(const QString &id);

} // namespace remotestore
