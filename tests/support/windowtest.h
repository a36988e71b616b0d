// Helpers for tests that drive the real main window offscreen: a data folder of the test's
// own, QML warnings collected as failures, and the input a person gives (a file dropped from
// a file manager, typed text).
#pragma once

#include <QList>
#include <QString>
#include <QStringList>

class AppSettings;
class QObject;
class QQmlApplicationEngine;
class QQuickItem;
class QQuickWindow;

namespace WindowTest {

// Call after StudioApplication::configure(): gives the test its own application name, so its
// data folder (chat database, states, images, queue) and settings file are its own (ctest runs
// the window tests at the same time), both under the test-mode folders (never the user's), and
// empties both.
void useOwnAppData(const QString &testName);

// Loads the main window into `qml` and waits until it is on screen; null (the reason already
// logged) when it did not load or show.
QQuickWindow *showMainWindow(QQmlApplicationEngine &qml);

// From now on every warning (QML ones included) is kept, and still printed; a QML binding
// loop also fails the running test function there and then.
void collectWarnings();
// What was collected, one per line (empty: none).
QString warnings();

// What a file manager's drag does: enter, move, drop, at the window's centre.
void dropFile(QQuickWindow *window, const QString &path);
// Every item under root in the visual tree (delegates of views and repeaters included, which
// findChildren() misses: they are not always QObject children of what shows them).
QList<QQuickItem *> allItems(QQuickItem *root);
// The same, named objectName.
QList<QQuickItem *> itemsNamed(QQuickItem *root, const QString &objectName);

// The object named `name` at or under root, or null: QObject children, and a popup's items,
// which hang from its content item rather than from the popup as a QObject.
QObject *findNamed(QObject *root, const QString &name);
// A mouse click at the item's centre, where a person clicks.
void clickCentre(QQuickWindow *window, QQuickItem *item);

// Screenshots of the window in the light and the dark theme, saved as
// <build>/screenshots/<name with %1 the theme>.png. False, with *error saying which, when
// one could not be taken or saved.
bool shootBothThemes(QQuickWindow *window, AppSettings *settings, const QString &name, QString *error);

// QTest::keyClicks takes widgets only; a QML window gets its keys one by one.
void typeText(QQuickWindow *window, const QString &text);

} // namespace WindowTest
