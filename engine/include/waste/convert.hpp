// libwaste converter API: Hugging Face safetensors -> streaming container (format v0),
// and the tiny-model generator used by tests, benchmarks and the app's demo model.
//
// A conversion is resumable per layer: rerunning with the same source, output folder
// and options continues after the last finished layer and produces the same bytes as an
// uninterrupted run. Nothing in the output folder looks finished (no manifest.json)
// until everything is. Errors are thrown as waste::Error with a one-line message.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace waste {

// How routed experts are stored.
//   Native: each expert's tensors exactly as the release stores them (MXFP4, FP8 with
//           128x128 block scales, INT4 in groups of 32, BF16): a repack, no re-encoding.
//   VQ3R:   3-stage residual vector codes with k-means codebooks (the reference engine's).
//   Q4:     INT4 in groups of 32 with bf16 scales encoded from the weights (no k-means).
//   Auto:   Native when the release's experts are already quantised, VQ3R otherwise.
enum class ExpertEncoding { Auto, Native, VQ3R, Q4 };

// "auto", "native", "vq3r", "q4" (the CLI's --experts values).
const char *expertEncodingName(ExpertEncoding e);

struct ConvertOptions {
    int jobs = 0;            // worker threads (k-means, expert encoding); 0: one per core
    int trunkBits = 4;       // 4: Q4G trunk (Q8G embed/head); 8: everything Q8G; 16: the source's
                             // precision (BF16/F16/F32; quantised trunk tensors decoded to F32)
    ExpertEncoding experts = ExpertEncoding::Auto;
    bool reclaim = false;    // delete each source shard once every tensor in it is converted
    uint64_t seed = 0x5741535445ull; // k-means seed; same seed, same bytes
    int codebookExperts = 12;        // experts sampled per layer to fit codebooks
    int codebookVectors = 300000;    // training vectors per (layer, matrix kind), at most
    int kmeansIterations = 10;
    bool checkFreeSpace = true;
    // Testing: after this many output bytes, writes fail as if the disk were full (-1: off).
    int64_t failAfterBytes = -1;
};

struct ConvertProgress {
    enum class Phase { Planning, Trunk, Codebooks, Experts, Finishing, Done };
    Phase phase = Phase::Planning;
    int unit = 0;              // 0: embeddings/head/globals, 1..layers: model layer unit-1
    int units = 0;
    int layer = -1;            // model layer being converted (-1 for the globals unit)
    std::string tensor;        // tensor or "experts 12/256"
    int64_t sourceBytesDone = 0;
    int64_t sourceBytesTotal = 0;
    int64_t outputBytes = 0;   // bytes written to the container so far (this run)
    double elapsedSeconds = 0;
    double etaSeconds = -1;    // -1: unknown yet
    bool resumed = false;      // this run continues an interrupted one
};

using ConvertProgressCallback = std::function<void(const ConvertProgress &)>;

// What a conversion will make, computed from headers only (the GUI shows it first).
struct ConvertPlan {
    std::string arch;
    int layers = 0;
    int moeLayers = 0;
    int experts = 0;
    int64_t sourceBytes = 0;
    int64_t outputBytes = 0;          // whole container
    int64_t remainingOutputBytes = 0; // still to write (less when resuming)
    int64_t freeBytes = 0;            // on the output filesystem
    int unitsTotal = 0;
    int unitsDone = 0;                // finished units found in the output folder
    bool alreadyComplete = false;     // the output folder already holds this conversion
    int64_t recordBytes = 0;          // one expert record
    std::string expertFormat;         // what the records hold: "VQ3R", "MXFP4", "FP8B128", "INT4G32", "BF16"
    std::string note;                 // what is read past, one line (Kimi K2.5's vision tower); empty: nothing
};

ConvertPlan planConversion(const std::string &sourceDir, const std::string &outDir, const ConvertOptions &options = {});

// This machine's speeds, measured, for a conversion's time estimate.
struct ConvertRates {
    double diskReadBytesPerSecond = 0;  // direct sequential reads of the source's largest shard
    double diskWriteBytesPerSecond = 0; // direct sequential writes where the container goes (0: not measured)
    bool diskDirect = false;            // false: the page cache answered, so the figure is RAM's
    double vqSearchesPerSecond = 0;     // VQ3R nearest-entry searches (one 8-wide vector, 256 entries), all jobs
    double q4WeightsPerSecond = 0;      // weights encoded into INT4 groups of 32, all jobs
    double crcBytesPerSecond = 0;       // record checksums, one thread (a repack's CPU work)
    int jobs = 1;
};

// Measures the rates above (about half a second): the disk's reads on the source's largest
// shard, its writes in outDir (64 MiB; left out when outDir is empty).
ConvertRates measureConvertRates(const std::string &sourceDir, int jobs = 0, const std::string &outDir = {});

// One way of storing a release's routed experts, with what it costs: the Convert page shows
// these side by side and the person chooses.
struct ExpertOption {
    ExpertEncoding encoding = ExpertEncoding::VQ3R; // Native, VQ3R or Q4
    bool available = true;      // false: the converter refuses it for this release (advice says why)
    bool isDefault = false;     // what the converter does when not told (--experts left out)
    bool discouraged = false;   // it runs, but loses quality for nothing (advice says why)
    std::string expertFormat;   // what its records hold: "MXFP4", "FP8B128", "INT4G32", "BF16", "VQ3R"
    int64_t recordBytes = 0;    // one expert record
    int64_t outputBytes = 0;    // the whole container
    int64_t bytesPerToken = 0;  // expert bytes one token reads with nothing cached: record x top-k x MoE layers
    int topK = 0;
    bool exact = false;         // the records hold the release's own bytes
    double weightError = 0;     // relative RMS error of the expert weights, as the converter's tests measure it
    std::string quality;        // one line: "exact: the release's own bytes" or the measured error and where
    std::string advice;         // one line: when to choose it, or why not
    double estimatedSeconds = -1; // at the rates given (-1: none given)
};

