// waste::Model for WASTE v0 containers: opens and validates the container, owns the
// forward pass, the session state, the tokenizer and the generation loop.
#pragma once

#include "cache/streamed_expert_source.hpp"
#include "compute/thread_pool.hpp"
#include "format/codebooks.hpp"
#include "format/manifest.hpp"
#include "format/trunk.hpp"
#include "model/expert_source.hpp"
#include "model/forward.hpp"
#include "model/state.hpp"
#include "model/vision_runtime.hpp"
#include "model/weights.hpp"
#include "session/read_history.hpp"
#include "waste/batch.hpp"
#include "waste/prefix.hpp"
#include "text/tokenizer.hpp"
#include "waste/waste.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>

namespace waste::session {

class ModelImpl final : public Model {
public:
    // sequences: how many a Batch may decode at once (waste/batch.hpp openForBatch); the
    // states beyond the first come out of the expert cache, as far as it can spare them.
    ModelImpl(const std::string &path, const OpenOptions &options, int sequences = 1);

    const ModelInfo &info() const override { return m_info; }
    MemoryPlan memoryPlan() const override { return m_plan; }
    std::vector<int32_t> tokenize(std::string_view text, bool markup) const override;
    std::string detokenize(std::span<const int32_t> ids) const override;
    std::string tokenText(int32_t id) const override;
    bool isSpecialToken(int32_t id) const override;
    using Model::replyParser; // the overload for declared tools (model_impl.cpp)
    std::unique_ptr<ReplyParser> replyParser(std::span<const int32_t> prompt) const override;
    std::vector<float> eval(std::span<const int32_t> tokens, const PrefillCallback &progress) override;
    GenResult generate(std::span<const int32_t> prompt, const GenParams &params, const TokenCallback &onToken,
                       const PrefillCallback &progress) override;
    int addImage(const std::string &path) override;
    void clearImages() override;
    std::string pendingImageMarkup() const override;
    int position() const override { return m_state.pos; }
    void resetState() override;
    void saveState(const std::string &path) const override;
    void loadState(const std::string &path) override;
    Stats stats() const override;
    void saveUsage() override;
    void cancel() override { m_cancel.store(true); }

    // Prefix reuse (waste/prefix.hpp).
    void markCheckpoint() { m_read.mark(m_state); }
    int reusablePrefix(std::span<const int32_t> prompt) const { return m_read.reusable(prompt, m_state); }
    int reusePrefix(std::span<const int32_t> prompt) { return m_read.reuse(prompt, m_state); }
    const std::vector<int32_t> &readTokens() const { return m_read.tokens(); }
    int checkpointPosition() const { return m_read.checkpoints().empty() ? 0 : m_read.checkpoints().back().pos; }
    void saveState(const std::string &path, SavedParts parts) const;

    // The container's tokenizer; Error(Unsupported) when it ships none.
    const text::Tokenizer &tokenizer() const;

    // Engine internals for tests and tools.
    const format::Manifest &manifest() const { return m_manifest; }
    const std::vector<float> &lastLogits() const { return m_state.lastLogits; }
    int64_t checkpointCopies() const { return m_read.copies(); }
    compute::ThreadPool &computePool() { return *m_pool; }

