// The app's data folder (demo model, chats, download queue, models by default):
// ~/.local/share/WASTE Studio. Qt's AppDataLocation would be ".../WASTE Studio/WASTE Studio"
// because the organisation and the application share the name, a path people read on the
// Models page and in Settings; the folder an earlier version made there is moved up once.
#pragma once

#include <QString>

QString appDataFolder();
