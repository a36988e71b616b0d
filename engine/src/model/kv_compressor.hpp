// DeepSeek V4's KV compressor, streaming: every `ratio` tokens become one cached row, each
// channel a softmax-gated sum of those tokens' keys (gates = wgate u + ape[pos mod ratio]).
// At ratio 4 the windows overlap: a row also pools the previous block through the first half
// of the projections' channels, the current block through the second half (model.py
// Compressor; the previous block of block 0 is empty). The state holds the keys and gates of
// c·ratio tokens, c·dim wide (c = 2 when overlapping): the current block, and before it the
// previous one where they overlap.
#pragma once

#include <cstdint>

namespace waste::model {

struct CompressorState {
    float *keys = nullptr, *gates = nullptr; // each c·ratio rows of c·dim
    int ratio = 0, dim = 0;
    bool overlap() const { return ratio == 4; }
    int width() const { return overlap() ? 2 * dim : dim; }
};

// Takes the token at `pos` (k, g: width() floats each; ape: the compressor's [ratio, width]
// table). When it completes a block, writes the pooled row (dim floats, before its norm,
// rotation and round trip) to `row` and returns true.
bool compressorStep(CompressorState s, const float *k, const float *g, const float *ape, int64_t pos, float *row);

} // namespace waste::model
