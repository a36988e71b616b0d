#include "plan/plan_inputs.hpp"

#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <limits>

namespace waste::plan {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json; // "first member of layers" means file order

namespace {

Json readJson(const fs::path &path, bool required)
{
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        if (required)
            throw Error(ErrorCode::Io, path.string() + ": cannot open (is this a WASTE container directory?)");
        return Json();
    }
    Json j = Json::parse(f, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        throw Error(ErrorCode::Format, path.string() + ": not a JSON object");
    return j;
}

// A number field, or `fallback` when absent, null or not a number; bounded to keep the
// arithmetic of an untrusted manifest far from overflow.
int64_t num(const Json &obj, const char *key, int64_t fallback, const std::string &file)
{
    if (!obj.is_object() || !obj.contains(key) || !obj[key].is_number() || obj[key].is_boolean())
        return fallback;
    double v = obj[key].get<double>();
    if (!(v >= 0 && v <= double(int64_t(1) << 40)))
        throw Error(ErrorCode::Format, file + ": " + key + " out of range");
    return int64_t(v);
}

} // namespace

PlanInputs readPlanInputs(const std::string &containerPath)
{
    const fs::path dir(containerPath);
    const std::string mf = (dir / "manifest.json").string();
    Json m = readJson(dir / "manifest.json", true);
    if (!m.contains("config") || !m["config"].is_object())
        throw Error(ErrorCode::Format, mf + ": no config object");
    const Json &c = m["config"];
    const Json la = c.contains("linear_attn_config") && c["linear_attn_config"].is_object() ? c["linear_attn_config"] : Json::object();

    PlanInputs p;
    p.layers = num(c, "num_hidden_layers", 0, mf);
    p.hidden = num(c, "hidden_size", 0, mf);
    p.heads = num(c, "num_attention_heads", 0, mf);
    p.kvLora = num(c, "kv_lora_rank", 0, mf);
    p.qkRope = num(c, "qk_rope_head_dim", 0, mf);
    p.kdaHeads = num(la, "num_heads", 0, mf);
    p.kdaDim = num(la, "head_dim", 0, mf);
    p.convKernel = num(la, "short_conv_kernel_size", 4, mf);
    p.kdaLayers = la.contains("kda_layers") && la["kda_layers"].is_array() ? int64_t(la["kda_layers"].size()) : 0;
    p.moeInter = num(c, "moe_intermediate_size", 0, mf);
    p.inter = num(c, "intermediate_size", p.moeInter, mf);
    p.vocab = num(c, "vocab_size", 0, mf);
    p.expertWidth = num(c, "routed_expert_hidden_size", p.hidden, mf);
    p.sharedExperts = std::max<int64_t>(num(c, "num_shared_experts", 1, mf), 1);
    p.attnResBlock = num(c, "attn_res_block_size", 0, mf);
    p.experts = num(c, "num_experts", 0, mf);
    p.topK = num(c, "num_experts_per_token", 8, mf);
    if (p.layers > 1024 || p.kdaLayers > p.layers + 1024)
        throw Error(ErrorCode::Format, mf + ": num_hidden_layers out of range");
    if (m.contains("expert_quant") && m["expert_quant"].is_object()) {
        const Json &q = m["expert_quant"];
        p.stages = num(q, "stages", 3, mf);
        p.vecDim = num(q, "vec_dim", 8, mf);
        p.entries = num(q, "entries", 256, mf);
    }
    if (p.vecDim <= 0)
        throw Error(ErrorCode::Format, mf + ": expert_quant.vec_dim must be positive");

    const std::string prefix = m.contains("tensor_prefix") && m["tensor_prefix"].is_string()
                                   ? m["tensor_prefix"].get<std::string>() : std::string();
    if (m.contains("trunk") && m["trunk"].is_array())
        for (const auto &t : m["trunk"]) {
            if (!t.is_object() || !t.contains("name") || !t["name"].is_string())
                throw Error(ErrorCode::Format, mf + ": a trunk entry has no name");
            const std::string name = t["name"].get<std::string>();
            const int64_t bytes = num(t, "bytes", 0, mf);
            if (!prefix.empty() && name.rfind(prefix, 0) != 0) {
                p.visionWeightBytes += bytes;
                continue;
            }
            // a quantized embedding table is read row by row from disk, not held
            if (name.substr(prefix.size()) == "model.embed_tokens.weight" && num(t, "fmt", 0, mf) != 0)
                continue;
            p.trunkBytes += bytes;
        }

    if (!m.contains("layers") || !m["layers"].is_object() || m["layers"].empty())
        throw Error(ErrorCode::Format, mf + ": no expert banks in \"layers\"");
    bool first = true;
    for (const auto &[key, bank] : m["layers"].items()) {
        const int64_t experts = num(bank, "experts", 0, mf), bytes = num(bank, "bytes", 0, mf);
        if (experts <= 0 || bytes <= 0)
            throw Error(ErrorCode::Format, mf + ": bank " + key + " has no experts or no bytes");
        const int64_t rec = bytes / experts;
        if (first) {
            p.recordBytes = rec;
            if (bank.contains("file") && bank["file"].is_string())
                p.firstBankPath = (dir / bank["file"].get<std::string>()).string();
            first = false;
        }
        p.maxRecordBytes = std::max(p.maxRecordBytes, rec);
        p.expertBytesTotal += bytes;
        ++p.moeLayers;
    }

    Json v = readJson(dir / "vision.json", false);
    if (v.is_object()) {
        p.vtHidden = num(v, "vt_hidden_size", 1024, "vision.json");
        p.vtQkv = num(v, "qkv_hidden_size", 1536, "vision.json");
        p.vtInter = num(v, "vt_intermediate_size", 4096, "vision.json");
        p.posH = num(v, "init_pos_emb_height", 64, "vision.json");
        p.posW = num(v, "init_pos_emb_width", 64, "vision.json");
        p.maxPatches = num(v, "max_patches", 1024, "vision.json");
        p.textHidden = num(v, "text_hidden_size", 0, "vision.json");
    }
    return p;
}

} // namespace waste::plan
