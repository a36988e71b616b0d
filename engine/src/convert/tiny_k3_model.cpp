// The tiny Kimi K3: its tensor list and its config.json, in the layout of the K3 release
// (a multimodal wrapper whose text model lives under `language_model.` and is described
// by `text_config`). Names and config keys are the ones reference/k3-math.md §1 lists
// and the engine reads (model/weights.cpp, format/manifest.cpp).
#include "convert/tiny_model.hpp"

#include <nlohmann/json.hpp>

namespace waste::convert {

using ojson = nlohmann::ordered_json;

void TinySource::addK3Tensors(int vocabSize) {
    const TinyDims &d = m_dims;
    const std::string &P = d.prefix;
    const int C = d.kdaHeads * d.kdaHeadDim, H = d.hidden, Lt = d.latent;
    const int dq = d.qkNope + d.qkRope;
    add(P + "model.embed_tokens.weight", {vocabSize, H}, Init::Embedding);
    for (int L = 0; L < d.layers; ++L) {
        const std::string p = P + "model.layers." + std::to_string(L) + ".";
        add(p + "input_layernorm.weight", {H}, Init::Norm);
        // Attention Residuals: one (norm, score) pair before each sub-layer.
        add(p + "self_attention_res_norm.weight", {H}, Init::Norm);
        add(p + "self_attention_res_proj.weight", {H}, Init::ResWeight);
        add(p + "mlp_res_norm.weight", {H}, Init::Norm);
        add(p + "mlp_res_proj.weight", {H}, Init::ResWeight);
        if (isKdaLayer(L)) {
            addKdaInputs(p);
            add(p + "self_attn.A_log", {d.kdaHeadDim}, Init::ALogPadded); // per head, zero-padded to D
            add(p + "self_attn.dt_bias", {C}, Init::CenteredBias);
            add(p + "self_attn.g_proj.weight", {C, H}, Init::Matrix); // full-rank output gate
            add(p + "self_attn.o_norm.weight", {d.kdaHeadDim}, Init::Norm);
            add(p + "self_attn.o_proj.weight", {H, C}, Init::OutMatrix);
        } else {
            add(p + "self_attn.q_a_proj.weight", {d.qLora, H}, Init::Matrix);
            add(p + "self_attn.q_a_layernorm.weight", {d.qLora}, Init::Norm);
            add(p + "self_attn.q_b_proj.weight", {d.mlaHeads * dq, d.qLora}, Init::Matrix);
            add(p + "self_attn.kv_a_proj_with_mqa.weight", {d.kvLora + d.qkRope, H}, Init::Matrix);
            add(p + "self_attn.kv_a_layernorm.weight", {d.kvLora}, Init::Norm);
            add(p + "self_attn.kv_b_proj.weight", {d.mlaHeads * (d.qkNope + d.vHead), d.kvLora}, Init::Matrix);
            add(p + "self_attn.g_proj.weight", {d.mlaHeads * d.vHead, H}, Init::Matrix); // output gate
            add(p + "self_attn.o_proj.weight", {H, d.mlaHeads * d.vHead}, Init::OutMatrix);
        }
        add(p + "post_attention_layernorm.weight", {H}, Init::Norm);
        if (L < d.firstDense) {
            addDenseMlp(p, Init::OutMatrix);
            continue;
        }
        const std::string m = p + "block_sparse_moe.";
        addRouter(m);
        add(m + "routed_expert_down_proj.weight", {Lt, H}, Init::Matrix);
        add(m + "routed_expert_norm.weight", {Lt}, Init::Norm);
        add(m + "routed_expert_up_proj.weight", {H, Lt}, Init::OutMatrix);
        addSharedExperts(m, Init::OutMatrix);
        addRoutedExperts(m, Lt);
    }
    add(P + "model.norm.weight", {H}, Init::Norm);
    add(P + "model.output_attn_res_norm.weight", {H}, Init::Norm);
    add(P + "model.output_attn_res_proj.weight", {H}, Init::ResWeight);
    add(P + "lm_head.weight", {vocabSize, H}, Init::Matrix);
}

std::string TinySource::k3Config(int vocabSize, int nTokens) const {
    const TinyDims &d = m_dims;
    ojson t;
    putHeadKeys(t, nTokens, nTokens + 7 /* <|end_of_msg|> */, "situ");
    t["activation_situ_beta"] = d.situBeta;
    t["activation_situ_linear_beta"] = d.situLinearBeta;
    t["hidden_size"] = d.hidden;
    t["initializer_range"] = 0.02;
    t["intermediate_size"] = d.inter;
    t["kv_lora_rank"] = d.kvLora;
    t["q_lora_rank"] = d.qLora;
    t["linear_attn_config"] = linearAttnConfig();
    t["linear_attn_config"]["use_full_rank_gate"] = true;
    t["linear_attn_config"]["gate_lower_bound"] = d.gateLowerBound;
    t["mla_use_nope"] = true;
    t["mla_use_output_gate"] = true;
    t["attn_res_block_size"] = d.attnResBlock;
    putMoeKeys(t);
    t["routed_expert_hidden_size"] = d.latent;
    t["latent_moe_use_norm"] = true;
    t["num_attention_heads"] = d.mlaHeads;
    t["n_group"] = 1;
    t["num_expert_group"] = 1;
    t["topk_group"] = 1;
    putCountKeys(t);
    putRopeKeys(t);
    t["routed_scaling_factor"] = 1.0;
    t["tie_word_embeddings"] = false;
    t["torch_dtype"] = "bfloat16";
    t["use_cache"] = true;
    t["v_head_dim"] = d.vHead;
    t["vocab_size"] = vocabSize;

    ojson c;
    c["architectures"] = {"KimiK3ForConditionalGeneration"};
    c["model_type"] = "kimi_k3";
    c["text_config"] = t;
    c["tie_word_embeddings"] = false;
    c["torch_dtype"] = "bfloat16";
    putQuantizationConfig(c);
    if (d.vision) addVisionConfig(c, nTokens);
    return c.dump(2) + "\n";
}

} // namespace waste::convert
