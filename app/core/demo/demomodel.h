// DemoModel: the first-run model. When no model is configured yet, the app writes the
// engine's tiny Kimi-Linear-shaped container (waste::makeTinyContainer, a few MB, seconds)
// into its data folder off the GUI thread and opens it, so the chat works with zero
// downloads. `active` tells the pages (Models, Chat) that what is open is the demo, so
// they can say how to get a real model.
#pragma once

#include "singleton/appsingleton.h"

#include <QFutureWatcher>
#include <QObject>
#include <QQmlEngine>

#include <atomic>

class EngineController;
class AppSettings;

class DemoModel : public QObject, public AppSingleton<DemoModel> {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON
    Q_PROPERTY(State state READ state NOTIFY stateChanged)
    Q_PROPERTY(double progress READ progress NOTIFY progressChanged)
    Q_PROPERTY(QString path READ path CONSTANT)
    Q_PROPERTY(bool active READ active NOTIFY activeChanged)
    Q_PROPERTY(QString errorString READ errorString NOTIFY stateChanged)

public:
    enum State { Idle, Writing, Ready, Failed };
    Q_ENUM(State)

    // No default argument: Qt 6.4 prefers a default constructor over create() for QML singletons.
    DemoModel(EngineController *engine, AppSettings *settings, QObject *parent);
    ~DemoModel() override;

    State state() const { return m_state; }
    double progress() const { return m_progress; }
    QString path() const { return m_path; }
    bool active() const;
    QString errorString() const { return m_error; }

    // Whether the first run needs the demo: no model has been opened or configured yet.
    bool needed() const;
    // Writes the demo container if it is not there yet, then opens it.
    Q_INVOKABLE void openDemo();

Q_SIGNALS:
    void stateChanged();
    void progressChanged();
    void activeChanged();

private:
    void setState(State s, const QString &error = {});

    EngineController *m_engine;
    AppSettings *m_settings;
    QString m_path;
    State m_state = Idle;
    double m_progress = 0;
    QString m_error;
    std::atomic<bool> m_cancel{false};
    std::atomic<int> m_progressPermille{0};
    QFutureWatcher<QString> m_watcher;
};
