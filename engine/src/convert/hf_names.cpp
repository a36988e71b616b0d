#include "convert/hf_names.hpp"

#include "convert/vq.hpp"
#include "format/release_config.hpp"

#include <waste/waste.hpp>

#include <algorithm>

namespace waste::convert {

using ojson = nlohmann::ordered_json;

namespace {

// Parses "<prefix><layers><L>.<rest>" (layers: "model.layers.", DeepSeek V4's "layers."); returns L or -1.
int parseLayer(const std::string &name, const std::string &prefix, std::string *rest, const std::string &layers = "model.layers.") {
    const std::string head = prefix + layers;
    if (!name.starts_with(head)) return -1;
    size_t i = head.size(), j = i;
    while (j < name.size() && j - i < 6 && name[j] >= '0' && name[j] <= '9') ++j;
    if (j == i || j >= name.size() || name[j] != '.') return -1;
    if (rest) *rest = name.substr(j + 1);
    return std::stoi(name.substr(i, j - i));
}

// "block_sparse_moe.experts.<e>.w{1,2,3}.weight" (or .{gate,up,down}_proj.weight; DeepSeek-V3
// names the block "mlp.") -> e and kind (0 gate, 1 up, 2 down). Quantised experts arrive
// here already paired (model_source.hpp).
bool parseExpert(const std::string &rest, int *expert, int *kind) {
    // Kimi names the block "block_sparse_moe"; DeepSeek-V3, Qwen3-MoE and gpt-oss "mlp".
    std::string head = "block_sparse_moe.experts.";
    if (!rest.starts_with(head)) head = "mlp.experts.";
    if (!rest.starts_with(head)) head = "ffn.experts."; // DeepSeek V4
    if (!rest.starts_with(head)) return false;
    size_t i = head.size(), j = i;
    while (j < rest.size() && j - i < 6 && rest[j] >= '0' && rest[j] <= '9') ++j;
    if (j == i) return false;
    const std::string tail = rest.substr(j);
    if (tail == ".w1.weight" || tail == ".gate_proj.weight") *kind = 0;
    else if (tail == ".w3.weight" || tail == ".up_proj.weight") *kind = 1;
    else if (tail == ".w2.weight" || tail == ".down_proj.weight") *kind = 2;
    else return false;
    *expert = std::stoi(rest.substr(i, j - i));
    return true;
}

} // namespace

Layout buildLayout(const ModelSource &src) {
    Layout L;
    ojson config;
    try {
        config = ojson::parse(src.configText());
    } catch (const std::exception &e) {
        throw Error(ErrorCode::Format, "config.json is not valid JSON (" + std::string(e.what()) + ")");
    }
    if (!config.is_object()) throw Error(ErrorCode::Format, "config.json is not a JSON object");
    // The release read as the manifest and the planner read it (format/release_config): its
    // architecture, layers and experts. A multimodal wrapper (K3) is stored with its text
    // config hoisted and the wrapper kept under _outer.
    const format::ModelConfig model = format::readReleaseConfig(nlohmann::json(config));
    const ojson cfg = format::textModelConfig(config);
    if (cfg.contains("_outer")) L.prefix = "language_model.";
    L.config = cfg;
    // The wrapper's model type names a multimodal release (kimi_k3); the text config's
    // own says only which trunk it reuses.
    L.arch = cfg.contains("_outer") ? cfg["_outer"].value("model_type", std::string("kimi_k3"))
                                    : cfg.value("model_type", std::string("kimi_linear"));
    // Kimi K2.5 wraps Kimi K2's text model with its own vision tower (MoonViT-3D), which
    // this engine does not run: its tensors are read past and the container is the text model.
    const bool textOnly = L.arch == "kimi_k25";
    if (textOnly)
        L.note = "Kimi K2.5's vision tower (vision_tower., mm_projector.) is read past: the container holds its "
                 "text model (Kimi K2's), which takes no images";
    // Qwen3.5-MoE's wrapper: the converter reads it through LanguageModelSource, which shows
    // the text model under plain `model.` names, so no prefix is left to strip.
    if (L.arch == "qwen3_5_moe") {
        L.prefix.clear();
        L.note = "Qwen3.5's vision tower (model.visual.) and MTP block (mtp.) are read past: the container holds its "
                 "text model, which takes no images";
    }
    L.layers = model.layers;

    L.units.resize(static_cast<size_t>(L.layers) + 1);
    for (int i = 0; i < L.layers; ++i) L.units[static_cast<size_t>(i) + 1].layer = i;
    std::vector<std::map<int, ExpertNames>> experts(static_cast<size_t>(L.layers));
    // DeepSeek's multi-token-prediction layers follow the last layer (model.layers.61 on
    // V3); the forward pass does not use them, so they are read past, not converted.
    const auto mtp = cfg.find("num_nextn_predict_layers");
    const int mtpLayers = mtp != cfg.end() && mtp->is_number_integer() ? mtp->get<int>() : 0;
    // DeepSeek V4's release has no "model." prefix: "layers.L.", "embed", "head", "mtp.0.".
    const std::string layerHead = model.v4.on ? "layers." : "model.layers.";
    for (const std::string &name : src.tensorNames()) {
        std::string rest;
        const int layer = parseLayer(name, L.prefix, &rest, layerHead);
        if (mtpLayers > 0 && layer >= L.layers && layer < L.layers + mtpLayers) continue;
        // Qwen3-Next keeps its multi-token-prediction block apart ("mtp."): unused too.
        if (name.starts_with(L.prefix + "mtp.")) continue;
        if (textOnly && (name.starts_with("vision_tower.") || name.starts_with("mm_projector."))) continue;
        if (layer < 0 || layer >= L.layers) {
            L.units[0].trunk.push_back(name);
            L.unitOf[name] = 0;
            continue;
        }
        L.unitOf[name] = layer + 1;
        int e = 0, kind = 0;
        if (parseExpert(rest, &e, &kind)) experts[static_cast<size_t>(layer)][e].name[kind] = name;
        else L.units[static_cast<size_t>(layer) + 1].trunk.push_back(name);
    }
    const int cfgExperts = model.experts;
    const int stages = VqGeometry{}.stages;
    for (int layer = 0; layer < L.layers; ++layer) {
        auto &m = experts[static_cast<size_t>(layer)];
        if (m.empty()) continue;
        const int E = static_cast<int>(m.size());
        if (m.begin()->first != 0 || m.rbegin()->first != E - 1)
            throw Error(ErrorCode::Format, "layer " + std::to_string(layer) + ": expert ids are not 0.." + std::to_string(E - 1));
        if (cfgExperts > 0 && E != cfgExperts)
            throw Error(ErrorCode::Format, "layer " + std::to_string(layer) + " has " + std::to_string(E) +
                                               " experts but config.json says num_experts " + std::to_string(cfgExperts));
        if (E > 65535) throw Error(ErrorCode::Unsupported, "more than 65535 experts per layer");
        Unit &u = L.units[static_cast<size_t>(layer) + 1];
        for (auto &[id, names] : m) {
            for (int k = 0; k < 3; ++k)
                if (names.name[k].empty())
                    throw Error(ErrorCode::Format, "layer " + std::to_string(layer) + " expert " + std::to_string(id) +
                                                       " lacks its w1/w2/w3 tensor");
            u.experts.push_back(names);
        }
        u.codebookBase = L.moeLayers * 3 * stages;
        ++L.moeLayers;
        L.experts = E;
    }
    if (L.units[0].trunk.empty() && L.moeLayers == 0) throw Error(ErrorCode::Format, "the source has no tensors");
    for (auto &u : L.units) std::sort(u.trunk.begin(), u.trunk.end());
    return L;
}

} // namespace waste::convert
