// The tiny models behind `waste mktiny`, with values generated from the seed on demand:
// Kimi-Linear-shaped (dense layer 0, KDA layers, an MLA layer, routed + shared experts)
// or, with TinyModelOptions::k3, Kimi K3-shaped: every K3 text feature (multimodal
// wrapper config and `language_model.` prefix, latent MoE, SiTU-GLU, bounded KDA decay
// gate, full-rank KDA output gate, MLA q_lora and output gate, Attention Residuals,
// 2 shared experts) and MXFP4 routed experts as the K3 release ships them. Either shape
// may carry its routed experts in another release layout (TinyModelOptions::experts).
#pragma once

#include "convert/model_source.hpp"
#include "convert/tiny_tokenizer.hpp"

#include <waste/convert.hpp>

#include <nlohmann/json.hpp>

#include <map>

namespace waste::convert {

struct TinyDims {
    int hidden = 256, layers = 4, firstDense = 1, inter = 512, moeInter = 128, experts = 8, topK = 2, shared = 1;
    int kdaHeads = 4, kdaHeadDim = 64, convKernel = 4;
    int mlaHeads = 4, qkNope = 32, qkRope = 16, vHead = 32, kvLora = 64;
    std::vector<int> kdaLayers{1, 2, 4}, fullAttnLayers{3}; // 1-based, as in Kimi-Linear's config
    bool vision = false;
    // Kimi K3 (0 / false on Kimi-Linear).
    bool k3 = false;
    int latent = 0, qLora = 0, attnResBlock = 0;
    float situBeta = 4.0f, situLinearBeta = 25.0f, gateLowerBound = -5.0f;
    DType expertDType = DType::BF16; // routed experts: BF16, MXFP4, FP8B128 or INT4G32
    std::string prefix; // "language_model." on K3
    // DeepSeek-V3 family (tiny_deepseek_model.cpp): Kimi K2 is the same with one group.
    bool deepseek = false, kimiK2 = false;
    int groups = 1, topkGroups = 1, mtpLayers = 0;
    DType trunkDType = DType::BF16; // FP8B128 for the FP8 releases
    // The lightning indexer's heads, width and top-k: DeepSeek Sparse Attention
    // (tiny_dsa_model.cpp; arch deepseek-v32 or glm-moe-dsa, with the layers that reuse a
    // selection on GLM-5.2) and DeepSeek V4's compressed layers.
    int indexHeads = 0, indexHeadDim = 0, indexTopk = 0;
    std::vector<bool> indexShared;
    // The GQA families (tiny_qwen3_model.cpp, tiny_gpt_oss_model.cpp); empty arch: Kimi.
    std::string arch;
    int kvHeads = 0, headDim = 0;
    bool tied = false;
    int window = 0; // gpt-oss: sliding window of the even layers
    // Qwen3-Next (tiny_qwen3_next_model.cpp): Gated DeltaNet key/value heads and widths,
    // the rotated dims of a full-attention head, the shared expert's width, the schedule.
    int linKeyHeads = 0, linValueHeads = 0, linKeyDim = 0, linValueDim = 0, rotaryDim = 0, sharedInter = 0;
    int fullAttentionInterval = 0;
    std::vector<int> mlpOnlyLayers; // Qwen3-MoE: dense layers (0-based)
    bool glmAir = false; // GLM-4.5-Air's switches (tiny_glm4_moe_model.cpp): no q/k norm, routed_scaling_factor 1
    int vtHidden = 32, vtHeads = 2, vtQkv = 32, vtInter = 64, vtLayers = 2, vtGrid = 8;
    int vocab = 0; // rows of the embedding and head when a release's shape asks for more than the tokenizer has
    // DeepSeek V4 (tiny_deepseek_v4_model.cpp): one key=value head per layer (headDim, qkRope of
    // it rotated), the window (`window`), compress ratios per layer (then the MTP block's), the grouped
    // output projection, the indexer, hash-routed first layers, hyper-connection streams.
    bool dsv4 = false;
    std::vector<int> compressRatios;
    int oGroups = 0, oLora = 0, hashLayers = 0, hcMult = 0;
};

// Kimi-Linear dims from a release's config.json (TinyModelOptions::likeConfig).
TinyDims tinyDimsLike(const std::string &configJson);

TinyDims tinyDimsFor(const TinyModelOptions &options);
TinyDims tinyDeepseekDims(const TinyModelOptions &options); // tiny_deepseek_model.cpp
TinyDims tinyQwen3NextDims(const TinyModelOptions &options); // tiny_qwen3_next_model.cpp
TinyDims tinyGlm4MoeDims(const TinyModelOptions &options);   // tiny_glm4_moe_model.cpp
TinyDims tinyDsaDims(const TinyModelOptions &options);       // tiny_dsa_model.cpp
TinyDims tinyQwen35MoeDims(const TinyModelOptions &options); // tiny_qwen3_5_moe_model.cpp
TinyDims tinyDsv4Dims(const TinyModelOptions &options);      // tiny_deepseek_v4_model.cpp

// The tiny routed experts' release layouts (tiny_expert_layouts.cpp): the logical dtype of
// a TinyExperts choice (`byDefault` for Default), a dtype's stored bytes per weight (for
// sizing a model) and the stored bytes of a [rows, cols] tensor of it.
DType tinyExpertDType(TinyExperts e, DType byDefault);
double tinyExpertBytesPerWeight(DType dtype);
// Stored bytes of a [rows, cols] tensor; t's blocks for FP8Scaled / INT4Grouped.
int64_t tinyStoredBytes(const SourceTensor &t);
// The scale blocks of a scaled layout for a [rows, cols] tensor (SourceTensor::blockRows/Cols).
void tinyExpertBlocks(TinyExperts e, int64_t rows, int64_t cols, int64_t &blockRows, int64_t &blockCols);

class TinySource : public ModelSource {
public:
    explicit TinySource(const TinyModelOptions &options);
    std::string configText() const override { return m_config; }
    std::optional<std::string> sideFile(const std::string &name) const override;
    std::vector<std::string> tensorNames() const override;
    SourceTensor info(const std::string &name) const override;
    void readRows(const SourceTensor &t, int64_t row0, int64_t rows, float *out) const override;
    std::string identity() const override;
    int64_t totalBytes() const override { return m_totalBytes; }

