// The tiny DeepSeek V4 Flash: tensor list and config.json in the layout of the
// DeepseekV4ForCausalLM release (docs/architectures/deepseek-v4-flash.md): no "model." prefix;
// the trunk's matrices FP8 e4m3 with F8_E8M0 (power-of-two) scales per 128x128 block beside
// them as `.scale`; the routed experts FP4 (I8 nibble pairs, F8_E8M0 `.scale` per 32); norms,
// the embedding, head, router and compressors BF16; the hyper-connection mixes, the
// compressors' position tables, the sinks and the router bias F32; tid2eid I64 on the hash
// layers; and the MTP block `mtp.0.`, which the converter reads past. Small, but every path:
// window-only layers, ratio-4 layers with the indexer (index_topk 4, so 40 positions make 10
// rows to choose from) and ratio-8 layers standing in for Flash's 128 (a window of 8), two
// hash-routed layers then score-routed ones, the shared expert, four streams.
#include "convert/fp8_blocks.hpp"
#include "convert/mxfp4.hpp"
#include "convert/scaled_layouts.hpp"
#include "convert/tiny_model.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <cmath>

namespace waste::convert {

using ojson = nlohmann::ordered_json;

TinyDims tinyDsv4Dims(const TinyModelOptions &o) {
    // Flash's proportions, scaled down: query heads far wider than hidden (64 x 512 over
    // 4096 there, 4 x 96 = 384 over 128 here), the last part of the head rotated (64 of 512,
    // 32 of 96), q_lora_rank a quarter of hidden there, half here, output groups of heads
    // (8 of 8 heads, 2 of 2 here), experts 256/6 -> 8/2 plus one shared, 3 hash layers -> 2.
    TinyDims d;
    d.arch = o.arch;
    d.dsv4 = true;
    if (o.vision) throw Error(ErrorCode::Argument, "the DeepSeek V4 Flash release has no vision tower (drop --vision)");
    if (o.experts != TinyExperts::Default && o.experts != TinyExperts::MXFP4)
        throw Error(ErrorCode::Argument, "the DeepSeek V4 Flash release ships its experts as FP4 (MXFP4) only");
    d.expertDType = DType::MXFP4;
    d.trunkDType = DType::FP8Scaled;
    d.hidden = 128;
    d.layers = 6;
    d.firstDense = 0;
    d.compressRatios = {0, 0, 4, 8, 4, 8, 4}; // the last: the MTP block's
    d.mlaHeads = 4;
    d.headDim = 96;
    d.qkRope = 32;
    d.qLora = 64;
    d.oGroups = 2;
    d.oLora = 32;
    d.window = 8;
    d.indexHeads = 4;
    d.indexHeadDim = 64;
    d.indexTopk = 4;
    d.hashLayers = 2;
    d.hcMult = 4;
    d.moeInter = 64;
    d.experts = 8;
    d.topK = 2;
    d.shared = 1;
    d.mtpLayers = 1;
    if (o.targetBytes > 0) {
        const auto perExpert = static_cast<int64_t>(3.0 * d.moeInter * d.hidden * tinyExpertBytesPerWeight(d.expertDType));
        d.experts = static_cast<int>(std::clamp<int64_t>(o.targetBytes / (perExpert * d.layers), 8, 4096));
    }
    return d;
}

void TinySource::addDsv4(const std::string &name, std::vector<int64_t> shape, Init init, DType dtype) {
    // (FP8Scaled is added as BF16 first: add() would size it from the --experts-layout blocks.)
    add(name, std::move(shape), init, dtype == DType::FP8Scaled ? DType::BF16 : dtype);
    Tensor &t = m_tensors[name];
    t.info.dtype = dtype;
    if (dtype == DType::FP8Scaled || dtype == DType::MXFP4) {
        t.info.dotScale = true;
        const int64_t rows = t.info.rows(), cols = t.info.rowLength();
        m_totalBytes -= t.info.bytes;
        if (dtype == DType::FP8Scaled) { // one e8m0 byte per 128x128 block
            t.info.blockRows = t.info.blockCols = 128;
            t.info.bytes = rows * cols + blocksAlong(rows, 128) * blocksAlong(cols, 128);
        } else {
            t.info.bytes = rows * (cols / 2 + cols / int64_t(kMxfp4Block));
        }
        m_totalBytes += t.info.bytes;
    } else if (dtype == DType::I64) {
        m_totalBytes -= t.info.bytes;
        t.info.bytes = t.info.elements() * 8;
        m_totalBytes += t.info.bytes;
    }
}

void TinySource::addDsv4Layer(const std::string &p, int layer, int ratio, int vocabSize) {
    const TinyDims &d = m_dims;
    const int64_t H = d.hidden, hc = d.hcMult, M = (2 + hc) * hc, D = d.headDim, nh = d.mlaHeads;
    const DType fp8 = DType::FP8Scaled;
    addDsv4(p + "hc_attn_fn", {M, hc * H}, Init::Matrix, DType::F32);
    addDsv4(p + "hc_attn_base", {M}, Init::Bias, DType::F32);
    addDsv4(p + "hc_attn_scale", {3}, Init::Norm, DType::F32);
    addDsv4(p + "hc_ffn_fn", {M, hc * H}, Init::Matrix, DType::F32);
    addDsv4(p + "hc_ffn_base", {M}, Init::Bias, DType::F32);
    addDsv4(p + "hc_ffn_scale", {3}, Init::Norm, DType::F32);
    addDsv4(p + "attn_norm.weight", {H}, Init::Norm);
    addDsv4(p + "ffn_norm.weight", {H}, Init::Norm);
    const std::string a = p + "attn.";
    addDsv4(a + "attn_sink", {nh}, Init::CenteredBias, DType::F32);
    addDsv4(a + "wq_a.weight", {d.qLora, H}, Init::Matrix, fp8);
    addDsv4(a + "q_norm.weight", {d.qLora}, Init::Norm);
    addDsv4(a + "wq_b.weight", {nh * D, d.qLora}, Init::Matrix, fp8);
    addDsv4(a + "wkv.weight", {D, H}, Init::Matrix, fp8);
    addDsv4(a + "kv_norm.weight", {D}, Init::Norm);
    addDsv4(a + "wo_a.weight", {int64_t(d.oGroups) * d.oLora, nh * D / d.oGroups}, Init::Matrix, fp8);
    addDsv4(a + "wo_b.weight", {H, int64_t(d.oGroups) * d.oLora}, Init::OutMatrix, fp8);
    if (ratio > 0) {
        const int64_t c = ratio == 4 ? 2 : 1;
        const std::string k = a + "compressor.";
        addDsv4(k + "wkv.weight", {c * D, H}, Init::Matrix);
        addDsv4(k + "wgate.weight", {c * D, H}, Init::Matrix);
        addDsv4(k + "ape", {ratio, c * D}, Init::CenteredBias, DType::F32);
        addDsv4(k + "norm.weight", {D}, Init::Norm);
    }
    if (ratio == 4) {
        const std::string i = a + "indexer.";
        addDsv4(i + "wq_b.weight", {int64_t(d.indexHeads) * d.indexHeadDim, d.qLora}, Init::Matrix, fp8);
        addDsv4(i + "weights_proj.weight", {d.indexHeads, H}, Init::Matrix);
        addDsv4(i + "compressor.wkv.weight", {2 * int64_t(d.indexHeadDim), H}, Init::Matrix);
        addDsv4(i + "compressor.wgate.weight", {2 * int64_t(d.indexHeadDim), H}, Init::Matrix);
        addDsv4(i + "compressor.ape", {4, 2 * int64_t(d.indexHeadDim)}, Init::CenteredBias, DType::F32);
        addDsv4(i + "compressor.norm.weight", {d.indexHeadDim}, Init::Norm);
    }
    const std::string f = p + "ffn.";
    addDsv4(f + "gate.weight", {d.experts, H}, Init::Matrix);
    if (layer < d.hashLayers)
        addDsv4(f + "gate.tid2eid", {vocabSize, d.topK}, Init::HashIds, DType::I64);
    else
        addDsv4(f + "gate.bias", {d.experts}, Init::Bias, DType::F32);
    addDsv4(f + "shared_experts.w1.weight", {d.moeInter, H}, Init::Matrix, fp8);
    addDsv4(f + "shared_experts.w2.weight", {H, d.moeInter}, Init::Matrix, fp8);
    addDsv4(f + "shared_experts.w3.weight", {d.moeInter, H}, Init::Matrix, fp8);
    for (int e = 0; e < d.experts; ++e) {
        const std::string x = f + "experts." + std::to_string(e) + ".";
        addDsv4(x + "w1.weight", {d.moeInter, H}, Init::Matrix, DType::MXFP4);
        addDsv4(x + "w2.weight", {H, d.moeInter}, Init::Matrix, DType::MXFP4);
        addDsv4(x + "w3.weight", {d.moeInter, H}, Init::Matrix, DType::MXFP4);
    }
}

void TinySource::addDsv4Tensors(int vocabSize) {
    const TinyDims &d = m_dims;
    const int64_t H = d.hidden, hc = d.hcMult;
    addDsv4("embed.weight", {vocabSize, H}, Init::Embedding);
    for (int L = 0; L < d.layers; ++L)
        addDsv4Layer("layers." + std::to_string(L) + ".", L, d.compressRatios[size_t(L)], vocabSize);
    for (int m = 0; m < d.mtpLayers; ++m) { // the MTP block: a full block plus its own projections and head mix
        const std::string p = "mtp." + std::to_string(m) + ".";
        addDsv4Layer(p, d.layers + m, d.compressRatios[size_t(d.layers + m)], vocabSize);
        addDsv4(p + "e_proj.weight", {H, H}, Init::Matrix, DType::FP8Scaled);
        addDsv4(p + "h_proj.weight", {H, H}, Init::Matrix, DType::FP8Scaled);
        addDsv4(p + "enorm.weight", {H}, Init::Norm);
        addDsv4(p + "hnorm.weight", {H}, Init::Norm);
        addDsv4(p + "norm.weight", {H}, Init::Norm);
        addDsv4(p + "hc_head_fn", {hc, hc * H}, Init::Matrix, DType::F32);
        addDsv4(p + "hc_head_base", {hc}, Init::Bias, DType::F32);
        addDsv4(p + "hc_head_scale", {1}, Init::Norm, DType::F32);
    }
    addDsv4("norm.weight", {H}, Init::Norm);
    addDsv4("head.weight", {vocabSize, H}, Init::Matrix);
    addDsv4("hc_head_fn", {hc, hc * H}, Init::Matrix, DType::F32);
    addDsv4("hc_head_base", {hc}, Init::Bias, DType::F32);
    addDsv4("hc_head_scale", {1}, Init::Norm, DType::F32);
}

std::string TinySource::dsv4Config(int vocabSize, int bosId, int eosId) const {
    const TinyDims &d = m_dims;
    ojson c;
    c["architectures"] = {"DeepseekV4ForCausalLM"};
    c["attention_bias"] = false;
    c["attention_dropout"] = 0.0;
    c["bos_token_id"] = bosId;
    c["eos_token_id"] = eosId;
    c["expert_dtype"] = "fp4";
    c["hc_eps"] = 1e-06;
    c["hc_mult"] = d.hcMult;
    c["hc_sinkhorn_iters"] = 20;
    c["head_dim"] = d.headDim;
    c["hidden_act"] = "silu";
    c["hidden_size"] = d.hidden;
    c["index_head_dim"] = d.indexHeadDim;
    c["index_n_heads"] = d.indexHeads;
    c["index_topk"] = d.indexTopk;
    c["initializer_range"] = 0.02;
    c["max_position_embeddings"] = 1048576;
    c["model_type"] = "deepseek_v4";
    c["moe_intermediate_size"] = d.moeInter;
    c["n_routed_experts"] = d.experts;
    c["n_shared_experts"] = d.shared;
    c["norm_topk_prob"] = true;
    c["num_attention_heads"] = d.mlaHeads;
    c["num_experts_per_tok"] = d.topK;
    c["num_hidden_layers"] = d.layers;
    c["num_hash_layers"] = d.hashLayers;
    c["num_key_value_heads"] = 1;
    c["num_nextn_predict_layers"] = d.mtpLayers;
    c["o_groups"] = d.oGroups;
    c["o_lora_rank"] = d.oLora;
    c["q_lora_rank"] = d.qLora;
    c["qk_rope_head_dim"] = d.qkRope;
    c["quantization_config"] = {{"activation_scheme", "dynamic"},
                                {"fmt", "e4m3"},
                                {"quant_method", "fp8"},
                                {"scale_fmt", "ue8m0"},
                                {"weight_block_size", {128, 128}}};
    c["rms_norm_eps"] = 1e-06;
    // Flash's YaRN (factor 16 over 65536) scaled so the blend spans the tiny rotated dims.
    c["rope_scaling"] = {{"beta_fast", 32}, {"beta_slow", 1}, {"factor", 4}, {"original_max_position_embeddings", 256},
                         {"type", "yarn"}};
    c["rope_theta"] = 10000;
    c["routed_scaling_factor"] = 1.5;
    c["scoring_func"] = "sqrtsoftplus";
    c["sliding_window"] = d.window;
    c["swiglu_limit"] = 10.0;
    c["tie_word_embeddings"] = false;
    c["topk_method"] = "noaux_tc";
    c["torch_dtype"] = "bfloat16";
    c["transformers_version"] = "4.57.1";
    c["use_cache"] = true;
    c["vocab_size"] = vocabSize;
    c["compress_rope_theta"] = 160000;
    c["compress_ratios"] = d.compressRatios;
    return c.dump(2) + "\n";
}

} // namespace waste::convert
