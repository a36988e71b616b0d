// Reading a prompt, predicted from a container's geometry and this machine's calibration
// (waste/calibration.hpp, estimatePrefill): the matrix FLOPs of the passes at the panel
// product's calibrated speed, and each part of a pass that is no product (the experts' panel
// decoding, linear and blocked attention, the work per token around the products) at its own
// calibrated speed, against the expert reads the passes make.
#include "model/mla_form.hpp"
#include "plan/plan_inputs.hpp"

#include <waste/calibration.hpp>
#include <waste/waste.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace waste {

namespace {

// DeepSeek V4's attention over a prompt of n tokens: per layer, each token's heads attend over
// its window (the last `window` positions) and the compressed rows it sees (one per `ratio`
// positions; on ratio-4 layers the indexer's index_topk once there are more, the indexer then
// scoring every row with its heads), keys and values the same D floats.
struct Dsv4Attention {
    double headRows = 0;     // (head, row) pairs attended, every layer and token
    double indexerFlops = 0; // the indexer's scoring
};
Dsv4Attention dsv4Attention(const plan::PlanInputs &in, int64_t n)
{
    Dsv4Attention a;
    const format::Dsv4Config &v = in.v4;
    if (in.v4Layers <= 0 || v.ratios.empty())
        return a;
    for (int64_t L = 0; L < in.v4Layers; ++L) {
        const int r = v.ratio(int(L));
        double rows = 0, scored = 0;
        for (int64_t t = 0; t < n; ++t) {
            const int64_t compressed = r > 0 ? (t + 1) / r : 0;
            const bool indexes = v.indexed(int(L)) && compressed > v.indexTopk;
            rows += double(std::min<int64_t>(t + 1, v.window)) + double(indexes ? v.indexTopk : compressed);
            scored += indexes ? double(compressed) : 0.0;
        }
        a.headRows += double(in.heads) * rows;
        a.indexerFlops += 2.0 * double(v.indexHeads) * double(v.indexDim) * scored;
    }
    return a;
}

} // namespace

