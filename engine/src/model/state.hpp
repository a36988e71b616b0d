// The recurrent / cached state of one session: KDA matrices and conv rings, the MLA
// latent cache, the position, and the logits of the last evaluated token.
#pragma once

#include "format/manifest.hpp"

#include <cstdint>
#include <vector>

namespace waste::model {

struct LayerState {
    // DeepSeek V4 keeps its window ring and compressor states in S and its compressed rows in
    // latent (State::allocate).
    std::vector<float> S;                   // KDA: heads × D × D (row = key dim); Gated DeltaNet: value heads × Dk × Dv
    std::vector<float> convQ, convK, convV; // KDA: C × (Kc−1), oldest first; Gated DeltaNet: q, k, v channels all in convQ
    std::vector<float> latent;              // MLA: ctx × (dc + dr)
    std::vector<float> indexKeys;           // DSA: ctx × index_head_dim (the indexer's normed, rotated keys)
    std::vector<float> keys, values;        // GQA: slots × kv heads × head dim (a ring of `window` slots when sliding)
    bool kvRing = false;                    // keys/values are a ring: recurrent, so checkpoints copy them
};

// The floats of layer L's latent that hold the first `pos` positions (MLA rows; DeepSeek V4's
// compressed rows those positions completed): what a saved state keeps of it.
size_t latentFloatsAt(const format::ModelConfig &c, int L, int pos);

struct State {
    int pos = 0;
    int ctx = 0;
    std::vector<LayerState> layers;
    std::vector<float> lastLogits; // after the last evaluated token (empty at pos 0)

    void allocate(const format::ModelConfig &c, int ctxTokens);
    // What allocate(c, ctxTokens) holds, without allocating: a batch sizes a sequence's state
    // to the positions it can reach and admits it when that fits (waste/batch.hpp).
    static int64_t bytesFor(const format::ModelConfig &c, int ctxTokens);
    // Makes room for more positions (ctxTokens > ctx), keeping everything read so far: the
    // per-position buffers are position-major, and a sliding layer's ring has not wrapped
    // while pos < ctx ≤ window, so each keeps its prefix. One layer's buffer is copied at a
    // time (std::vector growth), never a second whole state.
    void grow(const format::ModelConfig &c, int ctxTokens);
    void reset();
    int64_t bytes() const;
};

} // namespace waste::model
