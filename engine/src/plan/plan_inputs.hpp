// The numbers the RAM planner needs, read from a container's manifest alone.
//
// The manifest is read by format/manifest's parser (the loader's checks), then taken as
// the reference's waste_plan_memory takes it, so that `plan --json` agrees with the
// reference byte for byte: trunk sizes from the entries' `bytes` fields, the record size
// from the first bank (the lowest layer), a missing intermediate_size as
// moe_intermediate_size, at least one shared expert.
#pragma once

#include "format/dsv4_config.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace waste::plan {

// One kind of work a decoded token does, for the compute estimate: a calibrated kernel
// (waste/calibration.hpp names), the size of one call in that kernel's units, calls per
// token, whether it runs while the layer's expert reads are in flight, and whether it is
// the routed experts themselves (each computed as its record lands; plan/read_overlap).
struct TokenCall {
    std::string kernel;
    int64_t size = 0;
    int64_t count = 0;
    bool overlapsReads = false;
    bool routedExperts = false;
};

struct PlanInputs {
    // config (planner defaults in comments)
    int64_t layers = 0;         // num_hidden_layers
    int64_t hidden = 0;         // hidden_size
    int64_t heads = 0;          // num_attention_heads
    int64_t kvLora = 0;         // kv_lora_rank (dc)
    int64_t qkRope = 0;         // qk_rope_head_dim (dr)
    int64_t qkNope = 0;         // qk_nope_head_dim (dn)
    int64_t vHead = 0;          // v_head_dim (dv)
    // DeepSeek Sparse Attention: the layers that run a lightning indexer (their keys are
    // state, index_head_dim f32 a token), its heads, width and top-k (0: none).
    int64_t indexLayers = 0, indexHeads = 0, indexHeadDim = 0, indexTopk = 0;
    int64_t kdaHeads = 0;       // linear_attn_config.num_heads
    int64_t kdaDim = 0;         // linear_attn_config.head_dim
    int64_t convKernel = 4;     // linear_attn_config.short_conv_kernel_size
    int64_t kdaLayers = 0;      // layers linear_attn_config.kda_layers names
    int64_t moeInter = 0;       // moe_intermediate_size
    int64_t inter = 0;          // intermediate_size [moeInter]
    int64_t vocab = 0;          // vocab_size
    int64_t expertWidth = 0;    // routed_expert_hidden_size [hidden]
    int64_t sharedExperts = 1;  // max(num_shared_experts [1], 1)
    int64_t attnResBlock = 0;   // attn_res_block_size
    int64_t experts = 0;        // num_experts
    int64_t topK = 8;           // num_experts_per_token (required by the parser when there are experts)
    // GQA families (Qwen3-MoE, gpt-oss): f32 keys and values per layer, a window's worth on sliding layers.
    int64_t gqaLayers = 0, gqaSlidingLayers = 0, kvHeads = 0, headDim = 0, window = 0;
    // Qwen3-Next's Gated DeltaNet layers (counted in kdaLayers): one layer's f32 state and
    // conv ring; 0 means KDA's, from kdaHeads and kdaDim.
    int64_t linearStateBytes = 0;
    // DeepSeek V4: its layers' state (model/state.cpp): per layer the f32 window ring and
    // compressor states (fixed), and compressed rows of rowFloats per `ratio` positions (the
    // indexer's keys beside them on ratio-4 layers); hcMult residual streams per token.
    int64_t v4Layers = 0, v4FixedStateBytes = 0, hcMult = 0;
    format::Dsv4Config v4; // its switches, for the attention a prompt's tokens do
    struct RowLayer {
        int64_t ratio = 0, rowFloats = 0;
    };
    std::vector<RowLayer> v4RowLayers;
    // expert_quant
    int64_t stages = 3, vecDim = 8, entries = 256;
    // sizes
    int64_t trunkBytes = 0;        // resident trunk (quantized embed_tokens stays on disk)
    int64_t visionWeightBytes = 0; // tensors outside a non-empty tensor_prefix
    int64_t recordBytes = 0;       // first bank's bytes / experts
    int64_t maxRecordBytes = 0;    // largest record of any bank (the cache slot size)
    int64_t moeLayers = 0;         // banks in the manifest
    int64_t expertBytesTotal = 0;  // all banks
    bool generatedWeights = false; // config's waste_generated_weights (waste mktiny): a random router
    std::string firstBankPath;     // the first bank's file
    // The banks whose records are the first bank's size, for the disk probe: it reads them
    // all, as the engine does, so that no one file's cached copy (a VM host's, a drive's)
    // makes the disk look faster than the engine will find it.
    std::vector<std::string> probeBankPaths;
    std::vector<TokenCall> perToken; // what one decoded token computes
    // The calibration's decoder of the routed experts' records into panels, which a prompt's
    // pass runs once per expert it uses: "VQ-panels" (VQ3R), "VQ2R-panels", "VQ4P-panels",
    // "<native format>-panels"; empty where the manifest does not say.
    std::string expertPanels;
    int64_t trunkMatrixElements = 0; // weights of the trunk matrices a token multiplies (lm_head included)
    // vision.json (defaults if absent); textHidden 0 = config hidden_size
    int64_t vtHidden = 1024, vtQkv = 1536, vtInter = 4096, posH = 64, posW = 64, maxPatches = 1024, textHidden = 0;
};

// Throws waste::Error(Format/Io) naming manifest.json on missing or malformed input.
PlanInputs readPlanInputs(const std::string &containerPath);

// DeepSeek V4's state terms (v4Layers .. v4RowLayers) from its config, as State::allocate sizes them.
void addDsv4State(PlanInputs &in, const format::Dsv4Config &v, int layers);

// Bytes small enough to stay in the CPU's caches from one token to the next (a laptop's
// last-level cache is 8-64 MiB): all of a model's routed experts, or what one token touches.
inline constexpr int64_t kCpuCachedBytes = int64_t(32) << 20;

// The per-token work that follows from the geometry alone: the linear-attention state
// update, and per MoE layer the two layer tables and top-k routed experts of `expertKernel`
// ("VQ-expert" or "<native format>-expert") whose calls are `expertCallSize` units. Called
// after the trunk's work (addTrunkWork): when the token then touches more than
// kCpuCachedBytes, its trunk matrices are priced cold (kColdSuffix).
void addLayerWork(PlanInputs &in, const std::string &expertKernel, int64_t expertCallSize);
// The trunk matrix `name` of stored format `fmt` and `bytes`, used once per token.
void addTrunkWork(PlanInputs &in, const std::string &name, const std::string &fmt, int64_t bytes,
                  const std::vector<int64_t> &shape);

} // namespace waste::plan
