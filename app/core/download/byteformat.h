// Sizes and durations in words for messages: "98.0 GB", "1.4 TB", "3 min 12 s". Binary units,
// matching Theme.bytes() in the QML views.
#pragma once

#include <QString>

namespace byteformat {
QString bytes(qint64 n);
QString duration(qint64 seconds);
} // namespace byteformat