    // What a Batch (session/batch.cpp) drives beside the session, on the same thread.
    model::Forward &forward() { return *m_forward; }
    model::ExpertSource &experts() { return *m_experts; }
    model::State &sessionState() { return m_state; }
    ReadHistory &readHistory() { return m_read; }
    const text::Tokenizer &tokenizerForBatch() const { return tokenizer(); }
    // Counts a batch's work in stats(): positions read, tokens sampled, seconds spent.
    void countBatch(int64_t prefilled, int64_t generated, double seconds)
    {
        m_stats.tokensPrefilled += prefilled;
        m_stats.tokensGenerated += generated;
        m_seconds += seconds;
    }
    // Full-context states the budget holds: the session's and sequences() − 1 more.
    int sequences() const { return m_sequences; }
    // Sequences a Batch may run at once: beyond sequences() when they need less than a full
    // context each; their states are sized to the positions they can reach and together fit
    // statePoolBytes() (BatchShare::state_room: the floor's prompt room first, then the cache).
    int mostSequences() const { return m_mostSequences; }
    int64_t statePoolBytes() const { return m_statePool; }
    // The bytes of the states a Batch holds now, out of statePoolBytes(): what they hold of
    // the floor's prompt room is not a pass's while they live.
    int64_t statesHeld() const { return m_statesHeld; }
    void setStatesHeld(int64_t bytes) { m_statesHeld = bytes; }
    // Narrows the room for batch states to at most `bytes` before a Batch is made: for tests
    // that need it to run out at a tiny model's sizes, whose floor's prompt room alone holds
    // dozens of its states.
    void limitStateRoom(int64_t bytes)
    {
        m_statePool = std::min(m_statePool, std::max<int64_t>(0, bytes));
        m_statePromptShare = std::min(m_statePromptShare, m_statePool);
    }
    // Tests: the pieces of a prompt's passes at most `tokens` long (model::Forward::setPassPiece),
    // however much room the budget leaves.
    void limitPassPiece(int tokens) { m_mostPiece = tokens; }
    // The most prompt tokens one pass reads (the budget's room for a pass's activations).
    int passTokens() const { return m_passTokens; }
    // Lends the expert cache's RAM to passes of up to `tokens` prompt tokens (plan/pass_plan.hpp)
    // and returns how many a pass may read (at least 64); returnPassRoom() gives it back.
    int borrowForPass(int tokens);
    // After borrowForPass: lends more of the cache, where what is left of its lendable room
    // holds MLA's expanded keys and values for `positions` positions, so that long passes
    // attend in that form (model/mla_form.hpp); otherwise they stay absorbed.
    void borrowForExpandedAttention(int64_t positions);
    // The expert cache's slots a prompt never borrows: twice the cache's smallest size
    // (expertCacheAt's lendable room), for the pass's own expert reads.
    int64_t slotsKept() const;
    void returnPassRoom();
    // The most prompt tokens a pass reads without borrowing (in the floor's own room; >= 64).
    int unborrowedPassTokens() const;
    // The floor's prompt room (MemoryPlan::pass_floor_bytes) less what batch states hold of it:
    // a pass's, once roomToPass() has taken it back from the expert cache.
    int64_t promptRoom() const;
    // While tokens are generated and no pass runs, the expert cache holds the prompt room that
    // batch states leave (cache::StreamOptions::roomSlots): more records in flight and kept.
    // roomToCache() gives it that room (as batch states grow and shrink, it follows them);
    // roomToPass() takes all of it back, before a pass; roomForStates(bytes) takes back what
    // `bytes` more of batch states are about to use of it, before they are allocated.
    void roomToCache() { fitRoom(0, true); }
    void roomToPass();
    void roomForStates(int64_t bytes) { fitRoom(bytes, false); }
    int32_t mediaToken() const { return m_vision ? int32_t(m_vision->config().mediaTokenId) : -1; }

private:
    // The prompt room's slots in the cache toward what batch states (held, and `moreStates`
    // about to be) leave of it: fewer at once, more only when `grow`.
    void fitRoom(int64_t moreStates, bool grow);
    // A prompt, in passes of m_passTokens; or one generated token (Forward::Tokens).
    void feed(std::span<const int32_t> tokens, const PrefillCallback &progress,
              model::Forward::Tokens kind = model::Forward::Tokens::Prompt);
    // Expands each media token into its image's positions (vision/vision_placement.hpp).
    std::vector<int32_t> placeImages(std::span<const int32_t> tokens) const;
    bool holdsPlaceholder(std::span<const int32_t> tokens) const; // an image placeholder among them

    std::string m_dir;
    OpenOptions m_opts;
    format::Manifest m_manifest;
    std::unique_ptr<format::Trunk> m_trunk;
    format::Codebooks m_books;
    model::Weights m_weights;
    std::unique_ptr<model::ExpertSource> m_experts;
    cache::StreamedExpertSource *m_stream = nullptr; // m_experts when the container has routed experts
    std::vector<std::string> m_warnings;
    std::unique_ptr<compute::ThreadPool> m_pool; // decode threads (OpenOptions::threads)
    std::unique_ptr<model::Forward> m_forward;
    model::State m_state;
    ReadHistory m_read; // what m_state read, and its checkpoints
    std::unique_ptr<vision::VisionRuntime> m_vision; // created by the first addImage
    std::optional<text::Tokenizer> m_tokenizer;
    ModelInfo m_info;
    MemoryPlan m_plan;
    Stats m_stats;
    double m_seconds = 0;
    int m_sequences = 1;      // full-context states the budget holds
    int m_mostSequences = 1;  // sequences a Batch may run at once
    int64_t m_unusedCacheBytes = 0; // the budget's expert cache bytes beyond its slots (more than every record)
    int64_t m_statePool = 0;  // bytes for the states beyond the session's
    int64_t m_statePromptShare = 0; // of them, what the floor's prompt room lends
    int64_t m_statesHeld = 0; // held by a Batch now (setStatesHeld)
    int m_passTokens = model::Forward::kMaxChunk; // prompt tokens a pass reads at most
    int m_mostPiece = model::Forward::kPassPiece;  // limitPassPiece
    std::atomic<bool> m_cancel{false};
};

} // namespace waste::session
