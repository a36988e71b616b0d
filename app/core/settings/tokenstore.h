// The hub access token, kept out of the settings file: in a file of its own in the app's
// config folder (AppConfigLocation/hub-token), readable and writable by its owner only, the
// way the hub's own command line keeps it. A settings file that is shared, synced or pasted
// into a bug report then carries no credential. A token an older version left in the
// settings ("download/token") moves to the file the first time it is read.
#pragma once

#include <QString>

namespace tokenstore {

QString path();
// The saved token ("" when none).
QString load();
// Saves `token` (owner-only from the first byte: the file is created with mode 0600 and
// renamed into place); an empty token removes the file. Returns "" or a one-line error.
QString save(const QString &token);

// The same keeping for any other secret (remote engines' API keys, remote/remotestore.h):
// `file` is written owner-only and read back the same way; an empty secret removes it.
QString saveAt(const QString &file, const QString &secret);
QString loadFrom(const QString &file);

} // namespace tokenstore
