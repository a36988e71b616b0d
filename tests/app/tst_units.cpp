// Units: the one place sizes, rates and durations become words, for C++ and QML alike.
// Pins the edges: where a unit starts, where rounding would show "1024", and unknowns.
#include "units/units.h"

#include <QTest>

#include <limits>

class TestUnits : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void bytes_data()
    {
        QTest::addColumn<qint64>("n");
        QTest::addColumn<QString>("text");
        QTest::newRow("zero") << qint64(0) << QStringLiteral("0 B");
        QTest::newRow("one") << qint64(1) << QStringLiteral("1 B");
        QTest::newRow("just under a KiB") << qint64(1023) << QStringLiteral("1023 B");
        QTest::newRow("one KiB") << qint64(1024) << QStringLiteral("1.0 KiB");
        QTest::newRow("one and a half KiB") << qint64(1536) << QStringLiteral("1.5 KiB");
        QTest::newRow("99.9 KiB") << qint64(102297) << QStringLiteral("99.9 KiB");
        QTest::newRow("no decimal from 100") << qint64(512 * 1024) << QStringLiteral("512 KiB");
        QTest::newRow("rounds up to the next unit") << qint64(1024 * 1024 - 1) << QStringLiteral("1.0 MiB");
        QTest::newRow("one MiB") << (qint64(1) << 20) << QStringLiteral("1.0 MiB");
        QTest::newRow("49.5 GiB") << qint64(49.5 * (qint64(1) << 30)) << QStringLiteral("49.5 GiB");
        QTest::newRow("1.4 TB is 1.3 TiB") << qint64(1400) * 1000 * 1000 * 1000 << QStringLiteral("1.3 TiB");
        QTest::newRow("two PiB") << (qint64(2) << 50) << QStringLiteral("2.0 PiB");
        QTest::newRow("largest") << std::numeric_limits<qint64>::max() << QStringLiteral("8.0 EiB");
        QTest::newRow("negative is unknown") << qint64(-1) << QStringLiteral("–");
    }
    void bytes()
    {
        QFETCH(qint64, n);
        QFETCH(QString, text);
        QCOMPARE(Units::bytes(n), text);
    }

    void countsSayTheWordInItsNumber()
    {
        QCOMPARE(Units::count(1, QStringLiteral("retry"), QStringLiteral("retries")), QStringLiteral("1 retry"));
        QCOMPARE(Units::count(2, QStringLiteral("retry"), QStringLiteral("retries")), QStringLiteral("2 retries"));
        QCOMPARE(Units::count(0, QStringLiteral("message"), QStringLiteral("messages")), QStringLiteral("0 messages"));
    }

    // Slow speeds keep their digits: a K3 prompt at 0.41 tok/s is not "0 tok/s".
    void tokensPerSecond()
    {
        QCOMPARE(Units::tokensPerSecond(52.4), QStringLiteral("52"));
        QCOMPARE(Units::tokensPerSecond(4.34), QStringLiteral("4.3"));
        QCOMPARE(Units::tokensPerSecond(0.414), QStringLiteral("0.41"));
        QCOMPARE(Units::tokensPerSecond(0.00172), QStringLiteral("0.0017"));
        QCOMPARE(Units::tokensPerSecond(0), QStringLiteral("–"));
        QCOMPARE(Units::tokensPerSecond(std::numeric_limits<double>::quiet_NaN()), QStringLiteral("–"));
    }

    void rate()
    {
        QCOMPARE(Units::rate(1.5 * 1024 * 1024), QStringLiteral("1.5 MiB/s"));
        QCOMPARE(Units::rate(100), QStringLiteral("100 B/s"));
        QCOMPARE(Units::rate(0), QStringLiteral("–"));
        QCOMPARE(Units::rate(-3), QStringLiteral("–"));
        QCOMPARE(Units::rate(std::numeric_limits<double>::quiet_NaN()), QStringLiteral("–"));
    }

    void duration_data()
    {
        QTest::addColumn<qint64>("seconds");
        QTest::addColumn<QString>("text");
        QTest::newRow("zero") << qint64(0) << QStringLiteral("0 s");
        QTest::newRow("59 s") << qint64(59) << QStringLiteral("59 s");
        QTest::newRow("a minute") << qint64(60) << QStringLiteral("1 min 0 s");
        QTest::newRow("3 min 12 s") << qint64(192) << QStringLiteral("3 min 12 s");
        QTest::newRow("just under an hour") << qint64(3599) << QStringLiteral("59 min 59 s");
        QTest::newRow("an hour") << qint64(3600) << QStringLiteral("1 h 0 min");
        QTest::newRow("2 h 5 min") << qint64(2 * 3600 + 5 * 60 + 59) << QStringLiteral("2 h 5 min");
        QTest::newRow("a day") << qint64(86400) << QStringLiteral("1 d 0 h");
        QTest::newRow("large") << qint64(400) * 86400 + 7 * 3600 << QStringLiteral("400 d 7 h");
        QTest::newRow("unknown") << qint64(-1) << QStringLiteral("–");
    }
    void duration()
    {
        QFETCH(qint64, seconds);
        QFETCH(QString, text);
        QCOMPARE(Units::duration(seconds), text);
    }
};

QTEST_GUILESS_MAIN(TestUnits)
#include "tst_units.moc"
