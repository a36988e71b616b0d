// Persisted user settings (QSettings): model folders, each model's own RAM budget, the open
// model, the context length, theme and font size. A QML singleton so every page binds to
// the same values.
#pragma once

#include "singleton/appsingleton.h"

#include <QObject>
#include <QQmlEngine>
#include <QSettings>
#include <QStringList>

class AppSettings : public QObject, public AppSingleton<AppSettings> {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON
    Q_PROPERTY(QString modelsFolder READ modelsFolder WRITE setModelsFolder NOTIFY changed)
    Q_PROPERTY(QString lastModelPath READ lastModelPath WRITE setLastModelPath NOTIFY changed)
    // Containers opened from anywhere ("Open a container…"), newest first: the library keeps
    // listing them after another model is opened, across restarts.
    Q_PROPERTY(QStringList openedContainers READ openedContainers NOTIFY changed)
    Q_PROPERTY(int contextTokens READ contextTokens WRITE setContextTokens NOTIFY changed)
    Q_PROPERTY(QString theme READ theme WRITE setTheme NOTIFY changed)
    Q_PROPERTY(int fontSize READ fontSize WRITE setFontSize NOTIFY changed)
    Q_PROPERTY(QString dataFolder READ dataFolder CONSTANT)
    // The prompt cache on disk (engine/promptcache.h), in GiB; 0: off.
    Q_PROPERTY(int promptCacheGiB READ promptCacheGiB WRITE setPromptCacheGiB NOTIFY changed)

public:
    // No default argument: Qt 6.4 prefers a default constructor over create() for QML singletons.
    explicit AppSettings(QObject *parent);

    QString modelsFolder() const;
    void setModelsFolder(const QString &v);
    QString lastModelPath() const;
    void setLastModelPath(const QString &v);
    QStringList openedContainers() const;
    // Puts a container first in openedContainers (at most kOpenedKept, the oldest dropped).
    void rememberOpened(const QString &path);
    static constexpr int kOpenedKept = 32;
    // The budget chosen for one container on the Planner page (0: the engine's default). Kept
    // per container, by its absolute path, so a budget chosen for one model never reaches another.
    Q_INVOKABLE qint64 budgetFor(const QString &container) const;
    Q_INVOKABLE void setBudgetFor(const QString &container, qint64 bytes);
    int contextTokens() const;
    void setContextTokens(int v);
    QString theme() const; // "system", "light", "dark"
    void setTheme(const QString &v);
    int fontSize() const;
    void setFontSize(int v);
    // Where the app keeps its own files (demo model, conversations, download queue).
    QString dataFolder() const;
    int promptCacheGiB() const;
    void setPromptCacheGiB(int v);
    QString promptCacheFolder() const { return dataFolder() + QStringLiteral("/prompt-cache"); }

Q_SIGNALS:
    void changed();

private:
    static QString budgetKey(const QString &container);
    void write(const QString &key, const QVariant &value);
    mutable QSettings m_settings;
};
