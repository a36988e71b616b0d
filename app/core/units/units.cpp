#include "units/units.h"

namespace {
const QString kUnknown = QStringLiteral("–");
}

QString Units::bytes(qint64 n)
{
    if (n < 0)
        return kUnknown;
    if (n < 1024)
        return QStringLiteral("%1 B").arg(n);
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = double(n) / 1024;
    int i = 0;
    // Move up a unit also when the shown figure would round to 1024 ("1.0 MiB", not "1024 KiB").
    while (v >= 1023.5 && i < 5) {
        v /= 1024;
        ++i;
    }
    return QStringLiteral("%1 %2").arg(v, 0, 'f', v >= 100 ? 0 : 1).arg(QLatin1String(units[i]));
}

QString Units::rate(double bytesPerSecond)
{
    if (!(bytesPerSecond > 0))
        return kUnknown;
    return bytes(qint64(bytesPerSecond)) + QStringLiteral("/s");
}

QString Units::duration(qint64 s)
{
    if (s < 0)
        return kUnknown;
    if (s < 60)
        return tr("%1 s").arg(s);
    if (s < 3600)
        return tr("%1 min %2 s").arg(s / 60).arg(s % 60);
    if (s < 86400)
        return tr("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
    return tr("%1 d %2 h").arg(s / 86400).arg((s % 86400) / 3600);
}

QString Units::tokensPerSecond(double tps)
{
    if (!(tps > 0))
        return QStringLiteral("–");
    if (tps >= 10)
        return QString::number(tps, 'f', 0);
    if (tps >= 0.1)
        return QString::number(tps, 'f', tps >= 1 ? 1 : 2);
    return QString::number(tps, 'g', 2);
}

QString Units::count(qint64 n, const QString &one, const QString &many)
{
    return QString::number(n) + QLatin1Char(' ') + (n == 1 || n == -1 ? one : many);
}
