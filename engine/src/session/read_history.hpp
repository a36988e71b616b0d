// What a session's state has read, position by position, and copies of its recurrent part
// at message boundaries (checkpoints), so that a new prompt is read only past the longest
// prefix the state, or one of its checkpoints, already holds.
//
// Why a checkpoint needs only the recurrent part: the MLA latent cache is indexed by
// position, and reading on from p never rewrites a row before p, so the rows of a
// checkpoint at p are the live ones as long as the live state still starts with the same
// p tokens. KDA matrices and conv rings are overwritten by every token, hence the copy.
// Cutting back to a checkpoint drops every checkpoint past it (its rows are about to be
// overwritten); resetting drops them all.
#pragma once

#include "model/state.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace waste::session {

// Stands for a position that holds an image row: it matches no prompt token.
inline constexpr int32_t kUnmatchable = -1;

struct Checkpoint {
    int pos = 0;
    std::vector<model::LayerState> recurrent; // per layer: S, conv rings, sliding-window KV rings; latent stays empty
    std::vector<float> logits;                // after the token at pos - 1
};

class ReadHistory {
public:
    // capacity: how many checkpoints are kept (the oldest goes first); 0 keeps none.
    void setCapacity(int capacity) { m_capacity = capacity; }
    int capacity() const { return m_capacity; }

    void clear();
    // `tokens` were just read at the positions after the previous ones; a token equal to
    // `mediaToken` (>= 0) is an image row there and is recorded as kUnmatchable.
    void append(std::span<const int32_t> tokens, int32_t mediaToken);
    // Keeps a copy of the recurrent part of `s` at s.pos. A checkpoint already kept at s.pos
    // is left as it is: every checkpoint holds the state after the first `pos` tokens read,
    // and the live state at that position read the same tokens (a changed token before it
    // drops the checkpoint), so a copy would rewrite the same bytes (0.43 GiB on the full
    // K3, once per answer). A state with no logits yet (position 0) has nothing worth keeping.
    void mark(const model::State &s);
    // How many times mark() copied a state (for tests and figures).
    int64_t copies() const { return m_copies; }

    // How many leading tokens of `prompt` the session can keep: all the live state holds
    // when the prompt extends it, else the position of the latest checkpoint inside the
    // common prefix, or, when the state is only rows by position (positionalOnly), the
    // common prefix short of the prompt's last token if that is more; else 0. Never more
    // than the prompt, and equal to it only when the logits at that point are known (they
    // come with the state or the checkpoint).
    int reusable(std::span<const int32_t> prompt, const model::State &s) const;
    // The same, and puts `s` there: cut back to the checkpoint or the shared prefix (or
    // reset for 0).
    int reuse(std::span<const int32_t> prompt, model::State &s);

    // Whether every layer of `s` keeps only rows indexed by position (global attention: MLA
    // latents and DSA keys, GQA keys and values), which reading on never rewrites before
    // its position: such a state can be cut back to any position it read. Recurrent layers
    // (KDA, Gated DeltaNet, DeepSeek V4's compressors) and sliding-window rings cannot.
    static bool positionalOnly(const model::State &s);

    const std::vector<int32_t> &tokens() const { return m_tokens; }
    const std::vector<Checkpoint> &checkpoints() const { return m_checkpoints; }
    // A state file's history and checkpoints (validated by the reader against the state).
    void assign(std::vector<int32_t> tokens, std::vector<Checkpoint> checkpoints);

private:
    size_t commonPrefix(std::span<const int32_t> prompt) const;
    // Where a positional-only state can be cut for `prompt` (0: nowhere).
    int cutPoint(std::span<const int32_t> prompt, const model::State &s) const;
    // Index of the checkpoint the prompt's reuse goes back to, or -1.
    int checkpointFor(std::span<const int32_t> prompt) const;

    int m_capacity = 1;
    std::vector<int32_t> m_tokens;          // one per position read, in order
    std::vector<Checkpoint> m_checkpoints;  // in the order marked
    int64_t m_copies = 0;
};

} // namespace waste::session
