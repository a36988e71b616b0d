// EngineWorker: owns the engine's Model on its own QThread. Everything here runs on that
// thread except requestCancel(), which only flips atomics. Requests arrive as queued calls
// and are decoded together (waste/batch.hpp): each batch step is one queued call, so a request
// that arrives meanwhile joins at the next step. As many run at once as the RAM budget
// holds states for, each sized to its prompt and max_tokens (waste::Batch::admits), up to
// kSequencesWanted; the rest wait, first come first served. The first
// to start while the session is free continues it (prefix reuse, saved states); the others
// read their prompt whole. A prompt with images runs alone, once the batch is empty.
#pragma once

#include "prompt/dialogue.h"
#include "generation/generationtypes.h"
#include "engine/promptfeeder.h"

#include <waste/batch.hpp>
#include <waste/waste.hpp>

#include <QElapsedTimer>
#include <QMutex>
#include <QObject>
#include <QSet>
#include <QString>
#include <QVariantMap>

#include <atomic>
#include <deque>
#include <map>
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
    // Saved conversation states kept (the most recently written); older ones are removed.
    static constexpr int kSavedStatesKept = 8;
    // Sequences decoded at once asked of the engine; the budget may hold fewer.
    static constexpr int kSequencesWanted = 8;
    // How long an idle engine waits for more requests before it starts reading a prompt.
    static constexpr int kGatherMs = 25;

public Q_SLOTS:
    void openModel(const QString &path, qint64 budgetBytes, int ctxTokens);
    void closeModel();
    void generate(const GenerationRequest &request);
    // Token counting for the context meter: renders the dialogue here, off the GUI thread
    // (image headers are read from disk), and answers tokensCounted(id, -1) when it cannot.
    void countDialogue(quint64 id, const Dialogue &dialogue, waste::ChatFormat format);
    // The same for segments already rendered.
    void countSegments(quint64 id, const QList<PromptSegment> &segments);
    // Removes a conversation's saved state (edited, regenerated or deleted). Runs in turn with
    // batch steps; when a request of that conversation is decoding, once it has ended, so it
    // never races the save at the end of one.
    void forgetState(const QString &stateFile);
    void setPromptCache(const QString &dir, qint64 maxBytes, int minTokens);

Q_SIGNALS:
    void loadProgress(double fraction);
    void modelOpened(const QString &path, const QVariantMap &info);
    void modelOpenFailed(const QString &path, const QString &message);
    void modelClosed();

    void generationStarted(quint64 id, int promptTokens, int reusedTokens);
    void prefillProgress(quint64 id, int done, int total);
    void tokensReady(quint64 id, const QString &text, const GenerationStats &stats);
    // GenerationRequest::parseReply: the parsed reply, batched like tokensReady (a step
    // that completes a tool call is sent at once). The last one of a request has
    // done = true and comes before generationFinished.
    void replyReady(quint64 id, const waste::ReplyDelta &delta);
    void generationFinished(quint64 id, const GenerationResult &result);
    void generationFailed(quint64 id, const GenerationError &error);
    void tokensCounted(quint64 id, int tokens);
    // How many requests are being decoded, whenever that changes.
    void runningChanged(int running);

private:
    struct Running;

    bool isCancelled(quint64 id) const;
    void forgetCancel(quint64 id);
    QVariantMap describeModel() const;
    void saveState(const GenerationRequest &request);
    // One round: starts the waiting requests there is room for, then one batch step.
    // Returns whether work is left; pump() queues the next round when it is.
    bool pumpOnce();
    void pump();
    void schedulePump(int delayMs = 0);
    // Runs every request already here to its end (before the model changes).
    void drain();
    // Whether the batch has a place and state room for `request` now (tokenizes it once).
    bool admitsNow(const GenerationRequest &request);
    void startInBatch(const GenerationRequest &request);
    // Ends every request in the batch with `message` and starts a new batch (a step failed
    // in a way the batch could not pin on one sequence).
    void failAllRunning(const QString &message);
    void runAlone(const GenerationRequest &request);
    void reportRequests();

    std::unique_ptr<waste::Model> m_model;
    std::unique_ptr<waste::Batch> m_batch; // over m_model (declared after it: destroyed first)
    std::deque<GenerationRequest> m_waiting;
    std::pair<quint64, std::vector<int32_t>> m_waitingPrompt; // the first waiting request's prompt, tokenized
    std::map<waste::Batch::Id, std::unique_ptr<Running>> m_running;
    bool m_pumpQueued = false;
    int m_reportedRunning = 0;
    // Feeds prompts on top of what the state holds (prefix reuse across requests).
    PromptFeeder m_feeder;
    // States of reusable prefixes on disk, across requests and restarts (promptcache.h).
    PromptCache m_cache;

    mutable QMutex m_cancelMutex;
    QSet<quint64> m_cancelled;
    std::atomic<quint64> m_current{0};
    std::atomic<bool> m_cancelLoad{false};
    std::atomic<bool> m_cancelEverything{false};
};
