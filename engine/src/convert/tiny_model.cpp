#include "convert/tiny_model.hpp"

#include "convert/converter.hpp"
#include "convert/file_io.hpp"
#include "format/f16.hpp"
#include "convert/parallel.hpp"
#include "convert/random.hpp"
#include "convert/safetensors.hpp"
#include "convert/tiny_family_tokenizers.hpp"

#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

namespace waste::convert {

using ojson = nlohmann::ordered_json;

namespace {
constexpr int kMerges = 240;
const char *kSpecials[] = {"[BOS]", "[EOS]", "<|im_end|>", "<|im_user|>", "<|im_assistant|>", "<|im_system|>",
                           "<|im_middle|>", "<|end_of_msg|>", "<|open|>", "<|close|>", "<|sep|>", "<|media_begin|>",
                           "<|media_content|>", "<|media_pad|>", "<|media_end|>", "<|kimi_image_placeholder|>"};
constexpr int kSpecialCount = sizeof(kSpecials) / sizeof(kSpecials[0]);

const char *kChatTemplate =
    "{%- for message in messages -%}"
    "{%- if message['role'] == 'system' -%}<|im_system|>system<|im_middle|>"
    "{%- elif message['role'] == 'user' -%}<|im_user|>user<|im_middle|>"
    "{%- else -%}<|im_assistant|>assistant<|im_middle|>{%- endif -%}"
    "{{ message['content'] }}<|im_end|>"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|im_assistant|>assistant<|im_middle|>{%- endif -%}";
} // namespace

TinyDims tinyDimsLike(const std::string &configJson)
{
    nlohmann::json c;
    try {
        c = nlohmann::json::parse(configJson);
    } catch (const std::exception &e) {
        throw Error(ErrorCode::Argument, std::string("mktiny --like: the config is not JSON: ") + e.what());
    }
    const std::string type = c.value("model_type", "");
    if (type != "kimi_linear")
        throw Error(ErrorCode::Unsupported, "mktiny --like makes Kimi-Linear shapes (model_type kimi_linear), not '" +
                                                type + "'");
    auto need = [&](const nlohmann::json &j, const char *key) {
        if (!j.contains(key) || !j.at(key).is_number_integer() || j.at(key).get<int64_t>() <= 0)
            throw Error(ErrorCode::Argument, std::string("mktiny --like: the config has no positive integer '") + key + "'");
        return int(j.at(key).get<int64_t>());
    };
    TinyDims d;
    d.hidden = need(c, "hidden_size");
    d.layers = need(c, "num_hidden_layers");
    d.inter = need(c, "intermediate_size");
    d.moeInter = need(c, "moe_intermediate_size");
    d.experts = need(c, "num_experts");
    d.topK = need(c, "num_experts_per_token");
    d.shared = c.value("num_shared_experts", 1);
    d.firstDense = c.value("first_k_dense_replace", 1);
    d.mlaHeads = need(c, "num_attention_heads");
    d.qkNope = need(c, "qk_nope_head_dim");
    d.qkRope = need(c, "qk_rope_head_dim");
    d.vHead = need(c, "v_head_dim");
    d.kvLora = need(c, "kv_lora_rank");
    d.vocab = need(c, "vocab_size");
    if (!c.contains("linear_attn_config") || !c.at("linear_attn_config").is_object())
        throw Error(ErrorCode::Argument, "mktiny --like: the config has no linear_attn_config");
    const nlohmann::json &la = c.at("linear_attn_config");
    d.kdaHeads = need(la, "num_heads");
    d.kdaHeadDim = need(la, "head_dim");
    d.convKernel = la.value("short_conv_kernel_size", 4);
    d.kdaLayers = la.value("kda_layers", std::vector<int>{});
    d.fullAttnLayers = la.value("full_attn_layers", std::vector<int>{});
    if (d.hidden % 64 != 0 || d.moeInter % 64 != 0 || d.inter % 64 != 0)
        throw Error(ErrorCode::Unsupported, "mktiny --like: widths must be multiples of 64 (VQ records are blocked by 64 rows)");
    if (d.firstDense < 0 || d.firstDense >= d.layers || d.topK > d.experts)
        throw Error(ErrorCode::Argument, "mktiny --like: first_k_dense_replace or num_experts_per_token is out of range");
    return d;
}

TinyDims tinyDimsFor(const TinyModelOptions &o) {
    if (!o.likeConfig.empty()) {
        if (!o.arch.empty() && o.arch != "kimi-linear")
            throw Error(ErrorCode::Argument, "mktiny --like makes Kimi-Linear shapes; leave --arch out");
        TinyDims d = tinyDimsLike(o.likeConfig);
        d.expertDType = tinyExpertDType(o.experts, DType::BF16);
        return d;
    }
    TinyDims d;
    if (o.arch == "deepseek-v3" || o.arch == "kimi-k2") return tinyDeepseekDims(o);
    if (o.arch == "deepseek-v32" || o.arch == "glm-moe-dsa") return tinyDsaDims(o);
    if (o.arch == "qwen3-next") return tinyQwen3NextDims(o);
    if (o.arch == "glm4-moe") return tinyGlm4MoeDims(o);
    if (o.arch == "qwen3.5-moe") return tinyQwen35MoeDims(o);
    if (o.arch == "deepseek-v4") return tinyDsv4Dims(o);
    if (o.glmAir) throw Error(ErrorCode::Argument, "mktiny: the Air variant is GLM-4.5's (--arch glm4-moe)");
    d.vision = o.vision;
    d.expertDType = tinyExpertDType(o.experts, DType::BF16);
    if (!o.arch.empty() && o.arch != "qwen3-moe" && o.arch != "gpt-oss")
        throw Error(ErrorCode::Argument, "mktiny --arch must be kimi-linear, kimi-k3, deepseek-v3, kimi-k2, deepseek-v32, deepseek-v4, "
                                         "qwen3-moe, qwen3-next, qwen3.5-moe, gpt-oss, glm4-moe or glm-moe-dsa, not '" + o.arch + "'");
    if (o.arch == "gpt-oss") {
        // gpt-oss-20b's proportions, scaled down: experts as wide as hidden (2880 = 2880),
        // query heads wider than hidden (64 x 64 = 4096 there, 8 x 32 = 256 here) over
        // a quarter as many key/value heads (8 there, 2 here), experts 32/4 -> 8/4,
        // sliding and full attention alternating, a window of 16 (128 there) so short
        // prompts wrap the ring. Its experts ship only as MXFP4.
        d.arch = o.arch;
        d.hidden = 128;
        d.layers = 4;
        d.firstDense = 0;
        d.mlaHeads = 8;
        d.kvHeads = 2;
        d.headDim = 32;
        d.moeInter = 128;
        d.experts = 8;
        d.topK = 4;
        d.shared = 0;
        d.window = 16;
        if (o.experts != TinyExperts::Default && o.experts != TinyExperts::MXFP4)
            throw Error(ErrorCode::Argument, "gpt-oss releases ship their experts as MXFP4 only");
        d.expertDType = DType::MXFP4;
        if (o.targetBytes > 0) {
            const auto perExpert = static_cast<int64_t>(3.0 * d.moeInter * d.hidden * tinyExpertBytesPerWeight(d.expertDType));
            d.experts = static_cast<int>(std::clamp<int64_t>(o.targetBytes / (perExpert * d.layers), 8, 4096));
        }
        return d;
    }
    if (o.arch == "qwen3-moe") {
        // Qwen3-30B-A3B's proportions, scaled down: query heads wider than hidden (4 x 64
        // = 256 here, 32 x 128 = 4096 over 2048 there), 2 query heads per key/value head,
        // experts 128/8 -> 16/4, every layer MoE (unless mlpOnlyLayers), moe_intermediate_size
        // 3/8 of hidden.
        d.arch = o.arch;
        for (int L : o.mlpOnlyLayers)
            if (L < 0 || L >= 4)
                throw Error(ErrorCode::Argument, "mlp-only layers of the tiny Qwen3-MoE are 0 to 3");
        d.mlpOnlyLayers = o.mlpOnlyLayers;
        d.hidden = 128;
        d.layers = 4;
        d.firstDense = 0;
        d.mlaHeads = 4;
        d.kvHeads = 2;
        d.headDim = 64;
        d.moeInter = 48;
        d.experts = 16;
        d.topK = 4;
        d.shared = 0;
        if (o.targetBytes > 0) {
            const auto perExpert = static_cast<int64_t>(3.0 * d.moeInter * d.hidden * tinyExpertBytesPerWeight(d.expertDType));
            d.experts = static_cast<int>(std::clamp<int64_t>(o.targetBytes / (perExpert * d.layers), 16, 4096));
        }
        return d;
    }
    if (o.k3) {
        // K3's proportions, scaled down: latent = hidden/2, Ms = 2 Im, I >= 2 Im, about
        // 3 KDA : 1 MLA, experts 896/16 -> 16/4; blocks of 2 layers close at 0, 2, 4.
        d.k3 = true;
        d.prefix = "language_model.";
        d.hidden = 256;
        d.layers = 6;
        d.inter = 256;
        d.moeInter = 64;
        d.latent = 128;
        d.experts = 16;
        d.topK = 4;
        d.shared = 2;
        d.kdaHeads = 4;
        d.kdaHeadDim = 64;
        d.mlaHeads = 4;
        d.qLora = 96;
        d.kdaLayers = {1, 2, 4, 5};
        d.fullAttnLayers = {3, 6};
        d.attnResBlock = 2;
        d.expertDType = tinyExpertDType(o.experts, DType::MXFP4);
        if (o.targetBytes > 0) {
            const auto perExpert = static_cast<int64_t>(3.0 * d.moeInter * d.latent * tinyExpertBytesPerWeight(d.expertDType));
            const int64_t e = o.targetBytes / (perExpert * (d.layers - d.firstDense));
            d.experts = static_cast<int>(std::clamp<int64_t>(e, 16, 4096));
        }
        return d;
    }
    if (o.targetBytes > 0) {
        // Benchmark scale: wider, 8 layers (MLA at 4 and 8), experts added until the
        // source reaches about the requested size.
        d.hidden = 512;
        d.inter = 1024;
        d.moeInter = 512;
        d.kdaHeadDim = 128;
        d.mlaHeads = 8;
        d.layers = 8;
        d.kdaLayers = {1, 2, 3, 5, 6, 7};
        d.fullAttnLayers = {4, 8};
        const auto perExpert = static_cast<int64_t>(3.0 * d.moeInter * d.hidden * tinyExpertBytesPerWeight(d.expertDType));
        const int64_t moeLayers = d.layers - d.firstDense;
        const int64_t e = o.targetBytes / (perExpert * moeLayers);
        d.experts = static_cast<int>(std::clamp<int64_t>(e, 8, 4096));
        d.topK = 4;
    }
    return d;
}

void TinySource::add(const std::string &name, std::vector<int64_t> shape, Init init, DType dtype) {
    Tensor t;
    t.info.name = name;
    t.info.dtype = dtype;
    t.info.shape = std::move(shape);
    if (dtype == DType::FP8Scaled || dtype == DType::INT4Grouped)
        tinyExpertBlocks(m_options.experts, t.info.rows(), t.info.rowLength(), t.info.blockRows, t.info.blockCols);
    t.info.bytes = tinyStoredBytes(t.info);
    t.init = init;
    t.key = mix64(m_options.seed ^ hashString(name));
    m_totalBytes += t.info.bytes;
    m_order.push_back(name);
    m_tensors[name] = std::move(t);
}

TinySource::TinySource(const TinyModelOptions &options) : m_options(options), m_dims(tinyDimsFor(options)) {
    const TinyVocabulary vocab = learnTinyVocabulary(kMerges);
    const int nTokens = static_cast<int>(vocab.tokens.size());
    int vocabSize = (nTokens + kSpecialCount + 15) / 16 * 16;
    // The newer families ship their own tokenizer layout (tokenizer.json or tiktoken.model
    // with the family's split pattern and specials): a small vocabulary of that kind.
    // gpt-oss's specials keep the release's ids, so its vocabulary is the release's 201088.
    std::optional<TinyFamilyTokenizer> family;
    if (hasTinyFamilyTokenizer(m_options.arch)) {
        vocabSize = std::max(vocabSize, 512);
        family = tinyFamilyTokenizer(m_options.arch, vocabSize, !m_options.compactVocabulary, m_options.chatTemplate);
        vocabSize = family->vocabSize;
    }
    vocabSize = std::max(vocabSize, m_dims.vocab); // a release's rows (--like); the tokenizer uses the first
    if (m_dims.deepseek) addDeepseekTensors(vocabSize);
    else if (m_dims.arch == "qwen3-moe") addQwen3Tensors(vocabSize);
    else if (m_dims.arch == "qwen3-next") addQwen3NextTensors(vocabSize);
    else if (m_dims.arch == "gpt-oss") addGptOssTensors(vocabSize);
    else if (m_dims.arch == "glm4-moe") addGlm4MoeTensors(vocabSize);
    else if (m_dims.arch == "qwen3.5-moe") addQwen35MoeTensors(vocabSize);
    else if (m_dims.dsv4) addDsv4Tensors(vocabSize);
    else if (m_dims.k3) addK3Tensors(vocabSize);
    else addKimiLinearTensors(vocabSize);
    if (m_dims.vision) {
        addVisionTensors();
        ojson pre;
        pre["media_proc_cfg"] = {{"image_mean", {0.5, 0.5, 0.5}}, {"image_std", {0.5, 0.5, 0.5}}, {"patch_size", 14}};
        m_files["preprocessor_config.json"] = pre.dump(2) + "\n";
    }
    if (family) {
        // Qwen3 has no BOS: its config names <|endoftext|> (the pad token) there.
        const int bos = family->bosId >= 0 ? family->bosId : family->padId;
        m_config = m_dims.arch == "glm-moe-dsa" ? glmDsaConfig(vocabSize, family->stopIds, family->padId)
                   : m_dims.deepseek            ? deepseekConfig(vocabSize, bos, family->eosId)
                   : m_dims.arch == "qwen3-next" ? qwen3NextConfig(vocabSize, bos, family->eosId)
                   : m_dims.arch == "gpt-oss"    ? gptOssConfig(vocabSize, family->eosId, family->padId)
                   : m_dims.arch == "glm4-moe"   ? glm4MoeConfig(vocabSize, family->stopIds, family->padId)
                   : m_dims.arch == "qwen3.5-moe" ? qwen35MoeConfig(vocabSize, family->stopIds, family->padId)
                   : m_dims.dsv4                 ? dsv4Config(vocabSize, bos, family->eosId)
                                                 : qwen3Config(vocabSize, bos, family->eosId);
        m_files.insert(family->files.begin(), family->files.end());
        markGenerated();
        return;
    }
    m_config = m_dims.k3 ? k3Config(vocabSize, nTokens) : kimiLinearConfig(vocabSize, nTokens);
    putTokenizerFiles(vocab);
    markGenerated();
}

// The config says its weights are generated, not trained: a container made from it (directly
// or through the HF layout) carries the key in its manifest's config, and the forecast then
// prices the near-uniform routing of a random router (plan/forecast.cpp).
void TinySource::markGenerated() {
    ojson c = ojson::parse(m_config);
    c["waste_generated_weights"] = true;
    m_config = c.dump(2) + "\n";
}

void TinySource::putTokenizerFiles(const TinyVocabulary &vocab) {
    const int nTokens = static_cast<int>(vocab.tokens.size());
    m_files["tiktoken.model"] = vocab.rankFile;
    ojson tc;
    ojson added = ojson::object();
    for (int i = 0; i < kSpecialCount; ++i)
        added[std::to_string(nTokens + i)] = {{"content", kSpecials[i]}, {"lstrip", false}, {"normalized", false},
                                              {"rstrip", false}, {"single_word", false}, {"special", true}};
    tc["added_tokens_decoder"] = added;
    tc["bos_token"] = "[BOS]";
    // K3 ends a message with <|end_of_msg|> and renders chats with its own encoder (the
    // engine's K3 template), so it ships no Jinja template.
    tc["eos_token"] = m_dims.k3 ? "<|end_of_msg|>" : "<|im_end|>";
    tc["pad_token"] = "[EOS]";
    if (!m_dims.k3) tc["chat_template"] = kChatTemplate;
    tc["model_max_length"] = 1048576;
    tc["tokenizer_class"] = "TikTokenTokenizer";
    m_files["tokenizer_config.json"] = tc.dump(2) + "\n";
}

bool TinySource::isKdaLayer(int layer) const {
    return std::find(m_dims.kdaLayers.begin(), m_dims.kdaLayers.end(), layer + 1) != m_dims.kdaLayers.end();
}

void TinySource::addKdaInputs(const std::string &p) {
    const TinyDims &d = m_dims;
    const int C = d.kdaHeads * d.kdaHeadDim, H = d.hidden;
    for (const char *x : {"q", "k", "v"}) add(p + "self_attn." + x + "_proj.weight", {C, H}, Init::Matrix);
    for (const char *x : {"q", "k", "v"}) add(p + "self_attn." + x + "_conv1d.weight", {C, 1, d.convKernel}, Init::Conv);
    add(p + "self_attn.f_a_proj.weight", {d.kdaHeadDim, H}, Init::Matrix); // the decay gate is low-rank
    add(p + "self_attn.f_b_proj.weight", {C, d.kdaHeadDim}, Init::Matrix);
    add(p + "self_attn.b_proj.weight", {d.kdaHeads, H}, Init::Matrix);
}

void TinySource::addDenseMlp(const std::string &p, Init down) {
    const TinyDims &d = m_dims;
    add(p + "mlp.gate_proj.weight", {d.inter, d.hidden}, Init::Matrix);
    add(p + "mlp.up_proj.weight", {d.inter, d.hidden}, Init::Matrix);
    add(p + "mlp.down_proj.weight", {d.hidden, d.inter}, down);
}

void TinySource::addRouter(const std::string &m) {
    add(m + "gate.weight", {m_dims.experts, m_dims.hidden}, Init::Matrix);
    add(m + "gate.e_score_correction_bias", {m_dims.experts}, Init::Bias);
}

void TinySource::addSharedExperts(const std::string &m, Init down) {
    const TinyDims &d = m_dims;
    const int ms = d.moeInter * std::max(1, d.shared);
    add(m + "shared_experts.gate_proj.weight", {ms, d.hidden}, Init::Matrix);
    add(m + "shared_experts.up_proj.weight", {ms, d.hidden}, Init::Matrix);
    add(m + "shared_experts.down_proj.weight", {d.hidden, ms}, down);
}

void TinySource::addRoutedExperts(const std::string &m, int width) {
    const DType dt = m_dims.expertDType;
    for (int e = 0; e < m_dims.experts; ++e) {
        const std::string q = m + "experts." + std::to_string(e) + ".";
        add(q + "w1.weight", {m_dims.moeInter, width}, Init::Matrix, dt);
        add(q + "w2.weight", {width, m_dims.moeInter}, Init::Matrix, dt);
        add(q + "w3.weight", {m_dims.moeInter, width}, Init::Matrix, dt);
    }
}

void TinySource::addProjExperts(const std::string &m) {
    const TinyDims &d = m_dims;
    for (int e = 0; e < d.experts; ++e) {
        const std::string q = m + "experts." + std::to_string(e) + ".";
        add(q + "gate_proj.weight", {d.moeInter, d.hidden}, Init::Matrix, d.expertDType);
        add(q + "up_proj.weight", {d.moeInter, d.hidden}, Init::Matrix, d.expertDType);
        add(q + "down_proj.weight", {d.hidden, d.moeInter}, Init::Matrix, d.expertDType);
    }
}

void TinySource::addKimiLinearTensors(int vocabSize) {
    const TinyDims &d = m_dims;
    const int C = d.kdaHeads * d.kdaHeadDim, H = d.hidden;
    add("model.embed_tokens.weight", {vocabSize, H}, Init::Embedding);
    for (int L = 0; L < d.layers; ++L) {
        const std::string p = "model.layers." + std::to_string(L) + ".";
        add(p + "input_layernorm.weight", {H}, Init::Norm);
        if (isKdaLayer(L)) {
            addKdaInputs(p);
            add(p + "self_attn.A_log", {1, 1, d.kdaHeads, 1}, Init::ALog);
            add(p + "self_attn.dt_bias", {C}, Init::DtBias);
            add(p + "self_attn.g_a_proj.weight", {d.kdaHeadDim, H}, Init::Matrix);
            add(p + "self_attn.g_b_proj.weight", {C, d.kdaHeadDim}, Init::Matrix);
            add(p + "self_attn.o_norm.weight", {d.kdaHeadDim}, Init::Norm);
            add(p + "self_attn.o_proj.weight", {H, C}, Init::Matrix);
        } else {
            add(p + "self_attn.q_proj.weight", {d.mlaHeads * (d.qkNope + d.qkRope), H}, Init::Matrix);
            add(p + "self_attn.kv_a_proj_with_mqa.weight", {d.kvLora + d.qkRope, H}, Init::Matrix);
            add(p + "self_attn.kv_a_layernorm.weight", {d.kvLora}, Init::Norm);
            add(p + "self_attn.kv_b_proj.weight", {d.mlaHeads * (d.qkNope + d.vHead), d.kvLora}, Init::Matrix);
            add(p + "self_attn.o_proj.weight", {H, d.mlaHeads * d.vHead}, Init::Matrix);
        }
        add(p + "post_attention_layernorm.weight", {H}, Init::Norm);
        if (L < d.firstDense) {
            addDenseMlp(p, Init::Matrix);
        } else {
            const std::string m = p + "block_sparse_moe.";
            addRouter(m);
            addSharedExperts(m, Init::Matrix);
            addRoutedExperts(m, H);
        }
    }
    add("model.norm.weight", {H}, Init::Norm);
    add("lm_head.weight", {vocabSize, H}, Init::Matrix);
}

void TinySource::addVisionTensors() {
    const TinyDims &d = m_dims;
    const int H = d.hidden;
    const int D = d.vtHidden, Q = d.vtQkv, I = d.vtInter;
    add("vision_tower.patch_embed.proj.weight", {D, 3, 14, 14}, Init::Matrix);
    add("vision_tower.patch_embed.pos_emb.weight", {d.vtGrid, d.vtGrid, D}, Init::Embedding);
    for (int b = 0; b < d.vtLayers; ++b) {
        const std::string p = "vision_tower.encoder.blocks." + std::to_string(b) + ".";
        add(p + "norm0.weight", {D}, Init::Norm);
        add(p + "wqkv.weight", {3 * Q, D}, Init::Matrix);
        add(p + "wo.weight", {D, Q}, Init::Matrix);
        add(p + "norm1.weight", {D}, Init::Norm);
        add(p + "mlp.fc0.weight", {I, D}, Init::Matrix);
        add(p + "mlp.fc1.weight", {D, I}, Init::Matrix);
    }
    add("vision_tower.encoder.final_layernorm.weight", {D}, Init::Norm);
    add("mm_projector.proj.0.weight", {4 * D, 4 * D}, Init::Matrix);
    add("mm_projector.proj.2.weight", {H, 4 * D}, Init::Matrix);
    add("mm_projector.post_norm.weight", {H}, Init::Norm);
}

void TinySource::putHeadKeys(ojson &c, int nTokens, int eos, const char *activation) const {
    c["architectures"] = {"KimiLinearForCausalLM"};
    c["model_type"] = "kimi_linear";
    c["bos_token_id"] = nTokens;
    c["eos_token_id"] = eos;
    c["pad_token_id"] = nTokens + 1;
    c["first_k_dense_replace"] = m_dims.firstDense;
    c["head_dim"] = m_dims.qkNope + m_dims.qkRope;
    c["hidden_act"] = activation;
}

ojson TinySource::linearAttnConfig() const {
    const TinyDims &d = m_dims;
    return {{"full_attn_layers", d.fullAttnLayers},
            {"head_dim", d.kdaHeadDim},
            {"kda_layers", d.kdaLayers},
            {"num_heads", d.kdaHeads},
            {"short_conv_kernel_size", d.convKernel}};
}

void TinySource::putMoeKeys(ojson &c) const {
    c["model_max_length"] = 1048576;
    c["moe_intermediate_size"] = m_dims.moeInter;
    c["moe_layer_freq"] = 1;
    c["moe_renormalize"] = true;
    c["moe_router_activation_func"] = "sigmoid";
}

void TinySource::putCountKeys(ojson &c) const {
    const TinyDims &d = m_dims;
    c["num_experts"] = d.experts;
    c["num_experts_per_token"] = d.topK;
    c["num_hidden_layers"] = d.layers;
    c["num_key_value_heads"] = d.mlaHeads;
    c["num_nextn_predict_layers"] = 0;
    c["num_shared_experts"] = d.shared;
}

void TinySource::putRopeKeys(ojson &c) const {
    c["qk_nope_head_dim"] = m_dims.qkNope;
    c["qk_rope_head_dim"] = m_dims.qkRope;
    c["rms_norm_eps"] = 1e-05;
    c["rope_scaling"] = nullptr;
    c["rope_theta"] = 10000.0;
}

std::string TinySource::kimiLinearConfig(int vocabSize, int nTokens) const {
    const TinyDims &d = m_dims;
    // config.json in Kimi-Linear's shape.
    ojson c;
    putHeadKeys(c, nTokens, nTokens + 2, "silu");
    c["hidden_size"] = d.hidden;
    c["initializer_range"] = 0.02;
    c["intermediate_size"] = d.inter;
    c["kv_lora_rank"] = d.kvLora;
    c["linear_attn_config"] = linearAttnConfig();
    c["mla_use_nope"] = true;
    putMoeKeys(c);
    c["num_attention_heads"] = d.mlaHeads;
    c["num_expert_group"] = 1;
    putCountKeys(c);
    c["q_lora_rank"] = nullptr;
    putRopeKeys(c);
    c["routed_scaling_factor"] = 2.446;
    c["tie_word_embeddings"] = false;
    c["topk_group"] = 1;
    c["torch_dtype"] = "bfloat16";
    c["use_cache"] = true;
    c["use_grouped_topk"] = true;
    c["v_head_dim"] = d.vHead;
    c["vocab_size"] = vocabSize;
    putQuantizationConfig(c);
    if (d.vision) addVisionConfig(c, nTokens);
    return c.dump(2) + "\n";
}

// The multimodal part of config.json, the same for both architectures.
void TinySource::addVisionConfig(nlohmann::ordered_json &c, int nTokens) const {
    const TinyDims &d = m_dims;
    c["media_placeholder_token_id"] = nTokens + 13; // <|media_pad|>
    c["vision_config"] = {{"patch_size", 14},
                          {"init_pos_emb_height", d.vtGrid},
                          {"init_pos_emb_width", d.vtGrid},
                          {"vt_hidden_size", d.vtHidden},
                          {"vt_num_attention_heads", d.vtHeads},
                          {"qkv_hidden_size", d.vtQkv},
                          {"vt_intermediate_size", d.vtInter},
                          {"vt_num_hidden_layers", d.vtLayers},
                          {"merge_kernel_size", {2, 2}},
                          {"vt_rms_eps", 1.1920928955078125e-07},
                          {"max_patches", 64}};
}

std::optional<std::string> TinySource::sideFile(const std::string &name) const {
    auto it = m_files.find(name);
    if (it == m_files.end()) return std::nullopt;
    return it->second;
}

std::vector<std::string> TinySource::tensorNames() const {
    std::vector<std::string> names;
    for (const auto &[n, t] : m_tensors) names.push_back(n);
    return names;
}

SourceTensor TinySource::info(const std::string &name) const {
    auto it = m_tensors.find(name);
    if (it == m_tensors.end()) throw Error(ErrorCode::Format, "tiny model has no tensor '" + name + "'");
    return it->second.info;
}

std::string TinySource::identity() const { return sourceIdentity(m_config, m_totalBytes, tensorNames()); }

void TinySource::generate(const Tensor &t, int64_t first, int64_t count, float *out) const {
    const int64_t n = t.info.rowLength();
    const double fan = static_cast<double>(t.info.shape.size() >= 2 ? n : 1);
    for (int64_t i = 0; i < count; ++i) {
        const uint64_t idx = static_cast<uint64_t>(first + i);
        if (t.init == Init::HashIds) { // row r: top-k consecutive experts (mod E) from a start drawn per row
            const uint64_t k = uint64_t(n), row = idx / k, E = uint64_t(m_dims.experts);
            out[i] = float((mix64(t.key ^ (row * 0x9E3779B97F4A7C15ull)) % E + idx % k) % E);
            continue;
        }
        // Box-Muller pairs: elements 2k and 2k+1 share their two uniforms (cos / sin).
        const uint64_t pair = idx >> 1;
        const double u1 = uniform01(t.key, 2 * pair), u2 = uniform01(t.key, 2 * pair + 1);
        const double r = std::sqrt(-2.0 * std::log(u1));
        const double g = (idx & 1) ? r * std::sin(6.283185307179586 * u2) : r * std::cos(6.283185307179586 * u2);
        double v = 0;
        switch (t.init) {
        case Init::Matrix: v = g / std::sqrt(fan); break;
        case Init::OutMatrix: v = 0.25 * g / std::sqrt(fan); break;
        case Init::Embedding: v = g; break;
        case Init::Norm: v = 1.0 + 0.1 * g; break;
        case Init::CentredNorm: v = 0.1 * g; break;
        case Init::ResWeight: v = 0.1 * g; break;
        case Init::ALog: v = std::log(1.0 + 15.0 * u1); break;
        case Init::ALogPadded: v = idx < static_cast<uint64_t>(m_dims.kdaHeads) ? std::log(1.0 + 15.0 * u1) : 0.0; break;
        case Init::DtBias: v = -3.0 + 0.5 * g; break;
        case Init::CenteredBias: v = 0.5 * g; break;
        case Init::Conv: v = 0.5 * g; break;
        case Init::Bias: v = 0.05 * g; break;
        case Init::HashIds: break; // above
        }
        out[i] = format::bf16ToFloat(format::floatToBf16(static_cast<float>(v))); // the checkpoint's precision
    }
}

} // namespace waste::convert
