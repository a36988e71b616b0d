#include "plan/plan_inputs.hpp"

#include "format/expert_record.hpp"
#include "format/manifest.hpp"
#include "format/native_record.hpp"
#include "format/trunk_layout.hpp"

#include <waste/calibration.hpp>
#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
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

void addTrunkWork(PlanInputs &in, const std::string &name, const std::string &fmt, int64_t bytes,
                  const std::vector<int64_t> &shape)
{
    if (shape.size() < 2)
        return; // norms, biases, gates: a pass over a vector, nothing a token waits on
    int64_t elements = 1;
    for (int64_t d : shape)
        elements *= d;
    // Half-precision trunk tensors are widened to f32 when loaded and multiply as F32.
    const bool half = fmt == "F16" || fmt == "BF16";
    const bool conv = shape.size() == 3 && shape[1] == 1; // short-conv kernels: a few taps per channel
    if (conv)
        return;
    // The shared experts run while the layer's routed records are read (model/moe.cpp).
    const bool shared = name.find("shared_expert") != std::string::npos;
    in.trunkMatrixElements += elements;
    in.perToken.push_back({half ? "F32" : fmt, half ? elements * 4 : bytes, 1, shared});
}

namespace {

bool isTrunkKernel(const std::string &k) { return k == "F32" || k == "Q8G" || k == "Q4G" || k == "Q3G"; }

// A token that touches more than the CPU's caches hold (its trunk matrices, a linear
// attention's state, its routed experts) finds each trunk matrix evicted by the time it
// comes round again, so the trunk is priced with the calibration's cold rows. On a 2-core
// AMD EPYC VM the hidden-1024 mid-size container's token (70 MB of trunk, 38 MB of experts)
// had measured 1.34-1.42x its warm-priced kernel sum, the hidden-512 scale model's (within
// the caches) 1.12-1.42x.
void priceTrunkColdPastTheCaches(PlanInputs &in)
{
    int64_t touched = 0;
    for (const TokenCall &c : in.perToken)
        if (c.routedExperts || isTrunkKernel(c.kernel))
            touched += c.size * c.count;
    if (touched <= kCpuCachedBytes)
        return;
    for (TokenCall &c : in.perToken)
        if (isTrunkKernel(c.kernel))
            c.kernel += kColdSuffix;
}

} // namespace

void addLayerWork(PlanInputs &in, const std::string &expertKernel, int64_t expertCallSize)
{
    // Linear attention: each KDA layer reads and rewrites its f32 state matrices (decay and
    // update, then the readout): about three passes, priced as F32 streaming.
    if (in.kdaLayers > 0 && in.kdaHeads > 0)
        in.perToken.push_back({"F32", in.kdaHeads * in.kdaDim * in.kdaDim * 4, 3 * in.kdaLayers, false});
    if (in.moeLayers > 0 && in.topK > 0) {
        const int64_t width = in.expertWidth > 0 ? in.expertWidth : in.hidden;
        if (expertKernel == "VQ-expert") // gate and up tables, once per layer and token
            in.perToken.push_back({"LUT", width, 2 * in.moeLayers, true});
        // Routed experts come from the expert cache in RAM, each token a different few: priced
        // as records the CPU's caches do not hold, unless all of them would fit there.
        const bool cached = in.expertBytesTotal > 0 && in.expertBytesTotal <= kCpuCachedBytes;
        in.perToken.push_back({cached ? expertKernel : expertKernel + kColdSuffix, expertCallSize,
                               in.topK * in.moeLayers, true, true});
    }
    priceTrunkColdPastTheCaches(in);
}

