// Mixture-of-experts layer over a chunk of tokens: sigmoid router, score-correction bias
// for selection only, top-k (ties to the lowest id; group-limited on DeepSeek-V3), then
// renormalisation, routed scaling (DeepSeek-V3 and GLM-4.5 alike), routed experts through lookup tables (VQ records) or
// the release's own encoding row by row (native records, moe_native.cpp), shared expert.
// Each expert record is fetched once per chunk; every token's sum is still formed in
// its own selection order, so a chunk equals the same tokens one at a time.
#include "format/expert_record.hpp"
#include "model/forward.hpp"
#include "model/grouped_router.hpp"
#include "model/hash_router.hpp"
#include "model/ops.hpp"
#include "model/softmax_router.hpp"
#include "quant/trunk_matvec.hpp"
#include "waste/waste.hpp"

#include <algorithm>
#include <map>

namespace waste::model {

void Forward::route(int layer, int n, const float *b, int *chosen, float *weight, int first)
{
    const MoeWeights &w = m_w.layers[static_cast<size_t>(layer)].moeW;
    const int64_t Hd = m_c.hidden, E = m_c.experts, K = m_c.topK;
    Vec logits(static_cast<size_t>(n * E));
    product(*w.router, n, b, Hd, logits.data(), E);
    const float *bias = w.bias ? w.bias->f32.data() : nullptr;
    const TensorPtr &hash = m_w.layers[static_cast<size_t>(layer)].v4.tid2eid;
    if (m_c.v4.on && hash && !m_tokens)
        throw Error(ErrorCode::Argument, "a hash-routed layer needs the chunk's token ids (Forward::setTokenIds)");
    // Each token's choice is its own: the tokens are split over the pool.
    m_pool.forRange(n, m_pool.grainFor(n, 8 * E), [&](int64_t t0, int64_t t1) {
        Vec key(static_cast<size_t>(E));
        for (int64_t t = t0; t < t1; ++t) {
            float *r = logits.data() + t * E;
            if (m_c.v4.on) { // DeepSeek V4: sqrt(softplus) scores, by hash on the first layers (hash_router.cpp)
                const float *row = hash ? hash->f32.data() + int64_t(m_tokens[first + t]) * K : nullptr;
                routeSqrtSoftplus(r, E, K, bias, row, m_c.routedScale, chosen + t * K, weight + t * K);
                continue;
            }
            if (m_c.g.on && !m_c.g.sigmoidRouter) { // Qwen3-MoE, gpt-oss: softmax routers (softmax_router.cpp)
                for (int64_t e = 0; w.routerBias && e < E; ++e)
                    r[e] += w.routerBias->f32[size_t(e)];
                routeSoftmax(m_c, r, chosen + t * K, weight + t * K);
                continue;
            }
            sigmoidRun(r, r, E);
            for (int64_t e = 0; e < E; ++e)
                key[size_t(e)] = r[e] + (bias ? bias[e] : 0.0f);
            selectExperts(key.data(), E, K, m_c.groups, m_c.topkGroups, chosen + t * K);
            float sum = 0.0f;
            for (int64_t j = 0; j < K; ++j) {
                weight[t * K + j] = r[chosen[t * K + j]];
                sum += weight[t * K + j];
            }
            for (int64_t j = 0; j < K; ++j) {
                float &wj = weight[t * K + j];
                if (m_c.renormalize && K > 1)
                    wj = wj / (sum + 1e-20f);
                wj = wj * m_c.routedScale;
            }
        }
    });
}

void Forward::moe(int layer, int n, const float *b, float *out, ExpertSource &experts)
{
    const MoeWeights &w = m_w.layers[static_cast<size_t>(layer)].moeW;
    const int64_t Hd = m_c.hidden, K = m_c.topK, Im = m_c.moeInter;
    const int64_t W = m_c.expertWidth();
    const int S = m_manifest.quant.stages;
    const bool vq4p = m_manifest.quant.indexBits == 6;

    // Routing per token (the router's rows read once for the whole chunk).
    std::vector<int> chosen(static_cast<size_t>(n * K));
    std::vector<float> weight(static_cast<size_t>(n * K));
    route(layer, n, b, chosen.data(), weight.data());

    // Expert input: the hidden state, or its latent projection (K3).
    Vec xin(static_cast<size_t>(n * W));
    if (w.latentDown)
        product(*w.latentDown, n, b, Hd, xin.data(), W);
    else
        for (int t = 0; t < n; ++t)
            std::copy(b + t * Hd, b + t * Hd + W, xin.data() + t * W);

    // Unique experts of the chunk, in first-use order, with their (token, slot) users.
    std::vector<int> ids;
    std::map<int, std::vector<int64_t>> users;
    for (int64_t i = 0; i < n * K; ++i) {
        auto &u = users[chosen[i]];
        if (u.empty())
            ids.push_back(chosen[i]);
        u.push_back(i);
    }

    Vec ys(static_cast<size_t>(n * K * W));
    if (static_cast<int>(m_gateLut.size()) < n) {
        m_gateLut.resize(static_cast<size_t>(n));
        m_upLut.resize(static_cast<size_t>(n));
    }
    m_g.resize(static_cast<size_t>(Im));
    m_u.resize(static_cast<size_t>(Im));
    // One user (token, slot) of an expert record: gate and up through the token's tables,
    // the activation, the down table of that activation and its apply into the slot's row.
    auto runUser = [&](const format::ExpertHeader &h, const uint8_t *rec, int64_t slot, float *g, float *u,
                       quant::Lut &down) {
        const int t = static_cast<int>(slot / K);
        const uint8_t *sc = rec + h.scaleOff;
        const int64_t cb = h.codebookId;
        // Gate and up in one split: 2 Im output rows, blocks of 64 of either matrix.
        const int64_t blocks = (Im + format::kIndexBlockRows - 1) / format::kIndexBlockRows;
        m_pool.forRange(2 * blocks, m_pool.grainFor(2 * blocks, format::kIndexBlockRows * W / 8 * S / 2),
                        [&](int64_t b0, int64_t b1) {
                            for (int64_t b = b0; b < b1; ++b) {
                                const bool up = b >= blocks;
                                const int64_t r0 = (up ? b - blocks : b) * format::kIndexBlockRows;
                                const quant::Lut &lut = up ? m_upLut[t] : m_gateLut[t];
                                const uint8_t *ix = rec + (up ? h.upOff : h.gateOff);
                                const uint8_t *rs = sc + (up ? 2 * Im : 0);
                                quant::applyLutRows(lut, vq4p, ix, rs, r0, std::min(Im, r0 + format::kIndexBlockRows),
                                                    up ? u : g);
                            }
                        });
        addExpertBias(layer, h.expertId, g, u); // gpt-oss only
        activate(g, u, g, Im);
        quant::buildLut(down, g, Im, m_books, cb + 2 * S, S, vq4p, &m_pool);
        float *y = ys.data() + slot * W;
        if (vq4p)
            quant::applyLut4p(down, rec + h.downOff, sc + 4 * Im, W, y, &m_pool);
        else
            quant::applyLut8(down, rec + h.downOff, sc + 4 * Im, W, y, &m_pool);
        addDownBias(layer, h.expertId, y);
    };
    const int64_t userWork = 3 * Im * W / 8 * S / 2; // one user's three applies: ~0.5 ns per index byte
    // Gate/up tables: once per token and layer, from the books of the first record consumed.
    // Those books are the layer's (the converter gives a layer one codebook base), so a
    // decode step builds them from the id the layer's records carried last time while its
    // misses load, and rebuilds only if the first record says otherwise.
    int64_t lutCb = -1;   // books the tables hold now
    bool lutsChecked = false;
    auto buildLuts = [&](int64_t cb) {
        m_pool.forRange(n, m_pool.grainFor(n, W / 8 * S * 256), [&](int64_t t0, int64_t t1) {
            for (int64_t t = t0; t < t1; ++t) {
                quant::buildLut(m_gateLut[t], xin.data() + t * W, W, m_books, cb, S, vq4p, &m_pool);
                quant::buildLut(m_upLut[t], xin.data() + t * W, W, m_books, cb + S, S, vq4p, &m_pool);
            }
        });
        lutCb = cb;
    };
    if (m_layerCodebook.size() < static_cast<size_t>(m_c.layers))
        m_layerCodebook.assign(static_cast<size_t>(m_c.layers), -1);
    int64_t &layerCb = m_layerCodebook[static_cast<size_t>(layer)];
    // The shared expert needs only the layer's input, so it is computed while the misses
    // load, instead of after the last routed record (for every token of the chunk: a step
    // of several sequences waits on their reads as one token does); it is summed in below
    // exactly as before, so the logits do not change. The next layer's router lookahead
    // runs right after it (it uses the shared expert's output), still while this layer's
    // reads are in flight, so its own reads overlap this layer's expert compute (decode
    // steps only, of one sequence or several: the run loop sets m_lookaheadRows).
    const int64_t Ms = m_c.g.sharedInter > 0 ? m_c.g.sharedInter : Im * (m_c.sharedExperts > 1 ? m_c.sharedExperts : 1);
    Vec shared(static_cast<size_t>(n * Hd), 0.0f); // Qwen3-MoE and gpt-oss have no shared expert: it stays 0
    bool sharedDone = false;
    ExpertSource::Hook whileReading = [&] {
        if (w.shared.gate)
            sharedExpert(w, n, b, shared.data(), Ms);
        sharedDone = true;
        if (m_lookaheadRows == n)
            lookahead(layer, n, shared.data(), experts); // before the tables: its reads queue sooner
        if (layerCb >= 0 && !lutsChecked) // (a full cache may have made it consume a record first)
            buildLuts(layerCb);
    };
    // Records of the VQ path handed over together, and their users. A user's result does
    // not depend on which thread runs it or how its rows are split (the pool's rule), so
    // the split is free to follow the work: whole users over the threads while there are
    // enough to go round (a decode step of several sequences, or a prefill chunk: one
    // wake-up for many records), the rest one at a time with their rows split.
    auto consumeVq = [&](std::span<const size_t> idx, std::span<const uint8_t *const> recs) {
        struct User {
            size_t record;
            int64_t slot;
        };
        std::vector<User> us;
        std::vector<format::ExpertHeader> headers(idx.size());
        for (size_t k = 0; k < idx.size(); ++k) {
            headers[k] = format::parseExpertHeader(recs[k]);
            for (int64_t slot : users[ids[idx[k]]])
                us.push_back({k, slot});
        }
        if (!lutsChecked) {
            const int64_t cb = headers[0].codebookId;
            if (lutCb != cb)
                buildLuts(cb);
            layerCb = cb;
            lutsChecked = true;
        }
        const int64_t nu = static_cast<int64_t>(us.size());
        const int64_t threads = m_pool.threads();
        const int64_t whole = nu >= threads ? nu - nu % threads : 0;
        if (whole > 1)
            m_pool.forRange(whole, m_pool.grainFor(whole, userWork), [&](int64_t u0, int64_t u1) {
                Vec g(static_cast<size_t>(Im)), u(static_cast<size_t>(Im));
                quant::Lut down;
                for (int64_t i = u0; i < u1; ++i) {
                    const User &user = us[size_t(i)];
                    runUser(headers[user.record], recs[user.record], user.slot, g.data(), u.data(), down);
                }
            });
        for (int64_t i = whole > 1 ? whole : 0; i < nu; ++i) { // the applies split their rows over the threads
            const User &user = us[size_t(i)];
            runUser(headers[user.record], recs[user.record], user.slot, m_g.data(), m_u.data(), m_downLut);
        }
    };
    experts.fetchBatches(layer, ids, [&](std::span<const size_t> idx, std::span<const uint8_t *const> recs) {
        if (!m_manifest.quant.isNative()) {
            consumeVq(idx, recs);
            return;
        }
        // The release's own encoding: every user of every record handed over, at once.
        std::vector<NativeJob> jobs;
        for (size_t k = 0; k < idx.size(); ++k)
            for (int64_t slot : users[ids[idx[k]]])
                jobs.push_back({recs[k], ids[idx[k]], xin.data() + (slot / K) * W, ys.data() + slot * W});
        nativeExperts(jobs, layer);
    }, whileReading);

    if (!sharedDone && w.shared.gate) // a source that never calls the hook
        sharedExpert(w, n, b, shared.data(), Ms);
    // Each token's routed sum in its selection order, then the layer's output.
    Vec acc(static_cast<size_t>(n * W), 0.0f);
    for (int t = 0; t < n; ++t) {
        float *a = acc.data() + t * W;
        for (int64_t j = 0; j < K; ++j) {
            const float wj = weight[t * K + j];
            const float *y = ys.data() + (t * K + j) * W;
            for (int64_t i = 0; i < W; ++i)
                a[i] += wj * y[i];
        }
    }
    finishMoe(layer, n, acc.data(), shared.data(), out);
}

// (K3) the latent norm and up-projection of the routed sums, for the whole chunk in one
// pass over its rows, then the shared expert added.
void Forward::finishMoe(int layer, int n, float *acc, const float *shared, float *out)
{
    const MoeWeights &w = m_w.layers[static_cast<size_t>(layer)].moeW;
    const int64_t Hd = m_c.hidden, W = m_c.expertWidth();
    for (int t = 0; t < n; ++t) {
        float *a = acc + t * W;
        if (w.latentUp && w.latentNorm)
            rmsNorm(a, w.latentNorm->f32.data(), a, W, m_c.eps);
        else if (!w.latentUp)
            std::copy(a, a + W, out + t * Hd);
    }
    if (w.latentUp)
        product(*w.latentUp, n, acc, W, out, Hd);
    for (int64_t i = 0; i < n * Hd; ++i)
        out[i] += shared[static_cast<size_t>(i)];
}

} // namespace waste::model
