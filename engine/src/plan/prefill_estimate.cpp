// Reading a prompt, predicted from a container's geometry and this machine's calibration
// (waste/calibration.hpp, estimatePrefill): the matrix FLOPs of the passes at the panel
// product's calibrated speed, against the expert reads the passes make.
#include "plan/plan_inputs.hpp"

#include <waste/calibration.hpp>
#include <waste/waste.hpp>

#include <algorithm>
#include <cmath>

namespace waste {

namespace {

// DeepSeek V4's attention over a prompt of n tokens: per layer, each token's heads attend over
// its window (the last `window` positions) and the compressed rows it sees (one per `ratio`
// positions; on ratio-4 layers the indexer's index_topk once there are more, the indexer then
// scoring every row with its heads), keys and values the same D floats.
double dsv4AttentionFlops(const plan::PlanInputs &in, int64_t n)
{
    const format::Dsv4Config &v = in.v4;
    if (in.v4Layers <= 0 || v.ratios.empty())
        return 0;
    double flops = 0;
    for (int64_t L = 0; L < in.v4Layers; ++L) {
        const int r = v.ratio(int(L));
        double rows = 0, scored = 0;
        for (int64_t t = 0; t < n; ++t) {
            const int64_t compressed = r > 0 ? (t + 1) / r : 0;
            const bool indexes = v.indexed(int(L)) && compressed > v.indexTopk;
            rows += double(std::min<int64_t>(t + 1, v.window)) + double(indexes ? v.indexTopk : compressed);
            scored += indexes ? double(compressed) : 0.0;
        }
        flops += 2.0 * double(in.heads) * 2.0 * double(v.headDim) * rows;
        flops += 2.0 * double(v.indexHeads) * double(v.indexDim) * scored;
    }
    return flops;
}

} // namespace

PrefillEstimate estimatePrefill(const std::string &containerPath, const ComputeCalibration &c, int tokens,
                                int passTokens, double diskGBps)
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
    flops += 2.0 * double(mla) * double(in.heads) * double(2 * in.kvLora + in.qkRope) * attended;
    if (K > 0 && n > K)
        flops += 2.0 * double(in.indexLayers) * double(in.indexHeads) * double(in.indexHeadDim) * (pairs - kPairs);
    flops += 2.0 * double(gqaFull) * double(in.heads) * 2.0 * double(in.headDim) * pairs;
    flops += dsv4AttentionFlops(in, e.tokens);
    if (in.window > 0)
        flops += 2.0 * double(in.gqaSlidingLayers) * double(in.heads) * 2.0 * double(in.headDim) * n *
                 std::min<double>(double(in.window), n);

    // The panel product's calibrated speed at a pass-sized call.
    const int64_t probe = int64_t(2) * 1024 * 64 * 512 * 16;
    const double s = c.secondsFor("PANEL", probe);
    if (s <= 0)
        return e;
    e.known = true;
    e.computeSeconds = flops / (double(probe) / s) / kPassEfficiency;

    if (diskGBps > 0 && in.experts > 0 && in.topK > 0) {
        const double touched = 1.0 - std::pow(1.0 - double(in.topK) / double(in.experts), double(e.passTokens));
        e.readSeconds = double(e.passes) * double(in.expertBytesTotal) * touched / (diskGBps * 1e9);
    }
    e.seconds = std::max(e.computeSeconds, e.readSeconds);
    e.tokPerS = e.seconds > 0 ? n / e.seconds : 0;
    return e;
}

} // namespace waste
