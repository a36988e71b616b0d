// The tiny DeepSeek-V3 and Kimi K2: tensor list, config.json and tokenizer files in the
// layout of those releases (docs/architectures/deepseek-v3.md): release tensor names (`mlp.`
// MoE blocks, q and kv LoRA), FP8 e4m3 trunk and experts with 128x128 `_scale_inv`
// blocks (Kimi K2 with INT4 experts: a BF16 trunk and pack-quantized experts, as
// K2-Thinking), F32 e_score_correction_bias, two dense layers, several MoE layers, 4 expert groups on DeepSeek-V3
// and one on Kimi K2, and DeepSeek's multi-token-prediction layer after the last one.
#include "convert/tiny_model.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace waste::convert {

using ojson = nlohmann::ordered_json;

TinyDims tinyDeepseekDims(const TinyModelOptions &o) {
    TinyDims d;
    d.deepseek = true;
    d.kimiK2 = o.arch == "kimi-k2";
    d.hidden = 256;
    d.layers = 5;
    d.firstDense = 2;
    d.inter = 512;
    d.moeInter = 128; // a whole FP8 block, so native FP8 records keep the release's bytes
    d.qLora = 96;     // partial 128-blocks in the trunk, as kv_a_proj_with_mqa [576, 7168] has
    d.kvLora = 64;
    d.qkNope = 32;
    d.qkRope = 16;
    d.vHead = 32;
    d.shared = 1;
    d.kdaLayers = {};
    d.fullAttnLayers = {};
    if (d.kimiK2) { // K2: 384 experts in one group, half DeepSeek's heads, no MTP layer
        d.experts = 24;
        d.topK = 4;
        d.mlaHeads = 2;
    } else {        // DeepSeek-V3: 256 experts in 8 groups, 4 of them kept, one MTP layer
        d.experts = 16;
        d.topK = 4;
        d.mlaHeads = 4;
        d.groups = 4;
        d.topkGroups = 2;
        d.mtpLayers = 1;
    }
    d.expertDType = tinyExpertDType(o.experts, DType::FP8B128);
    // Releases with INT4 experts (K2-Thinking) or BF16 ones keep a BF16 trunk.
    d.trunkDType = d.expertDType == DType::FP8B128 ? DType::FP8B128 : DType::BF16;
    if (o.targetBytes > 0) {
        // Benchmark scale: wider, experts added until the source reaches about the size.
        d.hidden = 512;
        d.inter = 1024;
        d.moeInter = 512;
        d.layers = 8;
        const auto perExpert = static_cast<int64_t>(3.0 * d.moeInter * d.hidden * tinyExpertBytesPerWeight(d.expertDType));
        const int64_t e = o.targetBytes / (perExpert * (d.layers - d.firstDense));
        const int64_t step = d.groups; // whole groups
        d.experts = static_cast<int>(std::clamp<int64_t>(e / step * step, d.experts, 4096));
        d.topK = 8;
    }
    return d;
}

void TinySource::addDeepseekLayer(const std::string &p, bool moe, bool indexer) {
    const TinyDims &d = m_dims;
    const int H = d.hidden, dq = d.qkNope + d.qkRope;
    const DType w = d.trunkDType;
    add(p + "input_layernorm.weight", {H}, Init::Norm);
    add(p + "self_attn.q_a_proj.weight", {d.qLora, H}, Init::Matrix, w);
    add(p + "self_attn.q_a_layernorm.weight", {d.qLora}, Init::Norm);
    add(p + "self_attn.q_b_proj.weight", {d.mlaHeads * dq, d.qLora}, Init::Matrix, w);
    add(p + "self_attn.kv_a_proj_with_mqa.weight", {d.kvLora + d.qkRope, H}, Init::Matrix, w);
    add(p + "self_attn.kv_a_layernorm.weight", {d.kvLora}, Init::Norm);
    add(p + "self_attn.kv_b_proj.weight", {d.mlaHeads * (d.qkNope + d.vHead), d.kvLora}, Init::Matrix, w);
    add(p + "self_attn.o_proj.weight", {H, d.mlaHeads * d.vHead}, Init::Matrix, w);
    if (indexer) addDsaIndexer(p + "self_attn.");
    add(p + "post_attention_layernorm.weight", {H}, Init::Norm);
    if (!moe) {
        add(p + "mlp.gate_proj.weight", {d.inter, H}, Init::Matrix, w);
        add(p + "mlp.up_proj.weight", {d.inter, H}, Init::Matrix, w);
        add(p + "mlp.down_proj.weight", {H, d.inter}, Init::Matrix, w);
        return;
    }
    const std::string m = p + "mlp.";
    add(m + "gate.weight", {d.experts, H}, Init::Matrix); // the router stays BF16
    // The releases store the score-correction bias F32 (its values stay the bf16-rounded
    // ones every tiny tensor has, so the model is the same whichever way it is read).
    add(m + "gate.e_score_correction_bias", {d.experts}, Init::Bias, DType::F32);
    const int ms = d.moeInter * d.shared;
    add(m + "shared_experts.gate_proj.weight", {ms, H}, Init::Matrix, w);
    add(m + "shared_experts.up_proj.weight", {ms, H}, Init::Matrix, w);
    add(m + "shared_experts.down_proj.weight", {H, ms}, Init::Matrix, w);
    addProjExperts(m);
}

