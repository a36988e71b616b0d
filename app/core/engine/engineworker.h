// EngineWorker: owns the engine's Model on its own QThread. Everything here runs on that
// thread except requestCancel(), which only flips atomics. Requests arrive as queued calls,
// so they are served in turn, one model, first come first served.
#pragma once

#include "generationtypes.h"

#include <waste/waste.hpp>

#include <QElapsedTimer>
#include <QMutex>
#include <QObject>
#include <QSet>
#include <QString>
#include <QVariantMap>

#include <atomic>
#include <memory>
#include <vector>

class EngineWorker : public QObject {
    Q_OBJECT
public:
    explicit EngineWorker(QObject *parent = nullptr);
    ~EngineWorker() override;

    // Thread-safe. id 0 cancels the model load in progress.
    void requestCancel(quint64 id);
    void cancelAll();

    // Interval at which streamed text is batched before it is emitted.
    static constexpr int kBatchMs = 40;

public Q_SLOTS:
    void openModel(const QString &path, qint64 budgetBytes, int ctxTokens);
    void closeModel();
    void generate(const GenerationRequest &request);
    // Token counting for the context meter and the API's usage field.
    void countTokens(quint64 id, const QList<PromptSegment> &segments);

Q_SIGNALS:
    void loadProgress(double fraction);
    void modelOpened(const QString &path, const QVariantMap &info);
    void modelOpenFailed(const QString &path, const QString &message);
    void modelClosed();

    void generationStarted(quint64 id, int promptTokens, int reusedTokens);
    void prefillProgress(quint64 id, int done, int total);
    void tokensReady(quint64 id, const QString &text, const GenerationStats &stats);
    void generationFinished(quint64 id, const GenerationResult &result);
    void generationFailed(quint64 id, const QString &message);
    void tokensCounted(quint64 id, int tokens);

private:
    bool isCancelled(quint64 id) const;
    std::vector<int32_t> tokenizeSegments(const QList<PromptSegment> &segments) const;
    QVariantMap describeModel() const;

    std::unique_ptr<waste::Model> m_model;
    // Tokens whose effect is in the engine state right now (prefix reuse across requests).
    std::vector<int32_t> m_history;
    bool m_historyHasImages = false;

    mutable QMutex m_cancelMutex;
    QSet<quint64> m_cancelled;
    std::atomic<quint64> m_current{0};
    std::atomic<bool> m_cancelLoad{false};
    std::atomic<bool> m_cancelEverything{false};
};
