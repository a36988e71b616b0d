// The tiny gpt-oss: its tensor list and config.json in the layout of the gpt-oss releases
// (gpt-oss-20b, gpt-oss-120b; docs/architectures/gpt-oss.md): GQA attention with biases and a
// learned sink per head, a router `mlp.router` with a bias, and each layer's experts in
// two fused MXFP4 tensors (`mlp.experts.gate_up_proj_blocks/_scales`, gate and up rows
// interleaved, and `mlp.experts.down_proj_blocks/_scales`) with BF16 biases beside them.
#include "convert/tiny_model.hpp"

#include <nlohmann/json.hpp>

namespace waste::convert {

using ojson = nlohmann::ordered_json;

void TinySource::addGptOssTensors(int vocabSize) {
    const TinyDims &d = m_dims;
    const int H = d.hidden, nq = d.mlaHeads * d.headDim, nkv = d.kvHeads * d.headDim, E = d.experts, I = d.moeInter;
    add("model.embed_tokens.weight", {vocabSize, H}, Init::Embedding);
    for (int L = 0; L < d.layers; ++L) {
        const std::string p = "model.layers." + std::to_string(L) + ".";
        add(p + "input_layernorm.weight", {H}, Init::Norm);
        add(p + "self_attn.q_proj.weight", {nq, H}, Init::Matrix);
        add(p + "self_attn.q_proj.bias", {nq}, Init::Bias);
        add(p + "self_attn.k_proj.weight", {nkv, H}, Init::Matrix);
        add(p + "self_attn.k_proj.bias", {nkv}, Init::Bias);
        add(p + "self_attn.v_proj.weight", {nkv, H}, Init::Matrix);
        add(p + "self_attn.v_proj.bias", {nkv}, Init::Bias);
        add(p + "self_attn.o_proj.weight", {H, nq}, Init::Matrix);
        add(p + "self_attn.o_proj.bias", {H}, Init::Bias);
        add(p + "self_attn.sinks", {d.mlaHeads}, Init::CenteredBias);
        add(p + "post_attention_layernorm.weight", {H}, Init::Norm);
        add(p + "mlp.router.weight", {E, H}, Init::Matrix);
        add(p + "mlp.router.bias", {E}, Init::Bias);
        // Logical [E, rows, cols]; a checkpoint stores each as _blocks and _scales.
        add(p + "mlp.experts.gate_up_proj", {E, 2 * I, H}, Init::Matrix, DType::MXFP4);
        add(p + "mlp.experts.gate_up_proj_bias", {E, 2 * I}, Init::CenteredBias);
        add(p + "mlp.experts.down_proj", {E, H, I}, Init::Matrix, DType::MXFP4);
        add(p + "mlp.experts.down_proj_bias", {E, H}, Init::CenteredBias);
    }
    add("model.norm.weight", {H}, Init::Norm);
    add("lm_head.weight", {vocabSize, H}, Init::Matrix);
}

std::string TinySource::gptOssConfig(int vocabSize, int eosId, int padId) const {
    const TinyDims &d = m_dims;
    ojson c;
    c["architectures"] = {"GptOssForCausalLM"};
    c["attention_bias"] = true;
    c["attention_dropout"] = 0.0;
    c["eos_token_id"] = eosId; // <|return|>
    c["experts_per_token"] = d.topK;
    c["head_dim"] = d.headDim;
    c["hidden_act"] = "silu";
    c["hidden_size"] = d.hidden;
    c["initial_context_length"] = 4096;
    c["initializer_range"] = 0.02;
    c["intermediate_size"] = d.moeInter;
    ojson types = ojson::array();
    for (int L = 0; L < d.layers; ++L) types.push_back(L % 2 == 0 ? "sliding_attention" : "full_attention");
    c["layer_types"] = types;
    c["max_position_embeddings"] = 131072;
    c["model_type"] = "gpt_oss";
    c["num_attention_heads"] = d.mlaHeads;
    c["num_experts_per_tok"] = d.topK;
    c["num_hidden_layers"] = d.layers;
    c["num_key_value_heads"] = d.kvHeads;
    c["num_local_experts"] = d.experts;
    c["output_router_logits"] = false;
    c["pad_token_id"] = padId; // <|endoftext|>
    putQuantizationConfig(c);
    c["rms_norm_eps"] = 1e-05;
    c["rope_scaling"] = {{"beta_fast", 32.0}, {"beta_slow", 1.0}, {"factor", 32.0},
                         {"original_max_position_embeddings", 4096}, {"rope_type", "yarn"}, {"truncate", false}};
    c["rope_theta"] = 150000;
    c["router_aux_loss_coef"] = 0.9;
    c["sliding_window"] = d.window;
    c["swiglu_limit"] = 7.0;
    c["tie_word_embeddings"] = false;
    c["torch_dtype"] = "bfloat16";
    c["use_cache"] = true;
    c["vocab_size"] = vocabSize;
    return c.dump(2) + "\n";
}

} // namespace waste::convert
