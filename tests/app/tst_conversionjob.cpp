// ConversionJob (the Convert page's service): plan shows sizes and free space, start
// converts on a worker thread with progress reaching the GUI thread, cancel stops and
// start resumes, and the result is byte-identical to the engine's direct container.
#include "convert/conversionjob.h"

#include <waste/convert.hpp>

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTest>

class TestConversionJob : public QObject {
    Q_OBJECT

private:
    QString m_base = QStringLiteral(WASTE_TEST_OUTPUT_DIR "/conversionjob");
    QString m_hf = m_base + QStringLiteral("/hf");

    static QByteArray readAll(const QString &path)
    {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QDir(m_base).removeRecursively();
        waste::makeTinyHf(m_hf.toStdString(), {});
    }

    void planThenConvert()
    {
        ConversionJob job;
        job.setSourceDir(m_hf);
        job.setOutputDir(job.suggestOutput(m_hf));
        QCOMPARE(job.outputDir(), m_hf + QStringLiteral(".waste"));
        QSignalSpy planned(&job, &ConversionJob::planChanged);
        job.plan();
        QTRY_VERIFY_WITH_TIMEOUT(job.state() == ConversionJob::Ready, 60000);
        QVERIFY(job.planned());
        QCOMPARE(job.arch(), QStringLiteral("kimi_linear"));
        QCOMPARE(job.layers(), 4);
        QCOMPARE(job.moeLayers(), 3);
        QVERIFY(job.outputBytes() > 0);
        QCOMPARE(job.remainingBytes(), job.outputBytes());
        QVERIFY(job.enoughSpace());

        QSignalSpy progress(&job, &ConversionJob::progressChanged);
        QSignalSpy finished(&job, &ConversionJob::finished);
        job.start();
        QCOMPARE(job.state(), ConversionJob::Running);
        QVERIFY(finished.wait(240000));
        QCOMPARE(finished.at(0).at(0).toBool(), true);
        QCOMPARE(job.state(), ConversionJob::Finished);
        QCOMPARE(job.progress(), 1.0);
        QVERIFY(progress.count() > 2);
        QVERIFY(QFile::exists(job.outputDir() + QStringLiteral("/manifest.json")));
    }

    void cancelThenResume()
    {
        ConversionJob job;
        job.setSourceDir(m_hf);
        const QString out = m_base + QStringLiteral("/resumed");
        job.setOutputDir(out);
        QSignalSpy finished(&job, &ConversionJob::finished);
        connect(&job, &ConversionJob::progressChanged, &job, [&job] {
            if (job.currentLayer() >= 1 && job.state() == ConversionJob::Running) job.cancel();
        });
        job.start();
        QVERIFY(finished.wait(240000));
        QCOMPARE(job.state(), ConversionJob::Cancelled);
        QVERIFY(job.errorText().contains(QStringLiteral("resume")));
        QVERIFY(!QFile::exists(out + QStringLiteral("/manifest.json")));

        disconnect(&job, &ConversionJob::progressChanged, &job, nullptr);
        job.plan();
        QTRY_VERIFY_WITH_TIMEOUT(job.state() == ConversionJob::Ready, 60000);
        QVERIFY(job.unitsDone() > 0);
        QVERIFY(job.remainingBytes() < job.outputBytes());
        finished.clear();
        job.start();
        QVERIFY(finished.wait(240000));
        QCOMPARE(job.state(), ConversionJob::Finished);
        QVERIFY(job.resumed());
        const QString ref = m_hf + QStringLiteral(".waste");
        for (const QString &f : QDir(ref).entryList(QDir::Files))
            QVERIFY2(readAll(ref + "/" + f) == readAll(out + "/" + f), qPrintable(f));
    }

    void badSourceFailsWithAMessage()
    {
        ConversionJob job;
        job.setSourceDir(m_base + QStringLiteral("/nowhere"));
        job.setOutputDir(m_base + QStringLiteral("/nowhere.waste"));
        job.plan();
        QTRY_VERIFY_WITH_TIMEOUT(job.state() == ConversionJob::Failed, 60000);
        QVERIFY(job.errorText().contains(QStringLiteral("config.json")));
    }
};

QTEST_GUILESS_MAIN(TestConversionJob)
#include "tst_conversionjob.moc"