void TinySource::addDeepseekTensors(int vocabSize) {
    const TinyDims &d = m_dims;
    const int H = d.hidden;
    add("model.embed_tokens.weight", {vocabSize, H}, Init::Embedding);
    const bool dsa = d.indexHeads > 0;
    for (int L = 0; L < d.layers; ++L)
        addDeepseekLayer("model.layers." + std::to_string(L) + ".", L >= d.firstDense,
                         dsa && !(size_t(L) < d.indexShared.size() && d.indexShared[size_t(L)]));
    add("model.norm.weight", {H}, Init::Norm);
    add("lm_head.weight", {vocabSize, H}, Init::Matrix);
    // DeepSeek's MTP module: its own norms, projection and head around one more MoE layer.
    for (int k = 0; k < d.mtpLayers; ++k) {
        const std::string p = "model.layers." + std::to_string(d.layers + k) + ".";
        add(p + "enorm.weight", {H}, Init::Norm);
        add(p + "hnorm.weight", {H}, Init::Norm);
        add(p + "eh_proj.weight", {H, 2 * H}, Init::Matrix, d.trunkDType);
        addDeepseekLayer(p, true, dsa); // an MTP layer always carries its own indexer
        add(p + "shared_head.norm.weight", {H}, Init::Norm);
        add(p + "shared_head.head.weight", {vocabSize, H}, Init::Matrix);
    }
}

std::string TinySource::deepseekConfig(int vocabSize, int bosId, int eosId) const {
    const TinyDims &d = m_dims;
    ojson c;
    const bool v32 = d.indexHeads > 0;
    c["architectures"] = {v32 ? "DeepseekV32ForCausalLM" : "DeepseekV3ForCausalLM"};
    c["attention_bias"] = false;
    c["attention_dropout"] = 0.0;
    if (!v32) // V3.2's config.json has no auto_map
        c["auto_map"] = {{"AutoConfig", "configuration_deepseek.DeepseekV3Config"},
                         {"AutoModel", "modeling_deepseek.DeepseekV3Model"},
                         {"AutoModelForCausalLM", "modeling_deepseek.DeepseekV3ForCausalLM"}};
    c["aux_loss_alpha"] = 0.001;
    c["bos_token_id"] = bosId;
    c["eos_token_id"] = eosId;
    c["ep_size"] = 1;
    c["first_k_dense_replace"] = d.firstDense;
    c["hidden_act"] = "silu";
    c["hidden_size"] = d.hidden;
    if (v32) { // DeepSeek-V3.2's config.json adds these three keys to V3's
        c["index_head_dim"] = d.indexHeadDim;
        c["index_n_heads"] = d.indexHeads;
        c["index_topk"] = d.indexTopk;
    }
    c["initializer_range"] = 0.02;
    c["intermediate_size"] = d.inter;
    c["kv_lora_rank"] = d.kvLora;
    c["max_position_embeddings"] = d.kimiK2 ? 131072 : 163840;
    c["model_type"] = d.kimiK2 ? "kimi_k2" : v32 ? "deepseek_v32" : "deepseek_v3";
    c["moe_intermediate_size"] = d.moeInter;
    c["moe_layer_freq"] = 1;
    c["n_group"] = d.groups;
    c["n_routed_experts"] = d.experts;
    c["n_shared_experts"] = d.shared;
    c["norm_topk_prob"] = true;
    c["num_attention_heads"] = d.mlaHeads;
    c["num_experts_per_tok"] = d.topK;
    c["num_hidden_layers"] = d.layers;
    c["num_key_value_heads"] = d.mlaHeads;
    c["num_nextn_predict_layers"] = d.mtpLayers;
    c["pretraining_tp"] = 1;
    c["q_lora_rank"] = d.qLora;
    c["qk_nope_head_dim"] = d.qkNope;
    c["qk_rope_head_dim"] = d.qkRope;
    putQuantizationConfig(c);
    if (c.contains("quantization_config") && d.expertDType == DType::INT4G32) // K2-Thinking's module names
        c["quantization_config"]["config_groups"]["group_0"]["targets"] = {"re:.*mlp\\.experts\\..*"};
    c["rms_norm_eps"] = 1e-06;
    if (d.kimiK2)
        c["rope_scaling"] = {{"beta_fast", 1.0}, {"beta_slow", 1.0}, {"factor", 32.0}, {"mscale", 1.0},
                             {"mscale_all_dim", 1.0}, {"original_max_position_embeddings", 4096}, {"type", "yarn"}};
    else
        c["rope_scaling"] = {{"beta_fast", 32}, {"beta_slow", 1}, {"factor", 40}, {"mscale", 1.0},
                             {"mscale_all_dim", 1.0}, {"original_max_position_embeddings", 4096}, {"type", "yarn"}};
    c["rope_theta"] = d.kimiK2 ? 50000.0 : 10000;
    c["routed_scaling_factor"] = d.kimiK2 ? 2.827 : 2.5;
    c["scoring_func"] = "sigmoid";
    c["tie_word_embeddings"] = false;
    c["topk_group"] = d.topkGroups;
    c["topk_method"] = "noaux_tc";
    c["torch_dtype"] = "bfloat16";
    c["transformers_version"] = "4.46.3";
    c["use_cache"] = true;
    c["v_head_dim"] = d.vHead;
    c["vocab_size"] = vocabSize;
    return c.dump(2) + "\n";
}

} // namespace waste::convert
