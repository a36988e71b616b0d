#include "download/byteformat.h"

namespace byteformat {

QString bytes(qint64 n)
{
    if (n < 0)
        return QStringLiteral("?");
    static const char *const units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
    double v = static_cast<double>(n);
    int i = 0;
    while (v >= 1024 && i < 5) {
        v /= 1024;
        ++i;
    }
    if (i == 0)
        return QStringLiteral("%1 B").arg(n);
    return QStringLiteral("%1 %2").arg(v, 0, 'f', v >= 100 ? 0 : 1).arg(QLatin1String(units[i]));
}

QString duration(qint64 s)
{
    if (s < 0)
        return QStringLiteral("?");
    if (s < 60)
        return QStringLiteral("%1 s").arg(s);
    if (s < 3600)
        return QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60);
    if (s < 86400)
        return QStringLiteral("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
    return QStringLiteral("%1 d %2 h").arg(s / 86400).arg((s % 86400) / 3600);
}

} // namespace byteformat
