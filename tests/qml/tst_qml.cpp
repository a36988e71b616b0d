// Runs the QML TestCase suites in this folder against the real app services (engine,
// settings, chat, planner), created before the QML engine loads as the app does.
#include "studioapplication.h"

#include <QApplication>
#include <QDir>
#include <QQmlContext>
#include <QQmlEngine>
#include <QStandardPaths>
#include <QtQuickTest/quicktest.h>

class Setup : public QObject {
    Q_OBJECT
public Q_SLOTS:
    void applicationAvailable()
    {
        QStandardPaths::setTestModeEnabled(true);
        StudioApplication::configure();
        QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/qmltest")).removeRecursively();
        m_services = StudioApplication::createServices();
    }
    void qmlEngineAvailable(QQmlEngine *engine)
    {
        // Qt 6.4 does not search the resource prefix the static modules live under by itself.
        engine->addImportPath(QStringLiteral("qrc:/qt/qml"));
        engine->rootContext()->setContextProperty(QStringLiteral("fixturesDir"), QStringLiteral(WASTE_FIXTURES_DIR));
    }
    void cleanupTestCase() { m_services.reset(); }

private:
    std::unique_ptr<StudioServices> m_services;
};

int main(int argc, char **argv)
{
    // QApplication, not the QGuiApplication quick_test_main would make: Qt Charts needs it.
    QApplication app(argc, argv);
    Setup setup;
    return quick_test_main_with_setup(argc, argv, "waste_qml", QUICK_TEST_SOURCE_DIR, &setup);
}
#include "tst_qml.moc"
