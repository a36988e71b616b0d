// The app's data folder (demo model, chats, download queue, models by default):
// ~/.local/share/WASTE Studio. Qt's AppDataLocation would be ".../WASTE Studio/WASTE Studio"
// because the organisation and the application share the name, a path people read on the
// Models page and in Settings; the folder an earlier version made there is moved up once.
#pragma once

#include <QString>

QString appDataFolder();

// The desktop app's name, which names its data folder and its settings file.
inline constexpr const char *kStudioName = "WASTE Studio";

// The models folder the desktop app uses (its Settings' "models/folder", else
// <data folder>/models), readable from any program of the suite: the command line plans on
// the disk the app keeps its models on.
QString studioModelsFolder();
// The desktop app's data folder, from any program (appDataFolder() is the running program's own).
QString studioDataFolder();
