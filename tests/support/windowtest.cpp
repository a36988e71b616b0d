#include "windowtest.h"

#include "studioapplication.h"

#include "settings/appsettings.h"
#include "settings/datafolder.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QMimeData>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSettings>
#include <QStandardPaths>
#include <QTest>

namespace WindowTest {
namespace {
QStringList g_warnings;
QtMessageHandler g_previous = nullptr;

void keep(QtMsgType type, const QMessageLogContext &ctx, const QString &msg)
{
    // A binding loop is a bug in the app's QML wherever it shows, so it fails the test even
    // where the test checks no warnings after it (while the window closes, in a test function
    // that looks elsewhere): the running test function at once, and outside one the run.
    if (msg.contains(QLatin1String("Binding loop detected"))) {
        if (g_previous)
            g_previous(type, ctx, msg);
        if (!QTest::currentTestFunction())
            qFatal("QML binding loop outside a test function: %s", qPrintable(msg));
        QTest::qFail(qPrintable(QStringLiteral("QML binding loop: ") + msg), ctx.file ? ctx.file : __FILE__,
                     ctx.file ? ctx.line : __LINE__);
        g_warnings << msg;
        return;
    }
    // propagateSizeHints: the offscreen platform's own notice, not the app's. "OpenType
    // support missing": the font shaper's note on a script the test machine's fonts lack;
    // a tiny random model writes any character, so which scripts appear is chance.
    if (type != QtDebugMsg && type != QtInfoMsg && !msg.contains(QLatin1String("propagateSizeHints")) &&
        !msg.contains(QLatin1String("OpenType support missing")))
        g_warnings << msg;
    if (g_previous)
        g_previous(type, ctx, msg);
}
} // namespace

void useOwnAppData(const QString &testName)
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setApplicationName(QStringLiteral("WASTE Studio %1").arg(testName));
    // Settings under the test-mode config folder, never the user's ~/.config: the file is
    // then exactly AppConfigLocation + ".conf".
    const QString config = QStandardPaths::writableLocation(QStandardPaths::GenericConfigLocation);
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, config);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, config);
    QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).removeRecursively();
    QDir(appDataFolder()).removeRecursively();
    QFile::remove(QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) + QStringLiteral(".conf"));
}

QQuickWindow *showMainWindow(QQmlApplicationEngine &qml)
{
    if (!StudioApplication::loadMainWindow(qml))
        return nullptr;
    auto *window = qobject_cast<QQuickWindow *>(qml.rootObjects().first());
    return window && QTest::qWaitForWindowExposed(window) ? window : nullptr;
}

void collectWarnings()
{
    if (!g_previous)
        g_previous = qInstallMessageHandler(keep);
}

QString warnings()
{
    return g_warnings.join(QLatin1Char('\n'));
}

void dropFile(QQuickWindow *window, const QString &path)
{
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(path)});
    const QPoint at(window->width() / 2, window->height() / 2);
    QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(window, &enter);
    QDragMoveEvent move(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(window, &move);
    QDropEvent drop(QPointF(at), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(window, &drop);
}

QList<QQuickItem *> allItems(QQuickItem *root)
{
    QList<QQuickItem *> out;
    if (!root)
        return out;
    const QList<QQuickItem *> children = root->childItems();
    for (QQuickItem *child : children) {
        out << child;
        out << allItems(child);
    }
    return out;
}

QList<QQuickItem *> itemsNamed(QQuickItem *root, const QString &objectName)
{
    QList<QQuickItem *> out;
    for (QQuickItem *item : allItems(root))
        if (item->objectName() == objectName)
            out << item;
    return out;
}

QObject *findNamed(QObject *root, const QString &name)
{
    if (root->objectName() == name)
        return root;
    for (QObject *child : root->children())
        if (QObject *hit = findNamed(child, name))
            return hit;
    if (QObject *content = root->property("contentItem").value<QObject *>(); content && content != root
        && content->parent() != root)
        return findNamed(content, name);
    return nullptr;
}

void clickCentre(QQuickWindow *window, QQuickItem *item)
{
    const QPointF centre = item->mapToScene(QPointF(item->width() / 2, item->height() / 2));
    QTest::mouseClick(window, Qt::LeftButton, Qt::NoModifier, centre.toPoint());
}

bool shootBothThemes(QQuickWindow *window, AppSettings *settings, const QString &name, QString *error)
{
    QDir().mkpath(QStringLiteral(WASTE_SCREENSHOT_DIR));
    for (const QString &theme : {QStringLiteral("light"), QStringLiteral("dark")}) {
        settings->setTheme(theme);
        QTest::qWait(200); // the new colours are drawn
        const QString file = QStringLiteral(WASTE_SCREENSHOT_DIR "/%1.png").arg(name.arg(theme));
        const QImage shot = window->grabWindow();
        if (shot.isNull() || !shot.save(file)) {
            *error = QStringLiteral("no screenshot saved as %1").arg(file);
            return false;
        }
    }
    return true;
}

void typeText(QQuickWindow *window, const QString &text)
{
    for (const QChar c : text)
        QTest::keyClick(window, c.toLatin1());
}

} // namespace WindowTest