void addDsv4State(PlanInputs &in, const format::Dsv4Config &v, int layers)
{
    in.v4Layers = layers;
    in.v4 = v;
    in.hcMult = v.hcMult;
    in.v4FixedStateBytes = 0;
    in.v4RowLayers.clear();
    for (int L = 0; L < layers; ++L) {
        in.v4FixedStateBytes += v.recurrentFloats(L) * 4;
        if (v.ratio(L) > 0)
            in.v4RowLayers.push_back({v.ratio(L), v.rowWidth(L)});
    }
}

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
    if (const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
        j.is_object() && j.contains("config") && j["config"].is_object())
        p.generatedWeights = j["config"].value("waste_generated_weights", false);
    p.layers = c.layers;
    p.hidden = c.hidden;
    p.heads = c.heads;
    p.kvLora = c.kvLora;
    p.qkRope = c.qkRope;
    p.qkNope = c.qkNope;
    p.vHead = c.vHead;
    if (c.dsa.on) {
        for (int L = 0; L < c.layers; ++L)
            p.indexLayers += !c.dsa.sharedLayer(L);
        p.indexHeads = c.dsa.heads;
        p.indexHeadDim = c.dsa.headDim;
        p.indexTopk = c.dsa.topk;
    }
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
    if (c.g.on) {
        p.gqaLayers = c.layers;
        p.gqaSlidingLayers = std::count(c.g.sliding.begin(), c.g.sliding.end(), true);
        p.kvHeads = c.g.kvHeads;
        p.headDim = c.g.headDim;
        p.window = c.g.window;
        // Qwen3-Next's and GLM-4.5's shared experts, in routed experts' widths (none elsewhere)
        p.sharedExperts = c.g.sharedInter > 0 ? (c.g.sharedInter + c.moeInter - 1) / c.moeInter : 0;
    }
    if (c.g.next) { // Qwen3-Next: Gated DeltaNet layers between the attention layers
        const format::GqaConfig &g = c.g;
        p.gqaLayers = c.layers - c.kdaLayerCount();
        p.kdaHeads = g.linValueHeads; // the scratch and per-token work estimates' head geometry
        p.kdaDim = g.linValueDim;
        p.linearStateBytes = (int64_t(g.linValueHeads) * g.linKeyDim * g.linValueDim +
                              int64_t(g.linConvWidth()) * std::max(c.convK - 1, 0)) * 4;
    }
    if (c.v4.on)
        addDsv4State(p, c.v4, c.layers);
    p.stages = m.quant.stages;
    p.vecDim = m.quant.vecDim;
    p.entries = m.quant.entries;

    for (const format::TrunkEntry &t : m.trunk) {
        if (!m.prefix.empty() && t.name.rfind(m.prefix, 0) != 0) {
            p.visionWeightBytes += t.bytes;
            continue;
        }
        // a quantized embedding table is read row by row from disk, not held
        const std::string bare = t.name.substr(m.prefix.size());
        const bool embed = bare == "model.embed_tokens.weight" || (c.v4.on && bare == "embed.weight");
        if (embed && t.rawFmt != 0)
            continue;
        p.trunkBytes += t.bytes;
        // the embedding table is looked up (one row), never multiplied
        if (!embed && t.name.find("embed_tokens") == std::string::npos)
            addTrunkWork(p, t.name, format::trunkFormatName(t.format), t.bytes, t.shape);
    }

    if (m.banks.empty())
        throw Error(ErrorCode::Format, mf + ": no expert banks in \"layers\"");
    for (const auto &entry : m.banks) {
        const format::BankEntry &bank = entry.second;
        if (p.moeLayers == 0) {
            p.recordBytes = bank.recordBytes;
            p.firstBankPath = (dir / bank.file).string();
        }
        if (bank.recordBytes == p.recordBytes)
            p.probeBankPaths.push_back((dir / bank.file).string());
        p.maxRecordBytes = std::max(p.maxRecordBytes, bank.recordBytes);
        p.expertBytesTotal += bank.bytes;
        ++p.moeLayers;
    }

    const int64_t width = p.expertWidth > 0 ? p.expertWidth : p.hidden;
    p.expertPanels = m.quant.fmtName == "VQ3R" ? "VQ-panels" : m.quant.fmtName + "-panels";
    if (const auto native = format::nativeFmtFromName(m.quant.fmtName)) {
        const format::NativeLayout l = format::nativeRecordLayout(*native, p.moeInter, width);
        addLayerWork(p, std::string(format::nativeFmtName(*native)) + "-expert",
                     l.payloadBytes[0] + l.payloadBytes[1] + l.payloadBytes[2] + l.scaleBytes[0] + l.scaleBytes[1] +
                         l.scaleBytes[2]);
    } else {
        addLayerWork(p, "VQ-expert",
                     2 * format::indexBytes(p.moeInter, width, int(p.stages), m.quant.indexBits) +
                         format::indexBytes(width, p.moeInter, int(p.stages), m.quant.indexBits));
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
