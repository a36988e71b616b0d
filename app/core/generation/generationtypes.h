// Value types that travel between the EngineWorker thread and its clients (chat, API server).
#pragma once

#include "prompt/dialogue.h"
#include "prompt/promptsegment.h"

#include <waste/waste.hpp>

#include <QByteArray>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QtQml/qqmlregistration.h>

#include <functional>
#include <memory>
#include <optional>
#include <span>

// Builds a request's decoding constraint on the engine thread, where the model is
// (maxTokens: the request's limit, so the document can close in time; prompt: the whole
// tokenized prompt, which tells a K3 constraint the channel generation starts in).
using ConstraintFactory = std::function<std::shared_ptr<waste::TokenConstraint>(
    const waste::Model &, int maxTokens, std::span<const int32_t> prompt)>;

struct GenerationRequest {
    quint64 id = 0;
    QList<PromptSegment> segments;
    // Leading segments a later request is likely to start with too (system prompt, tools,
    // earlier turns: waste::ChatPrompt::sharedSegments): the state after them is kept in the prompt cache
    // on disk (promptcache.h); 0: none.
    int reusableSegments = 0;
    QStringList imagePaths;
    waste::GenParams params;
    // Keep the engine state when the new prompt extends what is already in it.
    bool reuseState = true;
    // Where this conversation's engine state is saved (savedstate.h); empty: nowhere. When the
    // state in memory belongs to something else, a saved state that the prompt extends is
    // loaded instead of feeding the whole prompt; after the answer the state is saved here.
    QString stateFile;
    // Constrained decoding (API response_format / forced tool calls); empty: none.
    ConstraintFactory makeConstraint;
    // Read the reply with the model's reply parser (waste::Model::replyParser): reasoning,
    // content and tool calls arrive through GenerationHandle::reply and in
    // GenerationResult::reply; stop strings then cut the content.
    bool parseReply = false;
    // The tools the reply may call (an OpenAI "tools" array, compact JSON; empty: none):
    // calls of other functions come back as text, and a bare JSON call of these is a call
    // (waste::Model::replyParser with declared tools).
    QByteArray replyTools;
    // The conversation the segments were rendered from, for a remote engine
    // (remote/remoteengine.h), which sends it as OpenAI messages and renders nothing here.
    Dialogue dialogue;
};

// Live figures about one generation, cumulative since it started.
struct GenerationStats {
    Q_GADGET
    QML_VALUE_TYPE(generationStats)
    Q_PROPERTY(int promptTokens MEMBER promptTokens)
    Q_PROPERTY(int reusedTokens MEMBER reusedTokens)
    Q_PROPERTY(int prefilledTokens MEMBER prefilledTokens)
    Q_PROPERTY(bool restoredState MEMBER restoredState)
    Q_PROPERTY(int completionTokens MEMBER completionTokens)
    Q_PROPERTY(int reasoningTokens MEMBER reasoningTokens)
    Q_PROPERTY(double prefillSeconds MEMBER prefillSeconds)
    Q_PROPERTY(double decodeSeconds MEMBER decodeSeconds)
    Q_PROPERTY(double tokensPerSecond MEMBER tokensPerSecond)
    Q_PROPERTY(double hitRate MEMBER hitRate)
    Q_PROPERTY(qint64 bytesRead MEMBER bytesRead)
public:
    int promptTokens = 0;
    int reusedTokens = 0; // prompt tokens already in the engine state (not recomputed)
    int prefilledTokens = 0; // positions computed for the prompt (images expanded)
    bool restoredState = false; // the reused state was loaded from the conversation's saved state
    int completionTokens = 0;
    // Of those, the reasoning: every token up to the last one that added to the reply's
    // reasoning (GenerationRequest::parseReply only; 0 when the model did not reason).
    int reasoningTokens = 0;
    double prefillSeconds = 0;
    double decodeSeconds = 0;
    double tokensPerSecond = 0;
    double hitRate = 0; // demand hits / (hits + misses) during this generation; -1: not known (a remote engine)
    qint64 bytesRead = 0;
    bool operator==(const GenerationStats &) const = default;
};

struct GenerationResult {
    Q_GADGET
    QML_VALUE_TYPE(generationResult)
    Q_PROPERTY(QString text MEMBER text)
    Q_PROPERTY(GenerationStats stats MEMBER stats)
public:
    QString text;
    waste::FinishReason finishReason = waste::FinishReason::Stop; // Cancelled also when the caller cancelled
    GenerationStats stats;
    QList<int> tokens;
    waste::ChatReply reply; // GenerationRequest::parseReply: the whole parsed reply
    bool operator==(const GenerationResult &) const = default;
};

// Why a generation failed: the engine's error code (none for a failure of the app's own,
// such as a saved state it could not read), the argument at fault when the engine names one
// ("max_tokens"), and the message for people.
struct GenerationError {
    std::optional<waste::ErrorCode> code;
    QString argument;
    QString message;
};

Q_DECLARE_METATYPE(GenerationRequest)
Q_DECLARE_METATYPE(GenerationError)
Q_DECLARE_METATYPE(waste::ReplyDelta)
