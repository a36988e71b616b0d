// libwaste's prefix reuse across chat turns: a session knows the tokens its state has read
// and keeps a checkpoint (a copy of the state at the start of the last answer), so a new
// turn reads only what is not already there, with the logits a fresh read of the whole
// prompt gives. These are functions on a waste::Model (waste.hpp) rather than members so
// that the header every file includes stays as it is.
//
// What a checkpoint holds: recurrent layers (KDA matrices and conv rings) copied, the MLA
// latent cache kept by length (its rows before a position never change while the session
// reads on), and the logits there. generate() marks one once its prompt is read, at the
// start of the answer; a session keeps one (the newest) when the budget has room for it
// beside the smallest expert cache, taken from the expert cache at open (checkpointBytes).
// A session that goes back before a checkpoint drops it; resetState() drops all; a saved
// state (Model::saveState) holds what was read and the checkpoint, so a reopened chat
// continues like the one in memory.
#pragma once

#include "waste/waste.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace waste {

// Keeps a checkpoint at the session's position (replacing the one kept).
void markCheckpoint(Model &model);

// How many leading tokens of `prompt` (images unexpanded) need not be read again: all the
// state read when the prompt extends it, else the checkpoint's position when it lies within
// the prefix the prompt shares with what was read; for a model whose state is only rows by
// position (global attention only: DeepSeek-V3 / V3.2, Kimi K2, GLM, Qwen3-MoE), the shared
// prefix short of the prompt's last token when that is more; else 0. A position that holds an image
// row matches nothing. The result equals the prompt's length only when the logits there are
// known; generate() with an empty prompt, or eval() of nothing, then continues from them.
// Changes nothing.
int reusablePrefix(const Model &model, std::span<const int32_t> prompt);

// The same, and puts the session there (back to the checkpoint or the shared prefix, or
// reset for 0): feed prompt[n:] next.
int reusePrefix(Model &model, std::span<const int32_t> prompt);

// What the state has read, one token per position (an image row as -1).
std::vector<int32_t> readTokens(const Model &model);

// Position of the checkpoint kept (0: none).
int checkpointPosition(const Model &model);

// What a saved state holds. Model::saveState writes Everything (the live state and the
// checkpoint); when the next turn needs only one of them (the format keeps the last answer
// as written: the live state; it rewrites it: the state at the checkpoint), writing that
// one saves the other's bytes: 0.43 GiB on the full K3.
enum class SavedParts {
    Everything,
    LiveState,  // the live state and what it read, no checkpoint
    Checkpoint, // the state as it was at the checkpoint (a plain state there); the live state without one
};
void saveState(const Model &model, const std::string &path, SavedParts parts);

// Bytes of one checkpoint of the container's model at a context of `ctxTokens`: its
// recurrent state (sliding-window K/V rings included) and one row of logits (read from the
// manifest, like planMemory). An open model counts it in its budget.
int64_t checkpointBytes(const std::string &containerPath, int ctxTokens = 4096);

} // namespace waste
