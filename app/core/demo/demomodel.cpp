#include "demo/demomodel.h"

#include "settings/appsettings.h"
#include "engine/enginecontroller.h"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <QDir>
#include <QFileInfo>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

DemoModel::DemoModel(EngineController *engine, AppSettings *settings, QObject *parent)
    : QObject(parent), m_engine(engine), m_settings(settings),
      m_path(settings->dataFolder() + QStringLiteral("/demo/tiny-kimi-linear.waste"))
{
    connect(m_engine, &EngineController::modelChanged, this, &DemoModel::activeChanged);
    connect(&m_watcher, &QFutureWatcher<QString>::finished, this, [this] {
        const QString error = m_watcher.result();
        if (!error.isEmpty()) {
            setState(Failed, error);
            return;
        }
        m_progress = 1;
        Q_EMIT progressChanged();
        setState(Ready);
        m_engine->openModel(m_path, m_settings->budgetFor(m_path), m_settings->contextTokens());
    });
}

DemoModel::~DemoModel()
{
    m_cancel = true;
    m_watcher.waitForFinished();
}

bool DemoModel::active() const
{
    return !m_engine->modelPath().isEmpty()
           && QFileInfo(m_engine->modelPath()).absoluteFilePath() == QFileInfo(m_path).absoluteFilePath();
}

bool DemoModel::needed() const
{
    const QString last = m_settings->lastModelPath();
    return last.isEmpty() || !QFileInfo::exists(last);
}

void DemoModel::setState(State s, const QString &error)
{
    m_state = s;
    m_error = error;
    Q_EMIT stateChanged();
}

void DemoModel::openDemo()
{
    if (m_state == Writing)
        return;
    // A finished container has its manifest: written last, so its presence means complete.
    if (QFileInfo::exists(m_path + QStringLiteral("/manifest.json"))) {
        setState(Ready);
        m_engine->openModel(m_path, m_settings->budgetFor(m_path), m_settings->contextTokens());
        return;
    }
    m_progress = 0;
    Q_EMIT progressChanged();
    setState(Writing);
    QDir().mkpath(QFileInfo(m_path).absolutePath());
    // Progress crosses threads as an atomic; a timer on this thread publishes it.
    auto *poll = new QTimer(this);
    poll->setInterval(100);
    connect(poll, &QTimer::timeout, this, [this, poll] {
        m_progress = m_progressPermille.load() / 1000.0;
        Q_EMIT progressChanged();
        if (m_state != Writing)
            poll->deleteLater();
    });
    poll->start();
    m_watcher.setFuture(QtConcurrent::run([path = m_path, this]() -> QString {
        try {
            waste::TinyModelOptions options;
            options.seed = 1;
            waste::makeTinyContainer(path.toStdString(), options, [this](const waste::ConvertProgress &p) {
                if (p.units > 0)
                    m_progressPermille = int(1000.0 * p.unit / p.units);
            }, &m_cancel);
            return {};
        } catch (const std::exception &e) {
            return QString::fromStdString(e.what());
        }
    }));
}
