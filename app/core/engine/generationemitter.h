// What one generation tells its client while it runs, whether it runs alone or in the
// worker's batch: prefill progress, text and parsed reply batched about every
// EngineWorker::kBatchMs (a completed tool call at once), live figures, and at the end the
// rest of the reply and the result.
#pragma once

#include "generation/generationtypes.h"

#include <waste/waste.hpp>

#include <QElapsedTimer>
#include <QString>

#include <functional>

class EngineWorker;

class GenerationEmitter {
public:
    // before: the engine's counters when the generation started (the figures are differences).
    GenerationEmitter(EngineWorker &worker, const GenerationRequest &request, int promptTokens, int reusedTokens,
                      bool restoredState, const waste::Stats &before, std::function<bool()> cancelled);

    bool onPrefill(int done, int total);
    bool onToken(const waste::TokenEvent &ev);
    // Sends what is held back and the rest of the reply, then generationFinished.
    void finish(const waste::GenResult &r);

private:
    void sendReply(waste::ReplyDelta &d);

    EngineWorker &m_worker;
    quint64 m_id;
    bool m_parseReply;
    waste::Stats m_before;
    std::function<bool()> m_cancelled;
    QElapsedTimer m_clock, m_sinceEmit;
    double m_prefillSeconds = 0;
    bool m_prefillDone = false;
    QString m_pending;
    waste::ReplyDelta m_pendingReply;
    waste::ChatReply m_sentReply; // what replyReady has carried so far
    size_t m_eventReasoning = 0;  // bytes of reasoning the token events carried (sent or not)
    GenerationStats m_live;
};
