#include "plan/plan_inputs.hpp"

#include "format/manifest.hpp"

#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace waste::plan {

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

// vision.json, or null when the container has none.
Json readVisionJson(const fs::path &path)
{
    std::ifstream f(path, std::ios::binary);
    if (!f)
        return Json();
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
    std::ifstream f(mf, std::ios::binary);
    if (!f)
        throw Error(ErrorCode::Io, mf + ": cannot open (is this a WASTE container directory?)");
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const format::Manifest m = format::parseManifest(text, mf);
    const format::ModelConfig &c = m.config;

    PlanInputs p;
    p.layers = c.layers;
    p.hidden = c.hidden;
    p.heads = c.heads;
    p.kvLora = c.kvLora;
    p.qkRope = c.qkRope;
    p.kdaHeads = c.kdaHeads;
    p.kdaDim = c.kdaDim;
    p.convKernel = c.convK;
    p.kdaLayers = c.kdaLayerCount();
    p.moeInter = c.moeInter;
    p.inter = c.inter > 0 ? c.inter : c.moeInter;
    p.vocab = c.vocab;
    p.expertWidth = c.expertWidth();
    p.sharedExperts = std::max(c.sharedExperts, 1);
    p.attnResBlock = c.attnResBlock;
    p.experts = c.experts;
    p.topK = c.topK;
    p.stages = m.quant.stages;
    p.vecDim = m.quant.vecDim;
    p.entries = m.quant.entries;

    for (const format::TrunkEntry &t : m.trunk) {
        if (!m.prefix.empty() && t.name.rfind(m.prefix, 0) != 0) {
            p.visionWeightBytes += t.bytes;
            continue;
        }
        // a quantized embedding table is read row by row from disk, not held
        if (t.name.substr(m.prefix.size()) == "model.embed_tokens.weight" && t.rawFmt != 0)
            continue;
        p.trunkBytes += t.bytes;
    }

    if (m.banks.empty())
        throw Error(ErrorCode::Format, mf + ": no expert banks in \"layers\"");
    for (const auto &entry : m.banks) {
        const format::BankEntry &bank = entry.second;
        if (p.moeLayers == 0) {
            p.recordBytes = bank.recordBytes;
            p.firstBankPath = (dir / bank.file).string();
        }
        p.maxRecordBytes = std::max(p.maxRecordBytes, bank.recordBytes);
        p.expertBytesTotal += bank.bytes;
        ++p.moeLayers;
    }

    Json v = readVisionJson(dir / "vision.json");
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
