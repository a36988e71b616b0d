// EngineController: the GUI-thread face of the engine. It owns the EngineWorker's thread,
// forwards requests to it as queued calls, and mirrors its state in properties that QML and
// the status bar bind to. It never blocks: every answer comes back as a signal.
#pragma once

#include "engine/engineworker.h"
#include "engine/generationhandle.h"
#include "engine/tokencount.h"
#include "singleton/appsingleton.h"

#include <QHash>
#include <QObject>
#include <QQmlEngine>
#include <QThread>
#include <QVariantMap>

class RemoteEngine;

class EngineController : public QObject, public AppSingleton<EngineController> {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON
    Q_PROPERTY(State state READ state NOTIFY stateChanged)
    Q_PROPERTY(QString stateText READ stateText NOTIFY stateChanged)
    Q_PROPERTY(QString modelPath READ modelPath NOTIFY modelChanged)
    Q_PROPERTY(QString modelName READ modelName NOTIFY modelChanged)
    Q_PROPERTY(QVariantMap modelInfo READ modelInfo NOTIFY modelChanged)
    Q_PROPERTY(bool hasVision READ hasVision NOTIFY modelChanged)
    Q_PROPERTY(double loadProgress READ loadProgress NOTIFY loadProgressChanged)
    Q_PROPERTY(QString errorString READ errorString NOTIFY stateChanged)
    // A remote engine whose server stopped answering (its last request could not connect):
    // why, in words; empty while it answers. The state stays Ready: the next request tries again.
    Q_PROPERTY(QString unreachable READ unreachable NOTIFY stateChanged)
    Q_PROPERTY(qint64 budgetBytes READ budgetBytes NOTIFY modelChanged)
    Q_PROPERTY(qint64 expertCacheBytes READ expertCacheBytes NOTIFY modelChanged)
    Q_PROPERTY(int contextTokens READ contextTokens NOTIFY modelChanged)
    Q_PROPERTY(double lastTokensPerSecond READ lastTokensPerSecond NOTIFY statsChanged)
    Q_PROPERTY(double lastHitRate READ lastHitRate NOTIFY statsChanged)
    Q_PROPERTY(int activeRequests READ activeRequests NOTIFY activeRequestsChanged)
    Q_PROPERTY(int runningRequests READ runningRequests NOTIFY activeRequestsChanged)
    Q_PROPERTY(int waitingRequests READ waitingRequests NOTIFY activeRequestsChanged)
    Q_PROPERTY(int maxConcurrent READ maxConcurrent NOTIFY modelChanged)
    // The open model is a remote engine (remote/remoteengine.h): no RAM, budget or cache here.
    Q_PROPERTY(bool remote READ isRemote NOTIFY modelChanged)

public:
    enum State { NoModel, Loading, Ready, Generating, Failed };
    Q_ENUM(State)

    // No default argument: Qt 6.4 prefers a default constructor over create() for QML singletons.
    explicit EngineController(QObject *parent);
    ~EngineController() override;

    State state() const { return m_state; }
    QString stateText() const;
    QString modelPath() const { return m_modelPath; }
    QString modelName() const;
    QVariantMap modelInfo() const { return m_info; }
    bool hasVision() const { return m_info.value(QStringLiteral("hasVision")).toBool(); }
    double loadProgress() const { return m_loadProgress; }
    QString errorString() const { return m_error; }
    QString unreachable() const { return isRemote() ? m_remoteUnreachable : QString(); }
    qint64 budgetBytes() const { return m_info.value(QStringLiteral("budgetBytes")).toLongLong(); }
    qint64 expertCacheBytes() const { return m_info.value(QStringLiteral("expertCacheBytes")).toLongLong(); }
    int contextTokens() const { return m_ctxTokens; }
    double lastTokensPerSecond() const { return m_lastTokensPerSecond; }
    double lastHitRate() const { return m_lastHitRate; }
    int activeRequests() const { return m_active; }
    // Of those, the ones the engine is decoding now, and the others: waiting for room
    // (engineworker.h) or not yet seen by the engine thread.
    int runningRequests() const { return qMin(m_running, m_active); }
    int waitingRequests() const { return m_active - runningRequests(); }
    // Requests the open model decodes at once (the RAM budget's share; 1 for a remote engine).
    int maxConcurrent() const { return qMax(1, m_info.value(QStringLiteral("sequences")).toInt()); }
    bool isRemote() const { return m_info.value(QStringLiteral("remote")).toBool(); }

    Q_INVOKABLE void openModel(const QString &path, qint64 budgetBytes = 0, int ctxTokens = 4096);
    Q_INVOKABLE void closeModel();
    // Cancels the load in progress (id 0) or one request.
    Q_INVOKABLE void cancel(quint64 id = 0);

    // Queues a generation. Its progress, tokens and end arrive through the handle, which
    // this controller owns and deletes after the end (connect to it right away).
    GenerationHandle *generate(GenerationRequest request);
    // Counts the tokens of a conversation as `kind` renders it, for the context meter. The
    // rendering (which reads image headers) and the count both run on the engine thread;
    // the returned TokenCount answers (owned by this controller, deleted after the answer).
    TokenCount *countDialogue(const Dialogue &dialogue, waste::ChatFormat format);
    // Counts the tokens of a prompt already rendered (the API's count_tokens), in turn with
    // the generations on the engine thread.
    TokenCount *countSegments(const QList<PromptSegment> &segments);
    // Removes a saved conversation state, in turn with the generations (engineworker.h).
    void forgetState(const QString &stateFile);
    // The prompt cache on disk (promptcache.h): its folder and size; maxBytes 0 (the
    // default): off. minTokens: the shortest prefix kept.
    void setPromptCache(const QString &dir, qint64 maxBytes, int minTokens = 64);

    EngineWorker *worker() const { return m_worker; }
    // Serves the model when it is a remote engine ("remote:ID" paths; enginecontrollerremote.cpp).
    RemoteEngine *remoteEngine() const { return m_remote; }

Q_SIGNALS:
    void stateChanged();
    void modelChanged();
    void loadProgressChanged();
    void statsChanged();
    void activeRequestsChanged();
    void modelOpenFailed(const QString &path, const QString &message);

    // Every generation, as generate() queues it, for whoever watches them all (tests, benches).
    void generationQueued(GenerationHandle *handle);
    // Every count, as countDialogue() queues it (for tests).
    void countQueued(TokenCount *count);

private:
    void forgetStats();
    void setState(State s, const QString &error = {});
    // The handle of a request the worker reports on (null once the request has ended).
    GenerationHandle *handleFor(quint64 id) const { return m_handles.value(id); }
    void requestDone(quint64 id);
    // The remote engine's part (enginecontrollerremote.cpp).
    void connectRemote();
    void openRemote(const QString &path);
    // A report of the local engine about `path` that came after a remote engine took over.
    bool supersededByRemote(const QString &path) const;

    QThread m_thread;
    EngineWorker *m_worker = nullptr;
    RemoteEngine *m_remote = nullptr;
    State m_state = NoModel;
    QString m_modelPath;
    QString m_error;
    QString m_remoteUnreachable; // see unreachable()
    QVariantMap m_info;
    double m_loadProgress = 0;
    int m_ctxTokens = 0;
    double m_lastTokensPerSecond = 0;
    double m_lastHitRate = 0;
    int m_active = 0;
    int m_running = 0;
    quint64 m_nextId = 1;
    QHash<quint64, GenerationHandle *> m_handles; // requests not ended yet
    QHash<quint64, TokenCount *> m_counts;        // counts not answered yet
};
