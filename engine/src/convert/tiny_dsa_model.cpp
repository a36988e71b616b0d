// The tiny DeepSeek-V3.2 and GLM-5.2 (DeepSeek Sparse Attention; docs/architectures/dsa.md):
// DeepSeek-V3's tiny trunk (tiny_deepseek_model.cpp) plus each layer's lightning indexer,
// with index_topk 8 so a prompt of 40 positions runs both below and past it.
//   - deepseek-v32: V3.2's layout: FP8 e4m3 trunk and experts in 128x128 blocks (the
//     indexer's wq_b and wk too; weights_proj stays BF16), 4 expert groups, YaRN, an MTP layer;
//   - glm-moe-dsa: GLM-5.2's: BF16, one group, rope_parameters with plain RoPE, dv != dn,
//     interleaved indexer RoPE, explicit indexer_types with "shared" layers (no indexer
//     tensors there) and mlp_layer_types, three stop ids.
#include "convert/tiny_model.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace waste::convert {

using ojson = nlohmann::ordered_json;

TinyDims tinyDsaDims(const TinyModelOptions &o) {
    TinyModelOptions base = o;
    base.arch = "deepseek-v3";
    TinyDims d = tinyDeepseekDims(base);
    d.arch = o.arch;
    d.indexHeads = 4;
    d.indexHeadDim = 32; // wider than qk_rope_head_dim (16): rotated and unrotated dims both
    d.indexTopk = 8;
    if (o.arch == "glm-moe-dsa") {
        // GLM-5: no expert groups, v_head_dim above qk_nope_head_dim; GLM-5.2's IndexShare
        // schedule scaled down (freq 2, offset 2): layers 2 and 4 reuse 1's and 3's selection.
        d.groups = 1;
        d.topkGroups = 1;
        d.layers = 6;
        d.qkNope = 48;
        d.vHead = 64;
        d.expertDType = tinyExpertDType(o.experts, DType::BF16);
        d.trunkDType = d.expertDType == DType::FP8B128 ? DType::FP8B128 : DType::BF16;
        d.indexShared.assign(size_t(d.layers), false);
        for (int L = 0; L < d.layers; ++L) d.indexShared[size_t(L)] = std::max(L - 2 + 1, 0) % 2 != 0;
    }
    return d;
}

void TinySource::addDsaIndexer(const std::string &a) {
    const TinyDims &d = m_dims;
    const std::string x = a + "indexer.";
    // DeepSeek-V3.2 quantises wq_b and wk like every other linear; weights_proj stays BF16.
    add(x + "wq_b.weight", {d.indexHeads * d.indexHeadDim, d.qLora}, Init::Matrix, d.trunkDType);
    add(x + "wk.weight", {d.indexHeadDim, d.hidden}, Init::Matrix, d.trunkDType);
    add(x + "k_norm.weight", {d.indexHeadDim}, Init::Norm);
    add(x + "k_norm.bias", {d.indexHeadDim}, Init::Bias);
    add(x + "weights_proj.weight", {d.indexHeads, d.hidden}, Init::Matrix);
}

std::string TinySource::glmDsaConfig(int vocabSize, const std::vector<int> &eosIds, int padId) const {
    const TinyDims &d = m_dims;
    ojson c;
    c["architectures"] = {"GlmMoeDsaForCausalLM"};
    c["attention_bias"] = false;
    c["attention_dropout"] = 0.0;
    c["dtype"] = "bfloat16";
    c["eos_token_id"] = eosIds;
    c["ep_size"] = 1;
    c["first_k_dense_replace"] = d.firstDense;
    c["head_dim"] = d.qkNope + d.qkRope; // junk for MLA (GLM-5.2 writes 192): read past
    c["hidden_act"] = "silu";
    c["hidden_size"] = d.hidden;
    c["index_head_dim"] = d.indexHeadDim;
    c["index_n_heads"] = d.indexHeads;
    c["index_share_for_mtp_iteration"] = true;
    c["index_skip_topk_offset"] = 2;
    c["index_topk"] = d.indexTopk;
    c["index_topk_freq"] = 2;
    c["index_topk_pattern"] = nullptr;
    c["indexer_rope_interleave"] = true;
    ojson types = ojson::array();
    for (int L = 0; L < d.layers; ++L) types.push_back(d.indexShared[size_t(L)] ? "shared" : "full");
    c["indexer_types"] = types;
    c["initializer_range"] = 0.02;
    c["intermediate_size"] = d.inter;
    c["kv_lora_rank"] = d.kvLora;
    c["max_position_embeddings"] = 1048576;
    ojson mlp = ojson::array();
    for (int L = 0; L < d.layers; ++L) mlp.push_back(L < d.firstDense ? "dense" : "sparse");
    c["mlp_layer_types"] = mlp;
    c["model_type"] = "glm_moe_dsa";
    c["moe_intermediate_size"] = d.moeInter;
    c["moe_layer_freq"] = 1;
    c["moe_router_dtype"] = "float32";
    c["n_group"] = d.groups;
    c["n_routed_experts"] = d.experts;
    c["n_shared_experts"] = d.shared;
    c["norm_topk_prob"] = true;
    c["num_attention_heads"] = d.mlaHeads;
    c["num_experts_per_tok"] = d.topK;
    c["num_hidden_layers"] = d.layers;
    c["num_key_value_heads"] = d.mlaHeads;
    c["num_nextn_predict_layers"] = d.mtpLayers;
    c["pad_token_id"] = padId;
    c["pretraining_tp"] = 1;
    c["q_lora_rank"] = d.qLora;
    c["qk_head_dim"] = d.qkNope + d.qkRope;
    c["qk_nope_head_dim"] = d.qkNope;
    c["qk_rope_head_dim"] = d.qkRope;
    c["rms_norm_eps"] = 1e-05;
    c["rope_interleave"] = true;
    c["rope_parameters"] = {{"rope_theta", 8000000}, {"rope_type", "default"}};
    c["routed_scaling_factor"] = 2.5;
    c["scoring_func"] = "sigmoid";
    c["tie_word_embeddings"] = false;
    c["topk_group"] = d.topkGroups;
    c["topk_method"] = "noaux_tc";
    c["transformers_version"] = "5.0.0";
    c["use_cache"] = true;
    c["v_head_dim"] = d.vHead;
    c["vocab_size"] = vocabSize;
    putQuantizationConfig(c);
    return c.dump(2) + "\n";
}

} // namespace waste::convert
