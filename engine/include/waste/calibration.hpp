// This machine's compute speed, measured, for the planner's tokens/s.
//
// A short run of the engine's own kernels (trunk matvecs per stored format, the VQ lookup
// table build and a whole routed expert) on the engine's thread pool, at a few sizes, so
// that a model's time per token can be read off from what each token touches. The result
// is kept in a file (the caller names it: the CLI and the app use the user's cache folder)
// and reused while the machine is the same; `waste plan --calibrate` and the Planner page
// run it again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace waste {

// One measured call: `kernel` over `size` units took `seconds` (the mean over repeats).
// Units: bytes of stored weights for trunk formats ("F32", "Q8G", "Q4G", "Q3G", "F16",
// "BF16"), input width for "LUT" (one table build), index bytes for "VQ-expert" (gate,
// up, activation, down table and down of one routed expert), record bytes for the native
// "<format>-expert". Expert kernels and trunk rows are timed twice: on one record or matrix
// used over and over (in the CPU's caches, as a tiny model's stay), and with kColdSuffix on
// ones taken in turn from more than a cache holds, as a real model's routed experts arrive
// and as its trunk comes round again once a token has touched more than the caches hold.
inline constexpr const char *kColdSuffix = "-cold";
struct KernelTiming {
    std::string kernel;
    int64_t size = 0;
    double seconds = 0;
};

// The largest decode scale kept: a measurement past it says the machine was busy, not
// what a token costs.
inline constexpr double kMaxDecodeScale = 4;
// The smallest: a token faster than its kernels' sum says the kernels were timed slow (the
// prediction is the scale model's measured token times the two models' kernel ratio, so the
// scale corrects that), but not by more than half.
inline constexpr double kMinDecodeScale = 0.5;

struct ComputeCalibration {
    std::string machine;   // what the figures belong to: CPU, SIMD level, compute threads
    int threads = 0;       // compute threads measured with (the engine's default: 0 = all)
    double seconds = 0;    // how long the run took
    std::vector<KernelTiming> timings;
    // A decoded token's compute over the sum of its calibrated kernels, measured by decoding
    // a generated model of hidden width 512: a token runs the same kernels between
    // attention, norms, routing and sampling, with the pool's threads waking for every call,
    // and on a 2-core AMD EPYC VM took 1.1-1.4 times the sum. Estimates are
    // multiplied by it.
    double decodeScale = 1;  // kMinDecodeScale..kMaxDecodeScale
    // Small models pay fixed costs around their kernels (the pool's wake-ups, norms,
    // sampling) that weigh less at width 512: the demo's shape (hidden 256, 4 layers) is
    // decoded too, and a model whose kernels sum to less than the scale model's is priced on
    // the line through the two models' (kernel sum, measured token) points (scaleFor).
    // Seconds; 0 when not measured, and then decodeScale prices every model.
    double smallKernelSeconds = 0, smallTokenSeconds = 0, scaleKernelSeconds = 0;
    // Why the decode could not be measured (the tiny model could not be made or run), when
    // decodeScale is 1 for that reason rather than measured; empty when it was measured.
    std::string decodeScaleError;

    // Seconds for one call of `kernel` over `size` units: linear between the measured sizes,
    // the end segments' slopes beyond them. -1 when the kernel was not measured.
    double secondsFor(const std::string &kernel, int64_t size) const;
    // The factor a token whose kernels sum to `kernelSeconds` takes over that sum:
    // decodeScale from the scale model's sum up, the small-model line below it.
    double scaleFor(double kernelSeconds) const;
};

// The key a cached calibration must carry to be reused on this machine.
std::string calibrationMachineKey(int threads);
// Runs the kernels, then decodes two generated models for the decode scale (measureDecode;
// about 9 s in all on two cores). threads 0: one per hardware thread, as the engine.
ComputeCalibration calibrateCompute(int threads = 0);
// The decode scale alone: a generated tiny model decoded and priced with `kernels`. 1 when
// the model cannot be made or run (the kernels then price a token unscaled), with the
// reason in *why (left empty when it was measured).
double measureDecodeScale(const ComputeCalibration &kernels, int threads = 0, std::string *why = nullptr);
// Everything of `c` a decode measures, from its kernel timings: the decode scale (with
// decodeScaleError) and, when that was measured, the demo shape's point for small models.
// calibrateCompute runs it after the kernels; a cached calibration whose scale fell back to 1
// runs it again.
void measureDecode(ComputeCalibration &c, int threads = 0);
std::string calibrationToJson(const ComputeCalibration &c);
// Throws Error(Format) on text that is not a calibration.
ComputeCalibration calibrationFromJson(const std::string &text);
// The calibration in `path` when it was made on this machine with these threads; otherwise
// (or with rerun) a fresh run, written back to `path` (its folder is created).
ComputeCalibration cachedCalibration(const std::string &path, bool rerun = false, int threads = 0);

