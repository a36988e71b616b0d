// The tiny Qwen3.5-MoE: its tensor list and config.json in the layout of the Qwen3.5-MoE
// releases (docs/architectures/qwen3.5-moe.md): the multimodal wrapper (the text model under
// `model.language_model.` with its keys in `text_config`, a few `model.visual.` tensors and
// `mtp.` tensors the converter must read past, the head at top level), three Gated DeltaNet
// layers with their projections apart (`in_proj_qkv`, `in_proj_z`, `in_proj_b`,
// `in_proj_a`) then one gated full-attention layer, routed experts fused per layer
// (`mlp.experts.gate_up_proj` [E, 2I, H] with gate rows first, `mlp.experts.down_proj`
// [E, H, I], no `.weight`), a gated shared expert on every layer, zero-centred norms, BF16
// throughout.
#include "convert/tiny_model.hpp"

#include <waste/waste.hpp>

#include <algorithm>

namespace waste::convert {

using ojson = nlohmann::ordered_json;

TinyDims tinyQwen35MoeDims(const TinyModelOptions &o) {
    // The 397B's proportions, scaled down: query heads wider than hidden (32 x 256 over 4096
    // there, 4 x 64 over 128 here) over 2 key/value heads, a quarter of each head rotated
    // (64 of 256, 16 of 64), four DeltaNet value heads per key head as on the 397B and
    // 122B (64 / 16 there, 8 / 2 here; value heads wider than key heads so a transposed
    // state shows), experts 512/10 -> 16/4, a shared expert wider than a routed one so
    // the two widths cannot be confused.
    TinyDims d;
    d.arch = o.arch;
    if (o.experts != TinyExperts::Default && o.experts != TinyExperts::BF16)
        throw Error(ErrorCode::Argument, "the Qwen3.5-MoE releases fuse BF16 experts (leave --experts-layout out)");
    d.expertDType = DType::BF16;
    d.hidden = 128;
    d.layers = 4;
    d.firstDense = 0;
    d.mlaHeads = 4;
    d.kvHeads = 2;
    d.headDim = 64;
    d.rotaryDim = 16;
    d.linKeyHeads = 2;
    d.linValueHeads = 8;
    d.linKeyDim = 32;
    d.linValueDim = 48;
    d.convKernel = 4;
    d.fullAttentionInterval = 4;
    d.moeInter = 32;
    d.sharedInter = 64;
    d.experts = 16;
    d.topK = 4;
    d.shared = 1;
    if (o.vision) throw Error(ErrorCode::Argument, "mktiny writes Qwen3.5's vision tower on its own; drop --vision");
    if (o.targetBytes > 0) {
        const auto perExpert = static_cast<int64_t>(3.0 * d.moeInter * d.hidden * tinyExpertBytesPerWeight(d.expertDType));
        d.experts = static_cast<int>(std::clamp<int64_t>(o.targetBytes / (perExpert * d.layers), 16, 4096));
    }
    return d;
}

void TinySource::addQwen35MoeTensors(int vocabSize) {
    const TinyDims &d = m_dims;
    const int H = d.hidden, E = d.experts, I = d.moeInter;
    const int Kw = d.linKeyHeads * d.linKeyDim, Vw = d.linValueHeads * d.linValueDim;
    const std::string lm = "model.language_model.";
    add("lm_head.weight", {vocabSize, H}, Init::Matrix);
    add(lm + "embed_tokens.weight", {vocabSize, H}, Init::Embedding);
    for (int L = 0; L < d.layers; ++L) {
        const std::string p = lm + "layers." + std::to_string(L) + ".";
        add(p + "input_layernorm.weight", {H}, Init::CentredNorm);
        if ((L + 1) % d.fullAttentionInterval != 0) {
            const std::string a = p + "linear_attn.";
            add(a + "A_log", {d.linValueHeads}, Init::ALog);
            add(a + "conv1d.weight", {2 * Kw + Vw, 1, d.convKernel}, Init::Conv);
            add(a + "dt_bias", {d.linValueHeads}, Init::DtBias);
            add(a + "in_proj_a.weight", {d.linValueHeads, H}, Init::Matrix);
            add(a + "in_proj_b.weight", {d.linValueHeads, H}, Init::Matrix);
            add(a + "in_proj_qkv.weight", {2 * Kw + Vw, H}, Init::Matrix);
            add(a + "in_proj_z.weight", {Vw, H}, Init::Matrix);
            add(a + "norm.weight", {d.linValueDim}, Init::Norm); // the gated norm applies w itself
            add(a + "out_proj.weight", {H, Vw}, Init::Matrix);
        } else {
            // q_proj: each head's q, then its gate
            addQwenAttention(p + "self_attn.", 2 * d.mlaHeads * d.headDim, Init::CentredNorm);
        }
        add(p + "mlp.experts.down_proj", {E, H, I}, Init::Matrix);
        add(p + "mlp.experts.gate_up_proj", {E, 2 * I, H}, Init::Matrix);
        add(p + "mlp.gate.weight", {E, H}, Init::Matrix);
        add(p + "mlp.shared_expert.down_proj.weight", {H, d.sharedInter}, Init::Matrix);
        add(p + "mlp.shared_expert.gate_proj.weight", {d.sharedInter, H}, Init::Matrix);
        add(p + "mlp.shared_expert.up_proj.weight", {d.sharedInter, H}, Init::Matrix);
        add(p + "mlp.shared_expert_gate.weight", {1, H}, Init::Matrix);
        add(p + "post_attention_layernorm.weight", {H}, Init::CentredNorm);
    }
    add(lm + "norm.weight", {H}, Init::CentredNorm);
    // The release's multi-token-prediction block (one full-attention MoE layer; some copies
    // store its experts one by one) and a sliver of the vision tower: read past.
    add("mtp.fc.weight", {H, 2 * H}, Init::Matrix);
    add("mtp.layers.0.mlp.experts.0.gate_proj.weight", {I, H}, Init::Matrix);
    add("mtp.layers.0.mlp.gate.weight", {E, H}, Init::Matrix);
    add("mtp.norm.weight", {H}, Init::CentredNorm);
    add("mtp.pre_fc_norm_embedding.weight", {H}, Init::CentredNorm);
    add("mtp.pre_fc_norm_hidden.weight", {H}, Init::CentredNorm);
    const int V = d.vtHidden;
    add("model.visual.blocks.0.attn.qkv.weight", {3 * V, V}, Init::Matrix);
    add("model.visual.merger.linear_fc2.weight", {H, 4 * V}, Init::Matrix);
    add("model.visual.patch_embed.proj.weight", {V, 3, 2, 16, 16}, Init::Matrix);
    add("model.visual.pos_embed.weight", {16, V}, Init::Embedding);
}

std::string TinySource::qwen35MoeConfig(int vocabSize, const std::vector<int> &eosIds, int padId) const {
    const TinyDims &d = m_dims;
    ojson t; // text_config, in the release's key order
    t["attention_bias"] = false;
    t["attention_dropout"] = 0.0;
    t["attn_output_gate"] = true;
    t["dtype"] = "bfloat16";
    t["eos_token_id"] = eosIds.front(); // <|im_end|>
    t["full_attention_interval"] = d.fullAttentionInterval;
    t["head_dim"] = d.headDim;
    t["hidden_act"] = "silu";
    t["hidden_size"] = d.hidden;
    t["initializer_range"] = 0.02;
    ojson types = ojson::array();
    for (int L = 0; L < d.layers; ++L)
        types.push_back((L + 1) % d.fullAttentionInterval == 0 ? "full_attention" : "linear_attention");
    t["layer_types"] = types;
    t["linear_conv_kernel_dim"] = d.convKernel;
    t["linear_key_head_dim"] = d.linKeyDim;
    t["linear_num_key_heads"] = d.linKeyHeads;
    t["linear_num_value_heads"] = d.linValueHeads;
    t["linear_value_head_dim"] = d.linValueDim;
    t["max_position_embeddings"] = 262144;
    t["model_type"] = "qwen3_5_moe_text";
    t["moe_intermediate_size"] = d.moeInter;
    t["mtp_num_hidden_layers"] = 1;
    t["mtp_use_dedicated_embeddings"] = false;
    t["num_attention_heads"] = d.mlaHeads;
    t["num_experts"] = d.experts;
    t["num_experts_per_tok"] = d.topK;
    t["num_hidden_layers"] = d.layers;
    t["num_key_value_heads"] = d.kvHeads;
    t["rms_norm_eps"] = 1e-06;
    t["rope_parameters"] = {{"mrope_interleaved", true},
                            {"mrope_section", {11, 11, 10}},
                            {"rope_type", "default"},
                            {"rope_theta", 10000000},
                            {"partial_rotary_factor", double(d.rotaryDim) / double(d.headDim)}};
    t["router_aux_loss_coef"] = 0.001;
    t["shared_expert_intermediate_size"] = d.sharedInter;
    t["use_cache"] = true;
    t["vocab_size"] = vocabSize;
    ojson c;
    c["architectures"] = {"Qwen3_5MoeForConditionalGeneration"};
    c["image_token_id"] = padId + 12;  // <|image_pad|>, as the release's offsets from <|endoftext|>
    c["model_type"] = "qwen3_5_moe";
    c["text_config"] = t;
    c["tie_word_embeddings"] = false;
    c["transformers_version"] = "4.57.0.dev0";
    c["video_token_id"] = padId + 13;
    c["vision_config"] = {{"deepstack_visual_indexes", ojson::array()},
                          {"depth", 1},
                          {"hidden_act", "gelu_pytorch_tanh"},
                          {"hidden_size", d.vtHidden},
                          {"in_channels", 3},
                          {"intermediate_size", 2 * d.vtHidden},
                          {"model_type", "qwen3_5_moe"},
                          {"num_heads", 2},
                          {"num_position_embeddings", 16},
                          {"out_hidden_size", d.hidden},
                          {"patch_size", 16},
                          {"spatial_merge_size", 2},
                          {"temporal_patch_size", 2}};
    c["vision_end_token_id"] = padId + 10;
    c["vision_start_token_id"] = padId + 9;
    return c.dump(2) + "\n";
}

} // namespace waste::convert
