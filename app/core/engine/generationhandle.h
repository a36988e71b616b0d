// GenerationHandle: one generation request as its caller sees it. EngineController::generate
// returns it; it lives on the caller's (GUI) thread and carries only this request's signals,
// so no consumer receives other requests' tokens or sorts them out by id. The controller owns
// it and deletes it (later) once its request has ended with finished() or failed().
#pragma once

#include "generation/generationtypes.h"

#include <QObject>
#include <QPointer>

class EngineController;

class GenerationHandle : public QObject {
    Q_OBJECT
public:
    // Asks the engine to stop this request: it ends with finished(), FinishReason::Cancelled.
    void cancel();

Q_SIGNALS:
    void started(int promptTokens, int reusedTokens);
    void prefillProgress(int done, int total);
    // The text since the last batch (about every EngineWorker::kBatchMs), with live figures.
    void tokens(const QString &text, const GenerationStats &stats);
    // GenerationRequest::parseReply: the parsed reply, batched like tokens(). The last one
    // has done = true and comes before finished().
    void reply(const waste::ReplyDelta &delta);
    // The end: exactly one of these two, once.
    void finished(const GenerationResult &result);
    void failed(const GenerationError &error);

private:
    friend class EngineController;
    GenerationHandle(EngineController *engine, quint64 id);

    EngineController *m_engine;
    quint64 m_id;
};