// What one decoded token costs a container's kernels on a calibrated machine.
struct ComputeEstimate {
    double seconds = 0;        // all of it
    double overlapSeconds = 0; // the part that runs while expert reads are in flight
                               // (shared experts, the layer tables, routed experts)
    double routedExpertSeconds = 0; // of that, the routed experts (top-k per MoE layer)
    // seconds per kernel kind, for the forecast's explanation
    std::vector<std::pair<std::string, double>> byKernel;
};
// From the manifest: every resident trunk matrix once, per MoE layer the two layer tables
// and top-k routed experts of the bank's shape, the linear-attention state update.
ComputeEstimate estimateComputePerToken(const std::string &containerPath, const ComputeCalibration &c);

// Reading a prompt of `tokens` positions in passes of `passTokens` (BudgetChoice::pass_tokens)
// on a calibrated machine (forecast.prefill). Compute, each part at this machine's speed:
//   - 2 FLOPs per active matrix weight per token (the routed experts' top-k, the trunk's
//     matrices; lm_head once per pass) and the indexers' scoring, at the calibrated panel
//     product's speed times kPassEfficiency;
//   - each pass decoding the experts its tokens route to into panels once, at the panel
//     decoder's speed for the container's expert format ("VQ-panels", "<native format>-panels");
//   - a linear attention's recurrence, token by token ("KDA-token");
//   - dense causal attention (MLA, GQA, DeepSeek V4's rows) per (query, key) pair and head
//     ("ATTN-score", by score plus value width), or as FLOPs where the calibration has no such
//     timing;
//   - per token and layer kTokenVectorWork hidden-wide vector passes ("VEC-token": the work
//     around the products).
// A part the calibration has no timing for adds nothing (an older file measures again).
// Reads: each pass reads the experts its tokens route to, 1 - (1 - k/E)^T of the banks for T
// tokens under uniform routing, at diskGBps; the engine overlaps them with compute.
struct PrefillEstimate {
    int tokens = 0;
    int passTokens = 0;
    int passes = 0;
    double computeSeconds = 0;
    double panelDecodeSeconds = 0;     // of computeSeconds: the passes' expert panel decoding
    double linearAttentionSeconds = 0; // of computeSeconds: KDA / Gated DeltaNet token by token
    double attentionSeconds = 0;       // of computeSeconds: dense causal attention, where timed
    double vectorSeconds = 0;          // of computeSeconds: the elementwise work per token and layer
    double readSeconds = 0;
    double seconds = 0; // the larger of the two
    double tokPerS = 0;
    bool known = false; // false: the calibration has no panel product (run it again)
    // The room MLA's expanded form takes for every position of this prompt (model/mla_form.hpp);
    // 0 where no pass of it is long enough to expand. The passes were priced expanded only
    // where this fits expandRoomBytes.
    int64_t mlaExpandBytes = 0;
};
// Fitted together to bench_prefill (2 cores, AVX-512, 2026-12-06: the demo, the hidden-1024
// mid-size container and Kimi-Linear-48B's shape, 1,024 to 16,384 tokens, ten runs; every
// prediction within ±14 % of its run): the share of the panel product's calibrated speed a
// pass's matrix products reach, and what a pass spends per token and layer beyond the timed
// parts, in "VEC-token" units of the hidden width (its norms, routing, the expert users'
// gathers and weighted sums, and small matrices' products below the panel speed; on the demo
// model that is a third of a pass, on the real shape 5 %).
inline constexpr double kPassEfficiency = 0.78;
inline constexpr double kTokenVectorWork = 19;
// expandRoomBytes: what a budget leaves for MLA's expanded rows while a prompt is read
// (ExpertCacheShare::expand_room_bytes); below the rows the prompt needs, every pass is priced
// absorbed, as the engine then reads it. −1: room enough for any prompt.
PrefillEstimate estimatePrefill(const std::string &containerPath, const ComputeCalibration &c, int tokens,
                                int passTokens, double diskGBps, int64_t expandRoomBytes = -1);

} // namespace waste
