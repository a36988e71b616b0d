#include "engine/generationemitter.h"

#include "engine/engineworker.h"

#include <algorithm>

namespace {

double hitRateBetween(const waste::Stats &before, const waste::Stats &after)
{
    const double hits = double(after.demandHits - before.demandHits);
    const double misses = double(after.demandMisses - before.demandMisses);
    return hits + misses > 0 ? hits / (hits + misses) : 0.0;
}

} // namespace

GenerationEmitter::GenerationEmitter(EngineWorker &worker, const GenerationRequest &request, int promptTokens,
                                     int reusedTokens, bool restoredState, const waste::Stats &before,
                                     std::function<bool()> cancelled)
    : m_worker(worker), m_id(request.id), m_parseReply(request.parseReply), m_before(before),
      m_cancelled(std::move(cancelled))
{
    m_live.promptTokens = promptTokens;
    m_live.reusedTokens = reusedTokens;
    m_live.restoredState = restoredState;
    m_clock.start();
    m_sinceEmit.start();
}

bool GenerationEmitter::onPrefill(int done, int total)
{
    Q_EMIT m_worker.prefillProgress(m_id, done, total);
    return !m_cancelled();
}

void GenerationEmitter::sendReply(waste::ReplyDelta &d)
{
    m_sentReply.reasoning += d.reasoning;
    m_sentReply.content += d.content;
    m_sentReply.toolCalls.insert(m_sentReply.toolCalls.end(), d.toolCalls.begin(), d.toolCalls.end());
    Q_EMIT m_worker.replyReady(m_id, d);
    d = waste::ReplyDelta{};
}

bool GenerationEmitter::onToken(const waste::TokenEvent &ev)
{
    if (!m_prefillDone) {
        m_prefillDone = true;
        m_prefillSeconds = m_clock.elapsed() / 1000.0;
    }
    m_pending += QString::fromStdString(ev.text);
    m_pendingReply.append(ev.reply);
    m_live.completionTokens = ev.index + 1;
    if (!ev.reply.reasoning.empty())
        m_live.reasoningTokens = ev.index + 1;
    m_eventReasoning += ev.reply.reasoning.size();
    m_live.prefillSeconds = m_prefillSeconds;
    m_live.decodeSeconds = m_clock.elapsed() / 1000.0 - m_prefillSeconds;
    m_live.tokensPerSecond = m_live.decodeSeconds > 0 ? m_live.completionTokens / m_live.decodeSeconds : 0;
    m_live.hitRate = hitRateBetween(m_before, ev.stats);
    m_live.bytesRead = ev.stats.bytesRead - m_before.bytesRead;
    m_live.prefilledTokens = int(ev.stats.tokensPrefilled - m_before.tokensPrefilled);
    // Batch streamed text: one queued signal per ~40 ms, not one per token.
    if (m_sinceEmit.elapsed() >= EngineWorker::kBatchMs || !m_pendingReply.toolCalls.empty()) {
        Q_EMIT m_worker.tokensReady(m_id, m_pending, m_live);
        m_pending.clear();
        if (m_parseReply && !m_pendingReply.empty())
            sendReply(m_pendingReply);
        m_sinceEmit.restart();
    }
    return !m_cancelled();
}

void GenerationEmitter::finish(const waste::GenResult &r)
{
    if (!m_pending.isEmpty())
        Q_EMIT m_worker.tokensReady(m_id, m_pending, m_live);
    if (m_parseReply) {
        // What the events did not carry (a cancel or a full context ends generation
        // after the last event): the rest of the final reply.
        waste::ReplyDelta rest;
        rest.reasoning = r.reply.reasoning.substr(std::min(m_sentReply.reasoning.size(), r.reply.reasoning.size()));
        rest.content = r.reply.content.substr(std::min(m_sentReply.content.size(), r.reply.content.size()));
        rest.toolCalls.assign(r.reply.toolCalls.begin() +
                                  std::ptrdiff_t(std::min(m_sentReply.toolCalls.size(), r.reply.toolCalls.size())),
                              r.reply.toolCalls.end());
        rest.done = true;
        // Reasoning released only at the end (held back, then let go) ran to the last token.
        // Compared with what the events carried, not with what was sent, so the count does
        // not depend on when the batched deltas went out (streamed and whole answers agree).
        if (r.reply.reasoning.size() > m_eventReasoning)
            m_live.reasoningTokens = int(r.tokens.size());
        sendReply(rest);
    }
    GenerationResult result;
    result.text = QString::fromStdString(r.text);
    result.finishReason = m_cancelled() ? waste::FinishReason::Cancelled : r.finish;
    for (int32_t t : r.tokens)
        result.tokens.append(t);
    result.reply = r.reply;
    result.stats = m_live;
    result.stats.completionTokens = int(r.tokens.size());
    if (!m_prefillDone)
        result.stats.prefillSeconds = m_clock.elapsed() / 1000.0;
    result.stats.hitRate = hitRateBetween(m_before, r.stats);
    result.stats.bytesRead = r.stats.bytesRead - m_before.bytesRead;
    result.stats.prefilledTokens = int(r.stats.tokensPrefilled - m_before.tokensPrefilled);
    Q_EMIT m_worker.generationFinished(m_id, result);
}
