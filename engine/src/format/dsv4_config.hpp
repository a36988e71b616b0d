// The switches of DeepSeek V4 Flash (`deepseek_v4`, arch "deepseek-v4"), read from its own
// config.json keys (docs/architectures/deepseek-v4-flash.md): one shared key=value head with
// a sliding window and time-compressed KV rows per layer (compress_ratios; an indexer on the
// ratio-4 layers), the grouped output projection, two RoPE tables (plain on window-only
// layers, YaRN-blended frequencies on compressed ones), the hyper-connection streams, the
// sqrt-softplus router with its hash-routed first layers and the clamped SwiGLU.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace waste::format {

struct ModelConfig;

struct Dsv4Config {
    bool on = false;
    int headDim = 0;     // the one key=value head (head_dim; 512 on Flash)
    int ropeDim = 0;     // its last ropeDim dims turn (qk_rope_head_dim)
    int oGroups = 0, oLora = 0; // grouped output projection
    int window = 0;      // sliding_window: the raw rows a token sees, itself included
    std::vector<int> ratios; // per layer: 0 window only, 4 (with indexer), or another ratio
    int indexHeads = 0, indexDim = 0, indexTopk = 0;
    double ropeTheta = 10000.0, compressTheta = 10000.0;
    // YaRN on the compressed layers: frequencies blended only (no magnitude factor).
    double yarnFactor = 1.0, yarnOrig = 0.0, betaFast = 32.0, betaSlow = 1.0;
    int hashLayers = 0;  // num_hash_layers: the first layers route by token id (tid2eid)
    float swigluLimit = 0.0f;
    int hcMult = 1, hcIters = 1;
    float hcEps = 1e-6f;
    // The rounding the release was trained with (model.py, ds4): the key/value rows through
    // FP8 and the indexer's queries and keys through a Hadamard transform and FP4. Off, the
    // engine computes in plain float as HF's DeepseekV4 does; an open option, not a config key.
    bool trainedRounding = false;

    int ratio(int layer) const { return ratios[size_t(layer)]; }
    bool indexed(int layer) const { return ratio(layer) == 4; }  // model.py: an indexer iff ratio 4
    bool overlapped(int layer) const { return ratio(layer) == 4; } // two-block windows iff ratio 4
    // Compressed rows a context of ctx positions can hold on `layer` (0: window only).
    int64_t rowsFor(int layer, int64_t ctx) const { return ratio(layer) > 0 ? ctx / ratio(layer) : 0; }
    // Floats one compressed row takes: the main row, and the indexer's key on indexed layers.
    int64_t rowWidth(int layer) const { return ratio(layer) > 0 ? headDim + (indexed(layer) ? indexDim : 0) : 0; }
    // Floats of a compressor's streaming state: keys and gates of c·ratio tokens, c·dim wide.
    static int64_t compressorState(int ratio, int dim)
    {
        const int c = ratio == 4 ? 2 : 1;
        return ratio > 0 ? 2 * int64_t(c) * ratio * c * dim : 0;
    }
    // Floats of a layer's recurrent state: the window ring and the compressors' states.
    int64_t recurrentFloats(int layer) const
    {
        return int64_t(window) * headDim + compressorState(ratio(layer), headDim) +
               (indexed(layer) ? compressorState(4, indexDim) : 0);
    }
};

// True for configArch's name of this family.
inline bool isDsv4Family(const std::string &arch) { return arch == "deepseek-v4"; }

// Throws Error(Unsupported) where c cannot run with trainedRounding (the indexer's Hadamard
// transform needs index_head_dim a power of two); nothing for other families.
void checkTrainedRounding(const ModelConfig &c);

// Fills c (experts, heads, q_lora, norms, routing) and c.v4 from a deepseek_v4 config: the
// release's own keys, or the ones HF's DeepseekV4Config saves (layer_types, compress_rates,
// mlp_layer_types, rope_parameters {main, compress}, partial_rotary_factor); HF's defaults
// for keys left out.
// Throws Error(Format) naming the key at fault, Error(Unsupported) for what the engine
// does not compute (another scoring_func, several shared experts).
void readDsv4Config(const nlohmann::json &cfg, ModelConfig &c, const std::string &where);

} // namespace waste::format