    // Tensors in checkpoint order (globals, then layer by layer), for writing shards.
    const std::vector<std::string> &order() const { return m_order; }
    const TinyDims &dims() const { return m_dims; }

    // A quantised or BF16 tensor as the checkpoint stores it (ModelSource::readStored);
    // readRows gives exactly these values decoded.
    void readStored(const SourceTensor &t, uint8_t *payload, uint8_t *scales) const override;
    void readStoredRows(const SourceTensor &t, int64_t row0, int64_t rows, uint8_t *payload, uint8_t *scales) const override;
    // The bytes of a quantised tensor as the release stores them (what makeTinyHf writes):
    // readStored's for the copied layouts, the source's own scales for the scaled ones.
    void releaseBytes(const SourceTensor &t, std::vector<uint8_t> &payload, std::vector<uint8_t> &scales) const;

private:
    enum class Init {
        Matrix,       // N(0, 1/fan_in)
        OutMatrix,    // N(0, 0.25²/fan_in): K3 output projections, so the deep stream stays tame
        Norm,         // 1 + 0.1 N(0,1)
        CentredNorm,  // 0.1 N(0,1): Qwen3-Next's zero-centred norms (applied as 1 + w)
        ResWeight,    // 0.1 N(0,1): Attention-Residuals score vectors
        ALog,         // log(1 + 15 U), one per head
        ALogPadded,   // K3: the per-head values, zero-padded to the head dim
        DtBias,       // -3 + 0.5 N(0,1)
        CenteredBias, // 0.5 N(0,1)
        Conv,
        Bias,
        Embedding,
        HashIds // DeepSeek V4's tid2eid: each row `top-k` distinct expert ids
    };
    struct Tensor {
        SourceTensor info;
        Init init = Init::Matrix;
        uint64_t key = 0;
    };
    void add(const std::string &name, std::vector<int64_t> shape, Init init, DType dtype = DType::BF16);
    // Tensor runs both architectures lay out alike, in checkpoint order. p: "model.layers.N.",
    // m: its "block_sparse_moe.".
    bool isKdaLayer(int layer) const;
    void addKdaInputs(const std::string &p); // q/k/v projections and convolutions, f_a/f_b, b_proj
    void addDenseMlp(const std::string &p, Init down);
    void addRouter(const std::string &m);
    void addSharedExperts(const std::string &m, Init down);
    void addRoutedExperts(const std::string &m, int width);
    // Routed experts in the Hugging Face layout "experts.E.{gate,up,down}_proj" (DeepSeek-V3,
    // Qwen3-MoE, Qwen3-Next); m: the layer's "mlp.".
    void addProjExperts(const std::string &m);
    // Qwen3's attention: q/k/v/o projections and per-head q/k norms; a: "…self_attn.",
    // qRows: q_proj's rows (Qwen3-Next's carries each head's gate too).
    void addQwenAttention(const std::string &a, int qRows, Init norm); // tiny_qwen3_model.cpp
    // The whole matrix as generated, before any encoding.
    std::vector<float> generated(const Tensor &t) const;
    void addKimiLinearTensors(int vocabSize);
    void addK3Tensors(int vocabSize); // tiny_k3_model.cpp
    void addVisionTensors();
    void addDeepseekTensors(int vocabSize);                   // tiny_deepseek_model.cpp
    // attention (with the DSA indexer where `indexer`) + dense or MoE FFN
    void addDeepseekLayer(const std::string &p, bool moe, bool indexer = false);
    std::string deepseekConfig(int vocabSize, int bosId, int eosId) const;
    void addDsaIndexer(const std::string &a);                 // tiny_dsa_model.cpp; a: "…self_attn."
    std::string glmDsaConfig(int vocabSize, const std::vector<int> &eosIds, int padId) const;
    void addQwen3Tensors(int vocabSize);                      // tiny_qwen3_model.cpp
    std::string qwen3Config(int vocabSize, int bosId, int eosId) const;
    void addQwen3NextTensors(int vocabSize);                  // tiny_qwen3_next_model.cpp
    std::string qwen3NextConfig(int vocabSize, int bosId, int eosId) const;
    void addGlm4MoeTensors(int vocabSize);                    // tiny_glm4_moe_model.cpp
    // One GLM-4.5 decoder layer (dense MLP or MoE); mtp: the MTP block's layer, with its extras.
    void addGlm4MoeLayer(const std::string &p, bool moe, int vocabSize, bool mtp);
    std::string glm4MoeConfig(int vocabSize, const std::vector<int> &eosIds, int padId) const;
    void addQwen35MoeTensors(int vocabSize);                  // tiny_qwen3_5_moe_model.cpp
    std::string qwen35MoeConfig(int vocabSize, const std::vector<int> &eosIds, int padId) const;
    void addDsv4Tensors(int vocabSize);                       // tiny_deepseek_v4_model.cpp
    // One V4 block: p its prefix ("layers.L." or the MTP block's "mtp.0."), ratio its compress ratio.
    void addDsv4Layer(const std::string &p, int layer, int ratio, int vocabSize);
    // A release tensor in V4's own layout (FP8 with ue8m0 block scales, FP4 with `.scale`).
    void addDsv4(const std::string &name, std::vector<int64_t> shape, Init init, DType dtype = DType::BF16);
    std::string dsv4Config(int vocabSize, int bosId, int eosId) const;
    void addGptOssTensors(int vocabSize);                     // tiny_gpt_oss_model.cpp
    std::string gptOssConfig(int vocabSize, int eosId, int padId) const;
    // The Kimi tiny tokenizer's files (tokenizer_config.json and tiktoken.model), for the
    // families without their own tiny tokenizer (convert/tiny_family_tokenizers).
    void putTokenizerFiles(const TinyVocabulary &vocab);
    void markGenerated();
    std::string kimiLinearConfig(int vocabSize, int nTokens) const;
    std::string k3Config(int vocabSize, int nTokens) const; // tiny_k3_model.cpp
    void addVisionConfig(nlohmann::ordered_json &c, int nTokens) const;
    // The release's "quantization_config" for quantised routed experts (tiny_expert_layouts.cpp).
    void putQuantizationConfig(nlohmann::ordered_json &c) const;
    // config.json key runs both architectures write alike (each keeps its own key order).
    void putHeadKeys(nlohmann::ordered_json &c, int nTokens, int eos, const char *activation) const;
    nlohmann::ordered_json linearAttnConfig() const;
    void putMoeKeys(nlohmann::ordered_json &c) const;   // model_max_length .. moe_router_activation_func
    void putCountKeys(nlohmann::ordered_json &c) const; // num_experts .. num_shared_experts
    void putRopeKeys(nlohmann::ordered_json &c) const;  // qk_nope_head_dim .. rope_theta
    void generate(const Tensor &t, int64_t first, int64_t count, float *out) const;

    TinyModelOptions m_options;
    TinyDims m_dims;
    std::map<std::string, Tensor> m_tensors;
    std::vector<std::string> m_order;
    std::map<std::string, std::string> m_files; // side files
    std::string m_config;
    int64_t m_totalBytes = 0;
};

} // namespace waste::convert
