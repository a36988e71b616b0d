// The hub access token lives in an owner-only file, never in the settings file: saved with
// mode 0600 from the first byte, read back, removed when cleared, a token an older version
// left in the settings moved out of them, looser rights tightened again, a failure to save
// named in words; and the Models page's manager saves it there too.
#include "download/downloadmanager.h"
#include "settings/tokenstore.h"

#include <QDir>
#include <QFile>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

class TestTokenStore : public QObject {
    Q_OBJECT

    static QString settingsText()
    {
        QSettings().sync();
        QFile f(QSettings().fileName());
        return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setApplicationName(QStringLiteral("WASTE Studio tst_tokenstore"));
        QDir(QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation)).removeRecursively();
        QSettings().clear();
    }

    void savedOwnerOnlyAndReadBack()
    {
        QCOMPARE(tokenstore::save(QStringLiteral("  hf_secret123 ")), QString());
        QFile f(tokenstore::path());
        QVERIFY(f.exists());
#ifdef Q_OS_UNIX
        QCOMPARE(f.permissions() & (QFile::ReadGroup | QFile::WriteGroup | QFile::ReadOther | QFile::WriteOther),
                 QFile::Permissions());
#endif
        QCOMPARE(tokenstore::load(), QStringLiteral("hf_secret123"));
        QVERIFY(!settingsText().contains(QStringLiteral("hf_secret123")));
        QVERIFY(!QFile::exists(tokenstore::path() + QStringLiteral(".new")));
    }

    void clearingRemovesTheFile()
    {
        QCOMPARE(tokenstore::save(QStringLiteral("hf_x")), QString());
        QCOMPARE(tokenstore::save(QString()), QString());
        QVERIFY(!QFile::exists(tokenstore::path()));
        QCOMPARE(tokenstore::load(), QString());
    }

    void tokenInTheSettingsMovesToTheFile()
    {
        QSettings().setValue(QStringLiteral("download/token"), QStringLiteral("hf_legacy"));
        QVERIFY(settingsText().contains(QStringLiteral("hf_legacy")));
        QCOMPARE(tokenstore::load(), QStringLiteral("hf_legacy"));
        QVERIFY(!QSettings().contains(QStringLiteral("download/token")));
        QVERIFY(!settingsText().contains(QStringLiteral("hf_legacy")));
        QCOMPARE(tokenstore::load(), QStringLiteral("hf_legacy")); // now from the file
    }

    void looserRightsAreTightened()
    {
#ifndef Q_OS_UNIX
        QSKIP("POSIX permissions only");
#endif
        QCOMPARE(tokenstore::save(QStringLiteral("hf_y")), QString());
        QVERIFY(QFile::setPermissions(tokenstore::path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ReadOther));
        QCOMPARE(tokenstore::load(), QStringLiteral("hf_y"));
        QCOMPARE(QFile(tokenstore::path()).permissions() & QFile::ReadOther, QFile::Permissions());
    }

    void failureToSaveIsNamed()
    {
        // The config folder is a file: nothing can be created under it.
        const QString folder = QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation);
        QDir(folder).removeRecursively();
        QFile blocker(folder);
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        const QString error = tokenstore::save(QStringLiteral("hf_z"));
        QFile::remove(folder);
        QVERIFY2(error.contains(QDir::toNativeSeparators(folder)), qPrintable(error));
    }

    void modelsPageManagerSavesItInTheFile()
    {
        QTemporaryDir dir;
        DownloadManager::Config c;
        c.queuePath = dir.filePath(QStringLiteral("queue.json"));
        c.modelsFolder = dir.filePath(QStringLiteral("models"));
        c.useSettings = true;
        c.autoResume = false;
        {
            DownloadManager manager(c, nullptr);
            manager.setAccessToken(QStringLiteral("hf_from_the_page"));
        }
        QCOMPARE(tokenstore::load(), QStringLiteral("hf_from_the_page"));
        QVERIFY(!settingsText().contains(QStringLiteral("hf_from_the_page")));
        DownloadManager reopened(c, nullptr);
        QVERIFY(reopened.hasToken());
        reopened.setAccessToken(QString());
        QVERIFY(!QFile::exists(tokenstore::path()));
    }
};

QTEST_GUILESS_MAIN(TestTokenStore)
#include "tst_tokenstore.moc"
