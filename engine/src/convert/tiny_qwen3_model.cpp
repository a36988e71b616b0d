// The tiny Qwen3-MoE: its tensor list and config.json in the layout of the Qwen3-MoE
// releases (Qwen3-30B-A3B, Qwen3-235B-A22B; docs/architectures/qwen3-moe.md): GQA attention
// with per-head q/k RMSNorm weights, a router `mlp.gate` and routed experts
// `mlp.experts.E.{gate,up,down}_proj` on every layer, no shared expert, BF16 throughout.
#include "convert/tiny_model.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace waste::convert {

using ojson = nlohmann::ordered_json;

void TinySource::addQwenAttention(const std::string &a, int qRows, Init norm) {
    const TinyDims &d = m_dims;
    const int H = d.hidden, nq = d.mlaHeads * d.headDim, nkv = d.kvHeads * d.headDim;
    add(a + "q_proj.weight", {qRows, H}, Init::Matrix);
    add(a + "k_proj.weight", {nkv, H}, Init::Matrix);
    add(a + "v_proj.weight", {nkv, H}, Init::Matrix);
    add(a + "o_proj.weight", {H, nq}, Init::Matrix);
    add(a + "q_norm.weight", {d.headDim}, norm);
    add(a + "k_norm.weight", {d.headDim}, norm);
}

void TinySource::addQwen3Tensors(int vocabSize) {
    const TinyDims &d = m_dims;
    const int H = d.hidden;
    add("model.embed_tokens.weight", {vocabSize, H}, Init::Embedding);
    for (int L = 0; L < d.layers; ++L) {
        const std::string p = "model.layers." + std::to_string(L) + ".";
        add(p + "input_layernorm.weight", {H}, Init::Norm);
        addQwenAttention(p + "self_attn.", d.mlaHeads * d.headDim, Init::Norm);
        add(p + "post_attention_layernorm.weight", {H}, Init::Norm);
        if (std::find(d.mlpOnlyLayers.begin(), d.mlpOnlyLayers.end(), L) != d.mlpOnlyLayers.end()) {
            // A dense MLP of intermediate_size (3 x hidden, as the config says).
            add(p + "mlp.gate_proj.weight", {3 * H, H}, Init::Matrix);
            add(p + "mlp.up_proj.weight", {3 * H, H}, Init::Matrix);
            add(p + "mlp.down_proj.weight", {H, 3 * H}, Init::Matrix);
            continue;
        }
        add(p + "mlp.gate.weight", {d.experts, H}, Init::Matrix);
        addProjExperts(p + "mlp.");
    }
    add("model.norm.weight", {H}, Init::Norm);
    if (!d.tied) add("lm_head.weight", {vocabSize, H}, Init::Matrix);
}

std::string TinySource::qwen3Config(int vocabSize, int bosId, int eosId) const {
    const TinyDims &d = m_dims;
    ojson c;
    c["architectures"] = {"Qwen3MoeForCausalLM"};
    c["attention_bias"] = false;
    c["attention_dropout"] = 0.0;
    c["bos_token_id"] = bosId;
    c["decoder_sparse_step"] = 1;
    c["eos_token_id"] = eosId; // <|im_end|>
    c["head_dim"] = d.headDim;
    c["hidden_act"] = "silu";
    c["hidden_size"] = d.hidden;
    c["initializer_range"] = 0.02;
    c["intermediate_size"] = 3 * d.hidden;
    c["max_position_embeddings"] = 40960;
    c["max_window_layers"] = d.layers;
    c["mlp_only_layers"] = d.mlpOnlyLayers;
    c["model_type"] = "qwen3_moe";
    c["moe_intermediate_size"] = d.moeInter;
    c["norm_topk_prob"] = true;
    c["num_attention_heads"] = d.mlaHeads;
    c["num_experts"] = d.experts;
    c["num_experts_per_tok"] = d.topK;
    c["num_hidden_layers"] = d.layers;
    c["num_key_value_heads"] = d.kvHeads;
    c["output_router_logits"] = false;
    c["rms_norm_eps"] = 1e-06;
    c["rope_scaling"] = nullptr;
    c["rope_theta"] = 1000000.0;
    c["router_aux_loss_coef"] = 0.001;
    c["sliding_window"] = nullptr;
    c["tie_word_embeddings"] = d.tied;
    c["torch_dtype"] = "bfloat16";
    c["use_cache"] = true;
    c["use_sliding_window"] = false;
    c["vocab_size"] = vocabSize;
    putQuantizationConfig(c);
    return c.dump(2) + "\n";
}

} // namespace waste::convert
