// Several generations over one open Model at once (continuous batching). Each step() is
// one forward pass over every active sequence: a decoding sequence adds its last token, a
// prompt being read adds its next chunk, and the MoE layers see the whole chunk, so an
// expert record is read once for every sequence that routes to it. Each sequence keeps its
// own state (KDA matrices, MLA cache, position), sampler, constraint and reply parser, and
// gets the logits, bit for bit, and so the tokens it would get from Model::generate alone
// (prompts are read in passes, model/forward.hpp, whose logits do not depend on how a
// prompt is cut). A long prompt is read a piece per step between the other sequences'
// tokens, so it holds them up by one piece at most (kPromptPieceWhileDecoding).
//
// One sequence at a time may continue the Model's own session (useSession): it reads on
// from the session's state, so prefix reuse (waste/prefix.hpp) works for it, and leaves the
// session where generate() would. The others start from position 0 in states of their own,
// each sized to its prompt and the first kAnswerRoom tokens of its answer and grown as the
// answer goes on (to its prompt and maxTokens, at most the context), as many as the model was
// opened for (openForBatch) and whose states fit the budget's room for them. When a state must
// grow and the room is taken, the youngest sequences give theirs up (preemption) and later
// read their prompt and what they had generated again, in one pass, so their logits and
// tokens stay those they would have had.
//
// Like Model, a Batch is driven by one thread, the one that drives its Model; no call to the
// Model's eval/generate may run while a step does. Images are not batched: a prompt with
// images goes through Model::generate alone.
#pragma once

#include "waste/waste.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace waste {

inline constexpr int kMaxSequences = 16;
// The most prompt tokens a step reads while other sequences are decoding (a whole pass when
// none is): a long prompt holds their next tokens up by one such piece at most.
inline constexpr int kPromptPieceWhileDecoding = 512;
// A sequence's own state starts with its prompt and this many positions of answer, and grows
// (twice as large, at most to its prompt + maxTokens or the context) as the answer does.
inline constexpr int kAnswerRoom = 256;

// Model::open for a model that a Batch will drive: up to `sequences` (1..kMaxSequences) at
// once. The room for the states beyond the session's (batchShareAt) comes first from the
// floor's prompt room that a piece of kPromptPieceWhileDecoding tokens leaves (a pass gets
// what the states leave of it), then from at most half of the expert cache above its
// smallest size, so the budget still bounds the whole. batchSequences() says how many
// full-context sequences fit; sequences that need fewer positions share that room, up to
// `sequences` at once (Batch::capacity, Batch::admits).
std::unique_ptr<Model> openForBatch(const std::string &containerPath, const OpenOptions &options, int sequences);
// How many full-context sequences a Batch over `model` may decode at once (1 for a plain
// Model::open); Batch::capacity() is the most at once when they need fewer positions.
int batchSequences(const Model &model);

// What openForBatch does with a budget's room (expertCacheAt gives `cacheBytes`): the spare
// room is the floor's prompt room beyond a kPromptPieceWhileDecoding-token piece
// (MemoryPlan::pass_floor_bytes less the piece's pass) and half the cache above its smallest
// size. Batching needs one full-context state (MemoryPlan::state_bytes) of it beyond the
// session's; the room for states is then all of the prompt room's spare and, from the cache,
// what whole full-context states need beyond it, at most `sequences` − 1 of them. The one rule
// for the engine's open and the Planner.
struct BatchShare {
    int sequences = 1;          // full-context states that fit, the session's included
    int64_t cache_bytes = 0;    // the expert cache left
    int64_t state_room = 0;     // bytes for the states beyond the session's (0: no batching)
    int64_t from_prompt_room = 0; // of state_room: what the floor's prompt room lends
};
BatchShare batchShareAt(const MemoryPlan &plan, int64_t cacheBytes, int sequences);

class Batch {
public:
    using Id = uint64_t;

    // model: opened by Model::open; it must outlive the batch.
    explicit Batch(Model &model);
    ~Batch();
    Batch(const Batch &) = delete;
    Batch &operator=(const Batch &) = delete;

    struct Request {
        std::vector<int32_t> prompt; // may be empty on the session when its logits are known
        GenParams params;
        TokenCallback onToken;       // return false to stop this sequence
        PrefillCallback onPrefill;   // after each chunk of the prompt; return false to stop
        bool useSession = false;
        // useSession only: after exactly markAt tokens of the prompt (0: never) the step's pass
        // ends there and onMark runs with the session's state holding them, before the rest is
        // read (the app's prompt cache saves the state of a reusable prefix then).
        size_t markAt = 0;
        std::function<void()> onMark;
    };
    // Adds a sequence; it starts with the next step. Throws Error(Argument) when the batch
    // is full (see admits()), when the session is already in use, for a token id out of
    // range or an empty prompt with nothing to continue, and Error(ContextFull) when the
    // prompt does not fit the context.
    Id add(Request request);
    // Whether add() takes a sequence of `promptTokens` prompt tokens and at most `maxTokens`
    // generated ones (≤ 0: up to the context's end) now: there is a place in the batch and,
    // unless it continues the session, its state fits the room the others' leave. Not
    // admitted now, it fits once sequences end (any one fits an empty batch).
    bool admits(size_t promptTokens, int maxTokens, bool useSession) const;

    // Samples every sequence whose logits are ready, then runs one forward pass over every
    // sequence that has tokens to read. Returns the sequences that ended in this step.
    struct Ended {
        Id id = 0;
        GenResult result;
        // Set when the sequence failed (a cancelled prompt: ErrorCode::Cancelled). A pass that
        // fails (the decoded tokens', or the prompts') fails the sequences it was reading, and
        // resets the session when it is one of them; the others go on.
        bool failed = false;
        ErrorCode code = ErrorCode::Io;
        std::string message;
    };
    std::vector<Ended> step();

    int active() const;             // sequences added and not yet ended
    int capacity() const;           // the most sequences at once (openForBatch's `sequences` when states fit)
    bool sessionInUse() const;
    // Sequences that gave their state up for an older one's growth so far (each read its
    // tokens again afterwards).
    int64_t preemptions() const;
    // Generated tokens a step reads at most (one per decoding sequence); prompt pieces come
    // on top (ModelImpl::passTokens, or kPromptPieceWhileDecoding while others decode).
    static int chunkTokens();

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

} // namespace waste
