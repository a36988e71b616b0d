// Persisted user settings (QSettings): model folders, the default budget, the open model,
// theme and font size. A QML singleton so every page binds to the same values.
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
    Q_PROPERTY(qint64 budgetBytes READ budgetBytes WRITE setBudgetBytes NOTIFY changed)
    Q_PROPERTY(int contextTokens READ contextTokens WRITE setContextTokens NOTIFY changed)
    Q_PROPERTY(QString theme READ theme WRITE setTheme NOTIFY changed)
    Q_PROPERTY(int fontSize READ fontSize WRITE setFontSize NOTIFY changed)
    Q_PROPERTY(QString dataFolder READ dataFolder CONSTANT)

public:
    // No default argument: Qt 6.4 prefers a default constructor over create() for QML singletons.
    explicit AppSettings(QObject *parent);

    QString modelsFolder() const;
    void setModelsFolder(const QString &v);
    QString lastModelPath() const;
    void setLastModelPath(const QString &v);
    qint64 budgetBytes() const; // 0: the engine's default
    void setBudgetBytes(qint64 v);
    int contextTokens() const;
    void setContextTokens(int v);
    QString theme() const; // "system", "light", "dark"
    void setTheme(const QString &v);
    int fontSize() const;
    void setFontSize(int v);
    // Where the app keeps its own files (demo model, conversations, download queue).
    QString dataFolder() const;

Q_SIGNALS:
    void changed();

private:
    void write(const QString &key, const QVariant &value);
    mutable QSettings m_settings;
};
