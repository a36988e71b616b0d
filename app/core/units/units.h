// Units: sizes, transfer rates and durations in words ("1.5 GiB", "12.0 MiB/s", "3 min 12 s"),
// written one way for the whole app. C++ calls the static functions; QML calls the same ones on
// the Units singleton, so a page never formats a number itself. Sizes are binary and labelled so
// (KiB, MiB, GiB: 1024-based).
#pragma once

#include <QObject>
#include <QString>
#include <QtQml/qqmlregistration.h>

class Units : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON
public:
    using QObject::QObject;

    // "0 B", "1023 B", "1.0 KiB", "98.0 GiB", "212 GiB": one decimal under 100, none above.
    // Negative (unknown): "–".
    Q_INVOKABLE static QString bytes(qint64 n);
    // bytes(n) + "/s"; "–" when nothing moves (0 or less).
    Q_INVOKABLE static QString rate(double bytesPerSecond);
    // "45 s", "3 min 12 s", "2 h 5 min", "3 d 4 h". Negative (not known yet): "–".
    Q_INVOKABLE static QString duration(qint64 seconds);
    // A speed in tokens per second, with the digits that say something at every scale: "52",
    // "4.3", "0.41", "0.0017" (never "0" or "0.00" for a slow one). "–" when not known (0 or less).
    Q_INVOKABLE static QString tokensPerSecond(double tps);
    // "1 retry", "0 retries", "2 retries": a count with the word in its right number (never
    // "retry(s)"). English plurals: one is singular, every other count plural.
    Q_INVOKABLE static QString count(qint64 n, const QString &one, const QString &many);
};
