// The tiny Qwen3-Next: its tensor list and config.json in the layout of the
// Qwen3-Next-80B-A3B releases (docs/architectures/qwen3-next.md): three Gated DeltaNet layers
// (`linear_attn.*`) then one gated full-attention layer (`self_attn.*`, q_proj twice as
// wide), a router, routed experts `mlp.experts.E.*`, a shared expert and its gate on
// every layer, zero-centred norms, a few `mtp.*` tensors the converter must read past,
// BF16 throughout.
#include "convert/tiny_model.hpp"

#include <waste/waste.hpp>

#include <algorithm>

namespace waste::convert {

using ojson = nlohmann::ordered_json;

TinyDims tinyQwen3NextDims(const TinyModelOptions &o) {
    // Qwen3-Next-80B-A3B's proportions, scaled down: query heads wider than hidden
    // (16 x 256 = 4096 over 2048 there, 4 x 64 = 256 over 128 here) over 2 key/value
    // heads, a quarter of each head rotated (64 of 256 there, 16 of 64 here), twice as
    // many DeltaNet value heads as key heads (32 / 16 there, 4 / 2 here; value heads
    // wider than key heads here so a transposed state shows), experts 512/10 -> 16/4,
    // a shared expert wider than a routed one so the two widths cannot be confused.
    TinyDims d;
    d.arch = o.arch;
    d.expertDType = tinyExpertDType(o.experts, DType::BF16);
    d.hidden = 128;
    d.layers = 4;
    d.firstDense = 0;
    d.mlaHeads = 4;
    d.kvHeads = 2;
    d.headDim = 64;
    d.rotaryDim = 16;
    d.linKeyHeads = 2;
    d.linValueHeads = 4;
    d.linKeyDim = 32;
    d.linValueDim = 48;
    d.convKernel = 4;
    d.fullAttentionInterval = 4;
    d.moeInter = 32;
    d.sharedInter = 64;
    d.experts = 16;
    d.topK = 4;
    d.shared = 1;
    if (o.vision) throw Error(ErrorCode::Argument, "the Qwen3-Next releases have no vision tower (drop --vision)");
    if (o.targetBytes > 0) {
        const auto perExpert = static_cast<int64_t>(3.0 * d.moeInter * d.hidden * tinyExpertBytesPerWeight(d.expertDType));
        d.experts = static_cast<int>(std::clamp<int64_t>(o.targetBytes / (perExpert * d.layers), 16, 4096));
    }
    return d;
}

void TinySource::addQwen3NextTensors(int vocabSize) {
    const TinyDims &d = m_dims;
    const int H = d.hidden;
    const int Kw = d.linKeyHeads * d.linKeyDim, Vw = d.linValueHeads * d.linValueDim;
    add("model.embed_tokens.weight", {vocabSize, H}, Init::Embedding);
    for (int L = 0; L < d.layers; ++L) {
        const std::string p = "model.layers." + std::to_string(L) + ".";
        add(p + "input_layernorm.weight", {H}, Init::CentredNorm);
        if ((L + 1) % d.fullAttentionInterval != 0) {
            const std::string a = p + "linear_attn.";
            add(a + "A_log", {d.linValueHeads}, Init::ALog);
            add(a + "conv1d.weight", {2 * Kw + Vw, 1, d.convKernel}, Init::Conv);
            add(a + "dt_bias", {d.linValueHeads}, Init::DtBias);
            add(a + "in_proj_ba.weight", {2 * d.linValueHeads, H}, Init::Matrix);
            add(a + "in_proj_qkvz.weight", {2 * Kw + 2 * Vw, H}, Init::Matrix);
            add(a + "norm.weight", {d.linValueDim}, Init::Norm); // the gated norm applies w itself
            add(a + "out_proj.weight", {H, Vw}, Init::Matrix);
        } else {
            // q_proj: each head's q, then its gate
            addQwenAttention(p + "self_attn.", 2 * d.mlaHeads * d.headDim, Init::CentredNorm);
        }
        add(p + "post_attention_layernorm.weight", {H}, Init::CentredNorm);
        add(p + "mlp.gate.weight", {d.experts, H}, Init::Matrix);
        addProjExperts(p + "mlp.");
        add(p + "mlp.shared_expert.gate_proj.weight", {d.sharedInter, H}, Init::Matrix);
        add(p + "mlp.shared_expert.up_proj.weight", {d.sharedInter, H}, Init::Matrix);
        add(p + "mlp.shared_expert.down_proj.weight", {H, d.sharedInter}, Init::Matrix);
        add(p + "mlp.shared_expert_gate.weight", {1, H}, Init::Matrix);
    }
    add("model.norm.weight", {H}, Init::CentredNorm);
    add("lm_head.weight", {vocabSize, H}, Init::Matrix);
    // The release's multi-token-prediction block; the forward pass does not use it.
    add("mtp.fc.weight", {H, 2 * H}, Init::Matrix);
    add("mtp.norm.weight", {H}, Init::CentredNorm);
    add("mtp.pre_fc_norm_embedding.weight", {H}, Init::CentredNorm);
    add("mtp.pre_fc_norm_hidden.weight", {H}, Init::CentredNorm);
}

std::string TinySource::qwen3NextConfig(int vocabSize, int bosId, int eosId) const {
    const TinyDims &d = m_dims;
    ojson c;
    c["architectures"] = {"Qwen3NextForCausalLM"};
    c["attention_bias"] = false;
    c["attention_dropout"] = 0.0;
    c["bos_token_id"] = bosId;
    c["decoder_sparse_step"] = 1;
    c["eos_token_id"] = eosId; // <|im_end|>
    c["full_attention_interval"] = d.fullAttentionInterval;
    c["head_dim"] = d.headDim;
    c["hidden_act"] = "silu";
    c["hidden_size"] = d.hidden;
    c["initializer_range"] = 0.02;
    c["intermediate_size"] = 5 * d.hidden / 2;
    ojson types = ojson::array();
    for (int L = 0; L < d.layers; ++L)
        types.push_back((L + 1) % d.fullAttentionInterval == 0 ? "full_attention" : "linear_attention");
    c["layer_types"] = types;
    c["linear_conv_kernel_dim"] = d.convKernel;
    c["linear_key_head_dim"] = d.linKeyDim;
    c["linear_num_key_heads"] = d.linKeyHeads;
    c["linear_num_value_heads"] = d.linValueHeads;
    c["linear_value_head_dim"] = d.linValueDim;
    c["max_position_embeddings"] = 262144;
    c["mlp_only_layers"] = ojson::array();
    c["model_type"] = "qwen3_next";
    c["moe_intermediate_size"] = d.moeInter;
    c["norm_topk_prob"] = true;
    c["num_attention_heads"] = d.mlaHeads;
    c["num_experts"] = d.experts;
    c["num_experts_per_tok"] = d.topK;
    c["num_hidden_layers"] = d.layers;
    c["num_key_value_heads"] = d.kvHeads;
    c["output_router_logits"] = false;
    c["partial_rotary_factor"] = double(d.rotaryDim) / double(d.headDim);
    c["rms_norm_eps"] = 1e-06;
    c["rope_scaling"] = nullptr;
    c["rope_theta"] = 10000000;
    c["router_aux_loss_coef"] = 0.001;
    c["shared_expert_intermediate_size"] = d.sharedInter;
    c["tie_word_embeddings"] = false;
    c["torch_dtype"] = "bfloat16";
    c["transformers_version"] = "4.57.0.dev0";
    c["use_cache"] = true;
    c["use_sliding_window"] = false;
    c["vocab_size"] = vocabSize;
    putQuantizationConfig(c);
    return c.dump(2) + "\n";
}

} // namespace waste::convert