// Native, VQ3R and Q4 for the release in sourceDir (headers only, plus the rates' arithmetic).
// `options` gives the trunk bits and the k-means settings; its `experts` is ignored.
std::vector<ExpertOption> expertOptions(const std::string &sourceDir, const ConvertOptions &options = {},
                                        const ConvertRates *rates = nullptr);

struct ConvertResult {
    ConvertPlan plan;
    int unitsResumed = 0;     // units skipped because an earlier run finished them
    int64_t sourceBytesRead = 0; // source bytes converted by this run (resumed units not counted)
    double seconds = 0;
    int shardsReclaimed = 0;
};

// Converts sourceDir (config.json, *.safetensors [+ index], tiktoken.model,
// tokenizer_config.json) into the container folder outDir. `cancel`, when set,
// stops at the next expert or tensor with Error(Cancelled); the run can be resumed.
ConvertResult convertModel(const std::string &sourceDir, const std::string &outDir, const ConvertOptions &options = {},
                           const ConvertProgressCallback &progress = {}, const std::atomic<bool> *cancel = nullptr);

// The routed experts' layout in a tiny model's Hugging Face files, as releases ship them:
// BF16 tensors; MXFP4 `_packed`/`_scale` pairs (K3, gpt-oss); FP8 e4m3 with F32
// `_scale_inv` per 128x128 block (DeepSeek-V3, Kimi K2); INT4 `_packed` I32 words with
// BF16 `_scale` per 32 and `_shape` (compressed-tensors pack-quantized: K2-Thinking).
// Layouts whose scales a native record re-lays or cannot hold: FP8 with `_scale_inv` per
// 64x64 block (weight_block_size [64, 64]), compressed-tensors' float-quantized FP8 with
// an F32 `_scale` per row ("channel") or per tensor, and INT4 pack-quantized groups of 128.
enum class TinyExperts { Default, BF16, MXFP4, FP8B128, INT4G32, FP8B64, FP8Channel, FP8Tensor, INT4G128 };

// "default", "bf16", "mxfp4", "fp8b128", "int4g32", "fp8b64", "fp8-channel", "fp8-tensor",
// "int4g128" (the CLI's --experts-layout values).
const char *tinyExpertsName(TinyExperts e);

struct TinyModelOptions {
    uint64_t seed = 1;
    bool vision = false;     // include a tiny vision tower (K3-style) and vision.json
    bool k3 = false;         // Kimi K3-shaped: every K3 text feature, MXFP4 routed experts in the HF layout
    // The release layout of another family: "deepseek-v3" or "kimi-k2" (FP8 trunk and
    // experts; Kimi K2 with experts INT4G32 has a BF16 trunk, as K2-Thinking), "qwen3-moe",
    // "qwen3-next", "gpt-oss" or "glm4-moe". Empty: Kimi-Linear, or K3 as k3 says.
    std::string arch;
    // gpt-oss ships its specials at the release's ids, so its vocabulary is the release's
    // 201088 rows; compactVocabulary puts the named specials right after the learned words
    // instead (about 1,000 rows), for tests of the architecture's arithmetic that read no text.
    bool compactVocabulary = false;
    // Which release's chat template a family with two ships: "deepseek-r1" or
    // "deepseek-v3.1" (deepseek-v3), "kimi-k2-thinking" or "kimi-k2-instruct" (kimi-k2).
    // Empty: the first of each.
    std::string chatTemplate;
    TinyExperts experts = TinyExperts::Default; // Default: MXFP4 on K3, BF16 on Kimi-Linear
    // Qwen3-MoE: layers (0-based) that run a dense MLP instead of experts, written to
    // config.json as mlp_only_layers (the family's definition allows any).
    std::vector<int> mlpOnlyLayers;
    // GLM-4.5 (arch "glm4-moe"): GLM-4.5-Air's switches instead of GLM-4.5's (use_qk_norm false,
    // routed_scaling_factor 1.0).
    bool glmAir = false;
    int64_t targetBytes = 0; // 0: the tiny default; else scale the model to about this many source bytes
    // The text of a Kimi-Linear release's config.json: the model takes its exact shape (every
    // width, layer schedule, expert count, vocabulary rows) with generated weights, to
    // measure at real size (`waste mktiny --like`). Its tokenizer stays the tiny one.
    std::string likeConfig;
    int jobs = 0;
    int trunkBits = 4;       // for makeTinyContainer
    ExpertEncoding expertEncoding = ExpertEncoding::Auto; // for makeTinyContainer
};

// Writes a Kimi-Linear-shaped model (Kimi K3-shaped with options.k3) in the Hugging Face
// layout: config.json, sharded model-0000x-of-0000y.safetensors +
// model.safetensors.index.json, tiktoken.model, tokenizer_config.json. Deterministic
// from the seed. Routed experts are written in options.experts' layout (K3's by default
// as MXFP4 `_packed`/`_scale` pairs).
void makeTinyHf(const std::string &outDir, const TinyModelOptions &options = {});

// Writes the same model straight into a container; byte-identical to makeTinyHf
// followed by convertModel with the same seed, expert layout and encoding, and trunk bits.
void makeTinyContainer(const std::string &outDir, const TinyModelOptions &options = {},
                       const ConvertProgressCallback &progress = {}, const std::atomic<bool> *cancel = nullptr);

} // namespace waste
