#include "model/state.hpp"

#include <algorithm>
#include <utility>

namespace waste::model {

namespace {

// The float counts of layer L's state at `ctxTokens` positions: the one rule for allocate
// and bytesFor.
struct LayerSizes {
    size_t S = 0, conv = 0, convRings = 0; // convRings: 1 (Gated DeltaNet's one ring) or 3 (KDA's q, k, v)
    size_t latent = 0, kv = 0;            // kv: keys, and as many values
    size_t indexKeys = 0;                 // DSA: the indexer's keys (layers that run one)
    bool kvRing = false;
};

LayerSizes layerSizes(const format::ModelConfig &c, int L, int ctxTokens)
{
    LayerSizes z;
    if (c.v4.on) {
        // DeepSeek V4: the window ring and the compressors' streaming state are recurrent (S);
        // the compressed rows (and the indexer's keys beside them) grow with the context.
        z.S = size_t(c.v4.recurrentFloats(L));
        z.latent = size_t(c.v4.rowsFor(L, ctxTokens) * c.v4.rowWidth(L));
    } else if (c.g.next && c.isKda[static_cast<size_t>(L)]) {
        // Gated DeltaNet: a key dim × value dim matrix per value head, and one ring for
        // the q, k and v channels the convolution runs over together (in convQ).
        z.S = size_t(c.g.linValueHeads) * size_t(c.g.linKeyDim) * size_t(c.g.linValueDim);
        z.conv = size_t(c.g.linConvWidth()) * size_t(std::max(c.convK - 1, 0));
        z.convRings = 1;
    } else if (c.g.on) {
        z.kv = size_t(c.g.slots(L, ctxTokens)) * size_t(c.g.kvHeads) * size_t(c.g.headDim);
        z.kvRing = c.g.window > 0 && c.g.sliding[size_t(L)];
    } else if (c.isKda[static_cast<size_t>(L)]) {
        const size_t C = size_t(c.kdaHeads) * size_t(c.kdaDim);
        z.S = size_t(c.kdaHeads) * size_t(c.kdaDim) * size_t(c.kdaDim);
        z.conv = C * size_t(std::max(c.convK - 1, 0));
        z.convRings = 3;
    } else {
        z.latent = size_t(ctxTokens) * size_t(c.kvLora + c.qkRope);
        if (c.dsa.on && !c.dsa.sharedLayer(L))
            z.indexKeys = size_t(ctxTokens) * size_t(c.dsa.headDim);
    }
    return z;
}

} // namespace

size_t latentFloatsAt(const format::ModelConfig &c, int L, int pos)
{
    if (c.v4.on)
        return size_t(c.v4.rowsFor(L, pos) * c.v4.rowWidth(L));
    return size_t(pos) * size_t(c.kvLora + c.qkRope);
}

void State::allocate(const format::ModelConfig &c, int ctxTokens)
{
    ctx = ctxTokens;
    layers.assign(static_cast<size_t>(c.layers), {});
    for (int L = 0; L < c.layers; ++L) {
        LayerState &s = layers[static_cast<size_t>(L)];
        const LayerSizes z = layerSizes(c, L, ctxTokens);
        s.S.assign(z.S, 0.0f);
        s.convQ.assign(z.convRings >= 1 ? z.conv : 0, 0.0f);
        s.convK.assign(z.convRings == 3 ? z.conv : 0, 0.0f);
        s.convV.assign(z.convRings == 3 ? z.conv : 0, 0.0f);
        s.latent.assign(z.latent, 0.0f);
        s.indexKeys.assign(z.indexKeys, 0.0f);
        s.keys.assign(z.kv, 0.0f);
        s.values.assign(z.kv, 0.0f);
        s.kvRing = z.kvRing;
    }
    pos = 0;
    lastLogits.clear();
}

void State::grow(const format::ModelConfig &c, int ctxTokens)
{
    if (ctxTokens <= ctx)
        return;
    for (int L = 0; L < c.layers; ++L) {
        LayerState &s = layers[static_cast<size_t>(L)];
        const LayerSizes z = layerSizes(c, L, ctxTokens);
        // Only the per-position buffers depend on the positions; the recurrent ones keep their size.
        const std::pair<std::vector<float> *, size_t> perPosition[] = {
            {&s.latent, z.latent}, {&s.indexKeys, z.indexKeys}, {&s.keys, z.kv}, {&s.values, z.kv}};
        for (const auto &[v, want] : perPosition) {
            if (v->size() < want) {
                std::vector<float> bigger(want, 0.0f);
                std::copy(v->begin(), v->end(), bigger.begin());
                v->swap(bigger);
            }
        }
    }
    ctx = ctxTokens;
}

int64_t State::bytesFor(const format::ModelConfig &c, int ctxTokens)
{
    int64_t n = 0;
    for (int L = 0; L < c.layers; ++L) {
        const LayerSizes z = layerSizes(c, L, ctxTokens);
        n += int64_t(z.S + z.conv * z.convRings + z.latent + z.indexKeys + 2 * z.kv) * 4;
    }
    return n;
}

void State::reset()
{
    for (LayerState &s : layers) {
        std::fill(s.S.begin(), s.S.end(), 0.0f);
        std::fill(s.convQ.begin(), s.convQ.end(), 0.0f);
        std::fill(s.convK.begin(), s.convK.end(), 0.0f);
        std::fill(s.convV.begin(), s.convV.end(), 0.0f);
        std::fill(s.latent.begin(), s.latent.end(), 0.0f);
        std::fill(s.indexKeys.begin(), s.indexKeys.end(), 0.0f);
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
        n += int64_t(s.S.size() + s.convQ.size() + s.convK.size() + s.convV.size() + s.latent.size() + s.indexKeys.size() + s.keys.size() + s.values.size()) * 4;
    return n;
}

} // namespace waste::model
