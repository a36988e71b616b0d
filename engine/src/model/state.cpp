#include "model/state.hpp"

#include <algorithm>

namespace waste::model {

void State::allocate(const format::ModelConfig &c, int ctxTokens)
{
    ctx = ctxTokens;
    layers.assign(static_cast<size_t>(c.layers), {});
    for (int L = 0; L < c.layers; ++L) {
        LayerState &s = layers[static_cast<size_t>(L)];
        if (c.g.next && c.isKda[static_cast<size_t>(L)]) {
            // Gated DeltaNet: a key dim × value dim matrix per value head, and one ring for
            // the q, k and v channels the convolution runs over together (in convQ).
            s.S.assign(size_t(c.g.linValueHeads) * size_t(c.g.linKeyDim) * size_t(c.g.linValueDim), 0.0f);
            s.convQ.assign(size_t(c.g.linConvWidth()) * size_t(std::max(c.convK - 1, 0)), 0.0f);
        } else if (c.g.on) {
            const size_t kv = size_t(c.g.slots(L, ctxTokens)) * size_t(c.g.kvHeads) * size_t(c.g.headDim);
            s.keys.assign(kv, 0.0f);
            s.values.assign(kv, 0.0f);
            s.kvRing = c.g.window > 0 && c.g.sliding[size_t(L)];
        } else if (c.isKda[static_cast<size_t>(L)]) {
            const size_t C = size_t(c.kdaHeads) * size_t(c.kdaDim);
            s.S.assign(size_t(c.kdaHeads) * size_t(c.kdaDim) * size_t(c.kdaDim), 0.0f);
            const size_t ring = C * size_t(std::max(c.convK - 1, 0));
            s.convQ.assign(ring, 0.0f);
            s.convK.assign(ring, 0.0f);
            s.convV.assign(ring, 0.0f);
        } else {
            s.latent.assign(size_t(ctxTokens) * size_t(c.kvLora + c.qkRope), 0.0f);
        }
    }
    pos = 0;
    lastLogits.clear();
}

void State::reset()
{
    for (LayerState &s : layers) {
        std::fill(s.S.begin(), s.S.end(), 0.0f);
        std::fill(s.convQ.begin(), s.convQ.end(), 0.0f);
        std::fill(s.convK.begin(), s.convK.end(), 0.0f);
        std::fill(s.convV.begin(), s.convV.end(), 0.0f);
        std::fill(s.latent.begin(), s.latent.end(), 0.0f);
        std::fill(s.keys.begin(), s.keys.end(), 0.0f);
        std::fill(s.values.begin(), s.values.end(), 0.0f);
    }
    pos = 0;
    lastLogits.clear();
}

int64_t State::bytes() const
{
    int64_t n = 0;
    for (const LayerState &s : layers)
        n += int64_t(s.S.size() + s.convQ.size() + s.convK.size() + s.convV.size() + s.latent.size() + s.keys.size() + s.values.size()) * 4;
    return n;
}

} // namespace waste::model
