// The tiny GLM-4.5 (and, with TinyModelOptions::glmAir, GLM-4.5-Air): tensor list and
// config.json in the layout of the Glm4MoeForCausalLM releases (docs/architectures/glm4-moe.md):
// GQA attention with q/k/v biases and (not on Air) per-head q/k norms, half of each head
// rotated, one dense first layer, then MoE layers with a router `mlp.gate`, its F32
// e_score_correction_bias, ungated `mlp.shared_experts` and routed experts
// `mlp.experts.E.{gate,up,down}_proj`; the multi-token-prediction layer at index
// num_hidden_layers, which the converter reads past. BF16 throughout, as the releases.
#include "convert/tiny_model.hpp"

#include <waste/waste.hpp>

#include <algorithm>

namespace waste::convert {

using ojson = nlohmann::ordered_json;

TinyDims tinyGlm4MoeDims(const TinyModelOptions &o) {
    // GLM-4.5's proportions, scaled down: query heads far wider than hidden (96 x 128 =
    // 12288 over 5120 there, 6 x 64 = 384 over 128 here) over few key/value heads (8 there,
    // 2 here: groups of 3), half of each head rotated, experts 160/8 -> 16/4, the dense
    // layers' MLP 2.4x hidden (12288 / 5120; 3x here). The routing runs in 4 groups of which 2
    // are kept (every release has one group, but the definition allows more), and two
    // shared experts, so their width (n_shared_experts x moe_intermediate_size) differs
    // from a routed expert's.
    TinyDims d;
    d.arch = o.arch;
    d.glmAir = o.glmAir;
    d.expertDType = tinyExpertDType(o.experts, DType::BF16);
    d.hidden = 128;
    d.layers = 4;
    d.firstDense = 1;
    d.inter = 384;
    d.mlaHeads = 6;
    d.kvHeads = 2;
    d.headDim = 64;
    d.rotaryDim = 32;
    d.moeInter = 32;
    d.experts = 16;
    d.topK = 4;
    d.groups = 4;
    d.topkGroups = 2;
    d.shared = 2;
    d.mtpLayers = 1;
    if (o.vision) throw Error(ErrorCode::Argument, "the GLM-4.5 releases have no vision tower (drop --vision)");
    if (o.targetBytes > 0) {
        const auto perExpert = static_cast<int64_t>(3.0 * d.moeInter * d.hidden * tinyExpertBytesPerWeight(d.expertDType));
        const int64_t e = o.targetBytes / (perExpert * (d.layers - d.firstDense));
        d.experts = static_cast<int>(std::clamp<int64_t>(e / d.groups * d.groups, 16, 4096)); // whole groups
    }
    return d;
}

void TinySource::addGlm4MoeLayer(const std::string &p, bool moe, int vocabSize, bool mtp) {
    const TinyDims &d = m_dims;
    const int H = d.hidden, nq = d.mlaHeads * d.headDim, nkv = d.kvHeads * d.headDim;
    if (mtp) { // the MTP block's own pieces around its decoder layer
        add(p + "eh_proj.weight", {H, 2 * H}, Init::Matrix);
        add(p + "embed_tokens.weight", {vocabSize, H}, Init::Embedding);
        add(p + "enorm.weight", {H}, Init::Norm);
        add(p + "hnorm.weight", {H}, Init::Norm);
        add(p + "shared_head.head.weight", {vocabSize, H}, Init::Matrix);
        add(p + "shared_head.norm.weight", {H}, Init::Norm);
    }
    add(p + "input_layernorm.weight", {H}, Init::Norm);
    const std::string a = p + "self_attn.";
    add(a + "q_proj.weight", {nq, H}, Init::Matrix);
    add(a + "q_proj.bias", {nq}, Init::CenteredBias);
    add(a + "k_proj.weight", {nkv, H}, Init::Matrix);
    add(a + "k_proj.bias", {nkv}, Init::CenteredBias);
    add(a + "v_proj.weight", {nkv, H}, Init::Matrix);
    add(a + "v_proj.bias", {nkv}, Init::CenteredBias);
    add(a + "o_proj.weight", {H, nq}, Init::Matrix);
    if (!d.glmAir) { // use_qk_norm
        add(a + "q_norm.weight", {d.headDim}, Init::Norm);
        add(a + "k_norm.weight", {d.headDim}, Init::Norm);
    }
    add(p + "post_attention_layernorm.weight", {H}, Init::Norm);
    if (!moe) {
        addDenseMlp(p, Init::Matrix);
        return;
    }
    const std::string m = p + "mlp.";
    add(m + "gate.weight", {d.experts, H}, Init::Matrix);
    // F32 in the releases. Small beside the sigmoid scores, so every selection key stays
    // positive and masking the dropped groups with 0.0 (transformers) or -inf (DeepSeek's
    // code, the engine) chooses alike; it still moves some choices.
    add(m + "gate.e_score_correction_bias", {d.experts}, Init::Bias, DType::F32);
    addSharedExperts(m, Init::Matrix);
    addProjExperts(m);
}

void TinySource::addGlm4MoeTensors(int vocabSize) {
    const TinyDims &d = m_dims;
    add("model.embed_tokens.weight", {vocabSize, d.hidden}, Init::Embedding);
    for (int L = 0; L < d.layers + d.mtpLayers; ++L)
        addGlm4MoeLayer("model.layers." + std::to_string(L) + ".", L >= d.firstDense, vocabSize, L >= d.layers);
    add("model.norm.weight", {d.hidden}, Init::Norm);
    add("lm_head.weight", {vocabSize, d.hidden}, Init::Matrix);
}

std::string TinySource::glm4MoeConfig(int vocabSize, const std::vector<int> &eosIds, int padId) const {
    const TinyDims &d = m_dims;
    ojson c;
    c["architectures"] = {"Glm4MoeForCausalLM"};
    c["attention_bias"] = true;
    c["attention_dropout"] = 0.0;
    c["pad_token_id"] = padId;
    c["eos_token_id"] = eosIds; // <|endoftext|>, <|user|>, <|observation|>
    c["head_dim"] = d.headDim;
    c["hidden_act"] = "silu";
    c["hidden_size"] = d.hidden;
    c["partial_rotary_factor"] = double(d.rotaryDim) / double(d.headDim);
    c["initializer_range"] = 0.02;
    c["intermediate_size"] = d.inter;
    c["max_position_embeddings"] = 131072;
    c["model_type"] = "glm4_moe";
    c["moe_intermediate_size"] = d.moeInter;
    c["norm_topk_prob"] = true;
    c["num_attention_heads"] = d.mlaHeads;
    c["n_group"] = d.groups;
    c["topk_group"] = d.topkGroups;
    c["n_routed_experts"] = d.experts;
    c["n_shared_experts"] = d.shared;
    c["routed_scaling_factor"] = d.glmAir ? 1.0 : 2.5;
    c["num_experts_per_tok"] = d.topK;
    c["first_k_dense_replace"] = d.firstDense;
    c["num_hidden_layers"] = d.layers;
    c["num_key_value_heads"] = d.kvHeads;
    c["rms_norm_eps"] = 1e-05;
    c["rope_scaling"] = nullptr;
    c["rope_theta"] = 1000000;
    c["num_nextn_predict_layers"] = d.mtpLayers;
    c["tie_word_embeddings"] = false;
    c["torch_dtype"] = "bfloat16";
    c["transformers_version"] = "4.54.0";
    c["use_cache"] = true;
    c["use_qk_norm"] = !d.glmAir;
    c["vocab_size"] = vocabSize;
    putQuantizationConfig(c);
    return c.dump(2) + "\n";
}

} // namespace waste::convert
