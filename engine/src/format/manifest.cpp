#include "format/manifest.hpp"

#include "format/arch_names.hpp"
#include "format/deepseek_config.hpp"
#include "format/manifest_keys.hpp"
#include "format/native_record.hpp"
#include "format/release_config.hpp"

#include "waste/waste.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace waste::format {
namespace {

using nlohmann::json;

[[noreturn]] void refuse(const std::string &where, const std::string &what)
{
    throw Error(ErrorCode::Format, where + ": " + what + kContainerAdvice);
}

// WASTE reads numbers with atof and truncates integers toward zero; a value that is not
// a number (null, true, a string) yields the field's default.
bool numberOf(const json &obj, const char *key, double &out)
{
    if (!obj.is_object())
        return false;
    auto it = obj.find(key);
    if (it == obj.end() || !it->is_number())
        return false;
    out = it->get<double>();
    return true;
}

int64_t intField(const json &obj, const char *key, int64_t def, int64_t lo, int64_t hi, const std::string &where)
{
    double d;
    if (!numberOf(obj, key, d))
        return def;
    const double t = std::trunc(d);
    if (!(t >= static_cast<double>(lo) && t <= static_cast<double>(hi)))
        refuse(where, std::string("config key '") + key + "' = " + std::to_string(d) + " is out of range [" +
                          std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return static_cast<int64_t>(t);
}

float floatField(const json &obj, const char *key, float def)
{
    double d;
    if (!numberOf(obj, key, d))
        return def;
    return static_cast<float>(d);
}

bool present(const json &obj, const char *key) { return obj.is_object() && obj.contains(key); }

} // namespace

std::string configArch(const json &cfg)
{
    std::string name;
    auto firstString = [](const json &o, const char *key) -> std::string {
        if (!o.is_object())
            return {};
        auto it = o.find(key);
        if (it == o.end() || !it->is_array() || it->empty() || !(*it)[0].is_string())
            return {};
        return (*it)[0].get<std::string>();
    };
    if (cfg.is_object() && cfg.contains("_outer"))
        name = firstString(cfg["_outer"], "architectures");
    if (name.empty())
        name = firstString(cfg, "architectures");
    // A config without "architectures" is named by its model_type (a wrapper's, where its text
    // model's config names none).
    std::string type = cfg.is_object() ? cfg.value("model_type", std::string()) : std::string();
    if (type.empty() && cfg.is_object() && cfg.contains("_outer") && cfg["_outer"].is_object())
        type = cfg["_outer"].value("model_type", std::string());
    const std::string arch = archNamed(name, type);
    if (!arch.empty())
        return arch;
    return name.empty() ? "unknown" : name;
}

ModelConfig readModelConfig(const json &cfg, const std::string &where)
{
    if (!cfg.is_object())
        refuse(where, "'config' is missing or not an object");
    ModelConfig c;
    c.arch = configArch(cfg);
    c.layers = static_cast<int>(intField(cfg, "num_hidden_layers", 0, 0, Limits::kMaxLayers, where));
    c.hidden = static_cast<int>(intField(cfg, "hidden_size", 0, 0, Limits::kMaxHidden, where));
    c.vocab = static_cast<int>(intField(cfg, "vocab_size", 0, 0, Limits::kMaxVocab, where));
    c.heads = static_cast<int>(intField(cfg, "num_attention_heads", 0, 0, Limits::kMaxHeads, where));
    if (c.layers <= 0 || c.hidden <= 0 || c.vocab <= 0 || c.heads <= 0)
        refuse(where, "config needs num_hidden_layers, hidden_size, vocab_size and num_attention_heads > 0");
    c.experts = static_cast<int>(intField(cfg, "num_experts", 0, 0, Limits::kMaxExperts, where));
    c.topK = static_cast<int>(intField(cfg, "num_experts_per_token", 0, 0, Limits::kMaxTopK, where));
    c.moeInter = static_cast<int>(intField(cfg, "moe_intermediate_size", 0, 0, Limits::kMaxInter, where));
    c.sharedExperts = static_cast<int>(intField(cfg, "num_shared_experts", 0, 0, 64, where));
    c.firstDense = static_cast<int>(intField(cfg, "first_k_dense_replace", 0, 0, Limits::kMaxLayers, where));
    c.inter = static_cast<int>(intField(cfg, "intermediate_size", 0, 0, Limits::kMaxInter, where));
    c.kvLora = static_cast<int>(intField(cfg, "kv_lora_rank", 0, 0, Limits::kMaxHeadDim, where));
    c.qLora = static_cast<int>(intField(cfg, "q_lora_rank", 0, 0, 1 << 20, where));
    c.qkNope = static_cast<int>(intField(cfg, "qk_nope_head_dim", 0, 0, Limits::kMaxHeadDim, where));
    c.qkRope = static_cast<int>(intField(cfg, "qk_rope_head_dim", 0, 0, Limits::kMaxHeadDim, where));
    c.vHead = static_cast<int>(intField(cfg, "v_head_dim", 0, 0, Limits::kMaxHeadDim, where));
    c.eps = floatField(cfg, "rms_norm_eps", 1e-5f);
    // A wrapper (K3, K2.5) may say it for its text model.
    for (const json *o : {&cfg, cfg.contains("_outer") ? &cfg["_outer"] : nullptr})
        if (o && o->is_object() && o->contains("tie_word_embeddings") && (*o)["tie_word_embeddings"].is_boolean())
            c.tiedEmbeddings = c.tiedEmbeddings || (*o)["tie_word_embeddings"].get<bool>();
    c.routedScale = floatField(cfg, "routed_scaling_factor", 1.0f);
    c.renormalize = present(cfg, "moe_renormalize");
    c.eosId = intField(cfg, "eos_token_id", 0, std::numeric_limits<int32_t>::min(),
                       std::numeric_limits<int32_t>::max(), where);
    if (isGqaFamily(c.arch))
        readGqaConfig(cfg, c, where); // their own keys for experts, top-k, routing and attention

    const json empty = json::object();
    const json &lin = (cfg.contains("linear_attn_config") && cfg["linear_attn_config"].is_object())
                          ? cfg["linear_attn_config"] : empty;
    c.kdaHeads = static_cast<int>(intField(lin, "num_heads", 0, 0, Limits::kMaxHeads, where));
    c.kdaDim = static_cast<int>(intField(lin, "head_dim", 0, 0, Limits::kMaxHeadDim, where));
    c.convK = static_cast<int>(intField(lin, "short_conv_kernel_size", 4, 0, Limits::kMaxConvK, where));
    c.isKda.assign(static_cast<size_t>(c.layers), false);
    if (lin.contains("kda_layers") && lin["kda_layers"].is_array()) {
        for (const json &v : lin["kda_layers"]) {
            if (!v.is_number())
                continue;
            const double t = std::trunc(v.get<double>());
            if (t >= 1 && t <= c.layers)
                c.isKda[static_cast<size_t>(t) - 1] = true;
        }
    }
    c.fullRankGate = present(lin, "use_full_rank_gate");
    c.gateLowerBound = floatField(lin, "gate_lower_bound", 0.0f);

    c.latentMoe = static_cast<int>(intField(cfg, "routed_expert_hidden_size", 0, 0, 1 << 20, where));
    c.latentNorm = present(cfg, "latent_moe_use_norm");
    c.attnResBlock = static_cast<int>(intField(cfg, "attn_res_block_size", 0, 0, c.layers, where));
    c.mlaOutputGate = present(cfg, "mla_use_output_gate");
    if (cfg.contains("hidden_act") && cfg["hidden_act"].is_string())
        c.situ = cfg["hidden_act"].get<std::string>() == "situ";
    c.situBeta = floatField(cfg, "activation_situ_beta", 1.0f);
    c.situLinearBeta = floatField(cfg, "activation_situ_linear_beta", 0.0f);
    if (isDeepseekFamily(c.arch))
        readDeepseekConfig(cfg, c, where);
    if (isDsaArch(c.arch))
        readDsaConfig(cfg, c, where);
    if (c.arch == "qwen3-next" || c.arch == "qwen3.5-moe")
        readQwen3NextLayers(cfg, c, where); // Gated DeltaNet layers in isKda
    if (isDsv4Family(c.arch))
        readDsv4Config(cfg, c, where); // its own attention, residual streams and routing

    // Geometry the forward pass relies on.
    if (c.experts > 0) {
        if (c.topK < 1 || c.topK > c.experts)
            refuse(where, "num_experts_per_token must be between 1 and num_experts");
        // (Any width runs as released; VQ3R codes need multiples of 8, which the converter asks
        // for when it encodes them, convert/unit_plan.cpp.)
        if (c.moeInter <= 0 || c.expertWidth() <= 0)
            refuse(where, "moe_intermediate_size and the expert input width must be positive");
        if (c.latentMoe > Limits::kMaxHidden)
            refuse(where, "routed_expert_hidden_size is too large");
    }
    const int nKda = c.kdaLayerCount();
    if (nKda > 0 && !c.g.next && (c.kdaHeads <= 0 || c.kdaDim <= 0 || c.convK < 1))
        refuse(where, "linear_attn_config needs num_heads, head_dim and short_conv_kernel_size > 0");
    if (nKda < c.layers && !c.g.on && !c.v4.on) {
        if (c.kvLora <= 0 || c.vHead <= 0 || c.qkNope + c.qkRope <= 0)
            refuse(where, "MLA layers need kv_lora_rank, v_head_dim and qk head dims > 0");
    }
    if (c.firstDense > 0 && c.inter <= 0)
        refuse(where, "dense layers need intermediate_size > 0");
    if (!(c.eps >= 0.0f) || !std::isfinite(c.eps))
        refuse(where, "rms_norm_eps must be a finite non-negative number");
    return c;
}

namespace {

ExpertQuant parseQuant(const json &m, const std::string &where)
{
    ExpertQuant q;
    if (!m.contains(key::kExpertQuant) || !m[key::kExpertQuant].is_object())
        return q;
    const json &e = m[key::kExpertQuant];
    if (e.contains(key::kFmt) && e[key::kFmt].is_string())
        q.fmtName = e[key::kFmt].get<std::string>();
    // Native records carry the release's encoding; the VQ keys below do not apply to them.
    if (const auto native = nativeFmtFromName(q.fmtName)) {
        q.native = *native;
        return q;
    }
    q.stages = static_cast<int>(intField(e, key::kStages, 3, 1, 8, where));
    q.vecDim = static_cast<int>(intField(e, key::kVecDim, 8, 8, 8, where));
    q.entries = static_cast<int>(intField(e, key::kEntries, 256, 1, 256, where));
    q.indexBits = static_cast<int>(intField(e, key::kIndexBits, 8, 0, 64, where));
    if (q.indexBits == 6) {
        if (q.stages != 4 || q.entries != 64)
            refuse(where, "expert_quant index_bits 6 needs stages 4 and entries 64");
    } else if (q.indexBits != 8) {
        refuse(where, "expert_quant index_bits must be 8 or 6");
    }
    double block;
    if (numberOf(e, key::kIndexBlock, block) && std::trunc(block) != 64)
        refuse(where, "expert_quant index_block must be 64");
    return q;
}

bool safeFileName(const std::string &name)
{
    if (name.empty() || name.size() > 255 || name == "." || name == "..")
        return false;
    for (char ch : name)
        if (ch == '/' || ch == '\\' || ch == '\0')
            return false;
    return true;
}

std::map<int, BankEntry> parseBanks(const json &m, const ModelConfig &c, const std::string &where)
{
    std::map<int, BankEntry> banks;
    if (!m.contains(key::kLayers))
        return banks;
    const json &layers = m[key::kLayers];
    if (!layers.is_object())
        refuse(where, "'layers' is not an object");
    for (auto it = layers.begin(); it != layers.end(); ++it) {
        const std::string &key = it.key();
        if (key.empty() || key.size() > 4 || key.find_first_not_of("0123456789") != std::string::npos)
            refuse(where, "layer key '" + key.substr(0, 16) + "' is not a layer number");
        const int layer = std::stoi(key);
        if (layer >= c.layers)
            refuse(where, "layer " + key + " is beyond num_hidden_layers");
        const json &v = it.value();
        if (!v.is_object())
            refuse(where, "layer " + key + " entry is not an object");
        BankEntry b;
        b.layer = layer;
        if (!v.contains(key::kFile) || !v[key::kFile].is_string() || !safeFileName(v[key::kFile].get<std::string>()))
            refuse(where, "layer " + key + " has no valid bank file name");
        b.file = v[key::kFile].get<std::string>();
        const std::string lw = where + " layer " + key;
        b.experts = static_cast<int>(intField(v, key::kExperts, 0, 0, Limits::kMaxExperts, lw));
        b.bytes = intField(v, key::kBytes, 0, 0, int64_t(1) << 50, lw);
        b.codebookBase = intField(v, key::kCodebookBase, 0, 0, 65535, lw);
        if (b.experts != c.experts)
            refuse(where, "layer " + key + " declares " + std::to_string(b.experts) + " experts, config says " +
                              std::to_string(c.experts));
        if (b.experts <= 0 || b.bytes <= 0 || b.bytes % b.experts != 0)
            refuse(where, "layer " + key + " bank size is not a whole number of records");
        b.recordBytes = b.bytes / b.experts;
        if (b.recordBytes % 4096 != 0 || b.recordBytes < 4096)
            refuse(where, "layer " + key + " record size " + std::to_string(b.recordBytes) + " is not a multiple of 4096");
        banks[layer] = b;
    }
    return banks;
}

std::vector<TrunkEntry> parseTrunk(const json &m, const std::string &where)
{
    std::vector<TrunkEntry> out;
    if (!m.contains(key::kTrunk) || !m[key::kTrunk].is_array())
        refuse(where, "'trunk' is missing or not an array");
    const json &arr = m[key::kTrunk];
    if (arr.size() > static_cast<size_t>(Limits::kMaxTrunkEntries))
        refuse(where, "too many trunk entries");
    out.reserve(arr.size());
    for (const json &e : arr) {
        if (!e.is_object() || !e.contains(key::kName) || !e[key::kName].is_string())
            refuse(where, "a trunk entry has no name");
        TrunkEntry t;
        t.name = e[key::kName].get<std::string>();
        const std::string tw = where + " tensor " + t.name.substr(0, 120);
        t.rawFmt = static_cast<int>(intField(e, key::kFmt, 0, std::numeric_limits<int32_t>::min(),
                                             std::numeric_limits<int32_t>::max(), tw));
        t.off = intField(e, key::kOff, 0, 0, int64_t(1) << 52, tw);
        t.scaleOff = intField(e, key::kScaleOff, 0, 0, int64_t(1) << 52, tw);
        t.group = intField(e, key::kGroup, kTrunkGroup, 1, Limits::kMaxGroup, tw);
        t.bytes = intField(e, key::kBytes, 0, 0, int64_t(1) << 52, tw);
        if (!e.contains(key::kShape) || !e[key::kShape].is_array() || e[key::kShape].empty() || e[key::kShape].size() > 4)
            refuse(tw, "shape must have 1 to 4 dimensions");
        int64_t rows = 1;
        for (size_t i = 0; i < e[key::kShape].size(); ++i) {
            const json &d = e[key::kShape][i];
            if (!d.is_number())
                refuse(tw, "shape has a non-numeric dimension");
            const double v = std::trunc(d.get<double>());
            if (!(v >= 1 && v <= double(int64_t(1) << 40)))
                refuse(tw, "shape dimension out of range");
            t.shape.push_back(static_cast<int64_t>(v));
        }
        t.cols = t.shape.back();
        for (size_t i = 0; i + 1 < t.shape.size(); ++i) {
            rows *= t.shape[i];
            if (rows > (int64_t(1) << 40))
                refuse(tw, "tensor too large");
        }
        t.rows = rows;
        if (t.rows > (int64_t(1) << 44) / t.cols)
            refuse(tw, "tensor too large");
        t.format = trunkFormatOf(t.rawFmt, e.contains(key::kEncoding) && e[key::kEncoding].is_string()
                                               ? e[key::kEncoding].get<std::string>()
                                               : std::string());
        out.push_back(std::move(t));
    }
    return out;
}

} // namespace

int ModelConfig::kdaLayerCount() const
{
    int n = 0;
    for (bool b : isKda)
        n += b ? 1 : 0;
    return n;
}

const TrunkEntry *Manifest::find(const std::string &nameWithoutPrefix) const
{
    const std::string full = prefix + nameWithoutPrefix;
    for (const TrunkEntry &t : trunk)
        if (t.name == full)
            return &t;
    return nullptr;
}

namespace {

// The JSON object of a WASTE v0 manifest: valid JSON, an object, format_version 0.
json parseV0(const std::string &text, const std::string &where)
{
    json m;
    try {
        m = json::parse(text);
    } catch (const json::exception &e) {
        refuse(where, std::string("not valid JSON (") + e.what() + ")");
    }
    if (!m.is_object())
        refuse(where, "not a JSON object");
    double version;
    if (!numberOf(m, key::kFormatVersion, version))
        refuse(where, "format_version is missing");
    if (version != 0)
        throw Error(ErrorCode::Unsupported, where + ": format_version " + m[key::kFormatVersion].dump() +
                                                " is not supported (this engine reads WASTE v0 containers)");
    return m;
}

// The text model's config (config.text_config of a multimodal wrapper) and the tensor prefix.
const json &textConfig(const json &m, const std::string &where, std::string &prefix)
{
    if (m.contains(key::kTensorPrefix) && m[key::kTensorPrefix].is_string())
        prefix = m[key::kTensorPrefix].get<std::string>().substr(0, 63);
    if (!m.contains(key::kConfig))
        refuse(where, "'config' is missing");
    const json *cfg = &m[key::kConfig];
    if (cfg->is_object() && cfg->contains(key::kTextConfig)) {
        cfg = &(*cfg)[key::kTextConfig];
        if (!cfg->is_object())
            refuse(where, "config.text_config is not an object");
        if (prefix.empty())
            prefix = "language_model.";
    }
    return *cfg;
}

} // namespace

Manifest parseManifest(const std::string &text, const std::string &where)
{
    const json m = parseV0(text, where);
    Manifest out;
    const json &cfg = textConfig(m, where, out.prefix);
    out.config = readModelConfig(cfg, where);
    out.quant = parseQuant(m, where);
    // VQ codes cover the experts' rows in vectors of vecDim (native records check their own
    // blocks, format/native_record.cpp).
    const format::ModelConfig &c = out.config;
    if (c.experts > 0 && !out.quant.isNative() && (c.moeInter % out.quant.vecDim != 0 || c.expertWidth() % out.quant.vecDim != 0))
        refuse(where, "VQ expert codes need moe_intermediate_size and the expert input width in multiples of " +
                          std::to_string(out.quant.vecDim));
    out.banks = parseBanks(m, out.config, where);
    out.trunk = parseTrunk(m, where);
    return out;
}

TrunkIndex parseTrunkIndex(const std::string &text, const std::string &where)
{
    const json m = parseV0(text, where);
    TrunkIndex out;
    const json &cfg = textConfig(m, where, out.prefix);
    out.hidden = static_cast<int>(intField(cfg, "hidden_size", 0, 0, Limits::kMaxHidden, where));
    out.vocab = static_cast<int>(intField(cfg, "vocab_size", 0, 0, Limits::kMaxVocab, where));
    out.trunk = parseTrunk(m, where);
    return out;
}

} // namespace waste::format