PrefillEstimate estimatePrefill(const std::string &containerPath, const ComputeCalibration &c, int tokens,
                                int passTokens, double diskGBps, int64_t expandRoomBytes)
{
    const plan::PlanInputs in = plan::readPlanInputs(containerPath);
    PrefillEstimate e;
    e.tokens = std::max(tokens, 1);
    e.passTokens = std::clamp(passTokens, 1, e.tokens);
    e.passes = (e.tokens + e.passTokens - 1) / e.passTokens;
    const double n = e.tokens;

    // Matrix weights each token multiplies: the trunk's (lm_head read once per pass, not per
    // token) and top-k routed experts of every MoE layer.
    const double head = double(in.vocab) * double(in.hidden);
    const double trunk = std::max(0.0, double(in.trunkMatrixElements) - head);
    const double experts = double(in.moeLayers) * double(in.topK) * 3.0 * double(in.moeInter) *
                           double(in.expertWidth > 0 ? in.expertWidth : in.hidden);
    double flops = 2.0 * (trunk + experts) * n + 2.0 * head * e.passes;
    // Causal attention: q·k and p·v for every earlier position (a window's on sliding layers).
    // MLA attends in its latent space (kv_lora_rank + rope dims, then kv_lora_rank).
    const int64_t gqaFull = in.gqaLayers - in.gqaSlidingLayers;
    const int64_t mla = in.gqaLayers > 0 ? 0 : std::max<int64_t>(0, in.layers - in.kdaLayers - in.v4Layers);
    const double pairs = n * (n + 1) / 2;
    // DeepSeek Sparse Attention: a query past index_topk keys attends only to its selection,
    // and each layer that runs an indexer scores every earlier key of such a query, per head.
    const double K = double(in.indexTopk), kPairs = K * (K + 1) / 2;
    const double attended = K > 0 && n > K ? kPairs + (n - K) * K : pairs;
    struct Scores {
        double layers, dk, dv, pairs; // per layer and head: score width, value width, (query, key) pairs
    };
    // MLA's passes attend in the expanded form where it pays (model/mla_form.hpp: every pass
    // re-expands the positions before it, FLOPs at the matrices' speed; its own positions'
    // kv_b products take the place of its queries' in the trunk's), the absorbed otherwise
    // and under DeepSeek Sparse Attention. The engine lends the room for every position's rows
    // once, as the prompt starts (session::ModelImpl::borrowForExpandedAttention): where the
    // budget's room does not hold them, every pass stays absorbed.
    double absorbedPairs = attended, expandedPairs = 0;
    if (mla > 0 && K <= 0 && in.kvLora > 0) {
        const model::MlaDims d{double(in.qkNope), double(in.qkRope), double(in.vHead), double(in.kvLora)};
        if (model::mlaExpandedPays(d, 0, std::min<double>(e.passTokens, n)))
            e.mlaExpandBytes = model::mlaExpandedRowBytes(e.tokens, in.heads, in.qkNope, in.qkRope, in.vHead);
        const bool roomHolds = expandRoomBytes < 0 || e.mlaExpandBytes <= expandRoomBytes;
        absorbedPairs = 0;
        for (int p = 0; p < e.passes; ++p) {
            const double first = double(p) * e.passTokens, m = std::min<double>(e.passTokens, n - first);
            if (roomHolds && model::mlaExpandedPays(d, first, m)) {
                expandedPairs += model::mlaPairs(first, m);
                flops += 2.0 * d.lora * (d.nope + d.v) * double(in.heads) * double(mla) * first;
            } else {
                absorbedPairs += model::mlaPairs(first, m);
            }
        }
    }
    const Scores dense[] = {
        {double(mla), double(in.kvLora + in.qkRope), double(in.kvLora), absorbedPairs},
        {double(mla), double(in.qkNope + in.qkRope), double(in.vHead), expandedPairs},
        {double(gqaFull), double(in.headDim), double(in.headDim), pairs},
        {in.window > 0 ? double(in.gqaSlidingLayers) : 0.0, double(in.headDim), double(in.headDim),
         n * std::min<double>(double(in.window), n)},
    };
    // With the blocked attention timed (its online softmax costs as much as the products on
    // narrow heads), each pair at its measured speed; otherwise its FLOPs with the matrices'.
    const bool timed = c.secondsFor("ATTN-score", 144) > 0;
    for (const Scores &d : dense) {
        if (d.layers <= 0 || d.pairs <= 0)
            continue;
        if (timed)
            e.attentionSeconds += d.layers * double(in.heads) * d.pairs * c.secondsFor("ATTN-score", int64_t(d.dk + d.dv));
        else
            flops += 2.0 * d.layers * double(in.heads) * (d.dk + d.dv) * d.pairs;
    }
    if (K > 0 && n > K)
        flops += 2.0 * double(in.indexLayers) * double(in.indexHeads) * double(in.indexHeadDim) * (pairs - kPairs);
    // DeepSeek V4: each token's heads over the rows it sees, keys and values D wide.
    const Dsv4Attention v4 = dsv4Attention(in, e.tokens);
    flops += v4.indexerFlops;
    if (timed)
        e.attentionSeconds += v4.headRows * c.secondsFor("ATTN-score", 2 * in.v4.headDim);
    else
        flops += 2.0 * 2.0 * double(in.v4.headDim) * v4.headRows;

    // The panel product's calibrated speed at a pass-sized call.
    const int64_t probe = int64_t(2) * 1024 * 64 * 512 * 16;
    const double s = c.secondsFor("PANEL", probe);
    if (s <= 0)
        return e;
    e.known = true;
    e.computeSeconds = flops / (double(probe) / s) / kPassEfficiency + e.attentionSeconds;

    // The share of the banks a pass's tokens route to under uniform routing: read once and
    // decoded into panels once per pass.
    const double touched = in.experts > 0 && in.topK > 0
                               ? 1.0 - std::pow(1.0 - double(in.topK) / double(in.experts), double(e.passTokens))
                               : 0.0;
    const int64_t expertWeights = 3 * in.moeInter * (in.expertWidth > 0 ? in.expertWidth : in.hidden);
    const double decodeOne =
        in.expertPanels.empty() || expertWeights <= 0 ? -1 : c.secondsFor(in.expertPanels, expertWeights);
    if (decodeOne > 0) {
        e.panelDecodeSeconds = double(e.passes) * touched * double(in.moeLayers) * double(in.experts) * decodeOne;
        e.computeSeconds += e.panelDecodeSeconds;
    }

    // Per token and layer, the work around the products (norms, residuals, routing, the
    // expert users' gathers and sums), in calibrated hidden-wide vector passes (a fitted count).
    if (const double perToken = c.secondsFor("VEC-token", in.hidden); perToken > 0) {
        e.vectorSeconds = n * double(in.layers) * kTokenVectorWork * perToken;
        e.computeSeconds += e.vectorSeconds;
    }

    // Linear attention reads the prompt token by token in every pass (its recurrence and the
    // gates' transcendentals are no matrix product): per token, layer and head at the
    // calibrated "KDA-token" speed for the head's width.
    if (in.kdaLayers > 0 && in.kdaHeads > 0 && in.kdaDim > 0) {
        const double perHead = c.secondsFor("KDA-token", in.kdaDim);
        if (perHead > 0) {
            e.linearAttentionSeconds = n * double(in.kdaLayers) * double(in.kdaHeads) * perHead;
            e.computeSeconds += e.linearAttentionSeconds;
        }
    }

    if (diskGBps > 0)
        e.readSeconds = double(e.passes) * double(in.expertBytesTotal) * touched / (diskGBps * 1e9);
    e.seconds = std::max(e.computeSeconds, e.readSeconds);
    e.tokPerS = e.seconds > 0 ? n / e.seconds : 0;
    return e;
}

} // namespace waste
