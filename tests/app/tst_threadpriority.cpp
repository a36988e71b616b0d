// Worker threads run below the GUI thread: the engine at nice 4, downloads and conversions
// at nice 10, and threads they start inherit it. Read back from /proc, as the scheduler sees it.
#include "download/downloadmanager.h"
#include "engine/enginecontroller.h"
#include "threads/threadpriority.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <thread>

namespace {

// The nice value of the thread named `name` in this process (-100: no such thread).
int niceOfThreadNamed(const QByteArray &name)
{
    const QStringList tids = QDir(QStringLiteral("/proc/self/task")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &tid : tids) {
        QFile comm(QStringLiteral("/proc/self/task/%1/comm").arg(tid));
        if (!comm.open(QIODevice::ReadOnly) || comm.readAll().trimmed() != name)
            continue;
        QFile stat(QStringLiteral("/proc/self/task/%1/stat").arg(tid));
        if (!stat.open(QIODevice::ReadOnly))
            return -100;
        // Fields after the parenthesised name: state is field 3, nice is field 19.
        const QByteArray s = stat.readAll();
        const QList<QByteArray> f = s.mid(s.lastIndexOf(')') + 2).split(' ');
        return f.value(19 - 3).toInt();
    }
    return -100;
}

int niceOfCallingThread()
{
    return getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
}

} // namespace

class TestThreadPriority : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void rolesLowerTheCallingThreadAndChildrenInherit()
    {
        const int gui = niceOfCallingThread();
        int engine = -100, background = -100, child = -100, again = -100;
        bool applied[3] = {};
        std::thread([&] { // QTest's checks stay on the test thread; this one only records
            applied[0] = setCurrentThreadRole(ThreadRole::Engine);
            engine = niceOfCallingThread();
            applied[1] = setCurrentThreadRole(ThreadRole::Background);
            background = niceOfCallingThread();
            std::thread([&] { child = niceOfCallingThread(); }).join();
            // Never raised again (that would need privileges a user does not have).
            applied[2] = setCurrentThreadRole(ThreadRole::Engine);
            again = niceOfCallingThread();
        }).join();
        QVERIFY(applied[0] && applied[1] && applied[2]);
        QCOMPARE(niceOfCallingThread(), gui); // the caller's own thread only
        QCOMPARE(engine, std::max(gui, 4));
        QCOMPARE(background, std::max(gui, 10));
        QCOMPARE(child, background);
        QCOMPARE(again, background);
    }

    void theEngineAndDownloadThreadsRunBelowTheGui()
    {
        QTemporaryDir tmp;
        EngineController engine(nullptr);
        DownloadManager::Config config;
        config.queuePath = tmp.filePath(QStringLiteral("queue.json"));
        config.modelsFolder = tmp.filePath(QStringLiteral("models"));
        config.autoResume = false;
        DownloadManager downloads(config, nullptr);
        const int gui = niceOfCallingThread();
        QTRY_COMPARE(niceOfThreadNamed("EngineWorker"), std::max(gui, 4));
        QTRY_COMPARE(niceOfThreadNamed("download"), std::max(gui, 10));
    }
};

QTEST_GUILESS_MAIN(TestThreadPriority)
#include "tst_threadpriority.moc"
