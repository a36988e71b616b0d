#include "format/release_config.hpp"

#include <algorithm>

#include "format/arch_names.hpp"
#include "format/expert_record.hpp"
#include "format/native_record.hpp"

#include "waste/waste.hpp"

namespace waste::format {

using nlohmann::json;
using nlohmann::ordered_json;

ordered_json textModelConfig(const ordered_json &root)
{
    if (!root.is_object() || !root.contains("text_config") || !root["text_config"].is_object())
        return root;
    ordered_json text = root["text_config"];
    ordered_json outer = root;
    outer.erase("text_config");
    text["_outer"] = outer;
    return text;
}

ModelConfig readReleaseConfig(const json &root)
{
    if (!root.is_object())
        throw Error(ErrorCode::Format, "config.json: not a JSON object");
    const json text = json(textModelConfig(ordered_json(root)));
    const std::string arch = configArch(text);
    if (!knownArch(arch))
        throw Error(ErrorCode::Format, "config.json: architecture \"" + arch +
                                           "\" is not one this engine runs (" + knownArchList() + ")");
    try {
        return readModelConfig(text, "config.json");
    } catch (const Error &e) {
        // The same rules as a manifest's config, but the fault is the release's, not a container's.
        std::string what = e.what();
        const std::string advice = kContainerAdvice;
        if (what.ends_with(advice))
            what.resize(what.size() - advice.size());
        throw Error(e.code(), what);
    }
}

ReleaseQuant readReleaseQuant(const json &root)
{
    ReleaseQuant r;
    // A multimodal wrapper (Kimi K2.5) describes its text model's quantization in text_config;
    // the wrapper's own quantization_config comes first.
    const json *q = nullptr;
    for (const json *c : {&root, root.is_object() && root.contains("text_config") ? &root["text_config"] : nullptr})
        if (!q && c && c->is_object() && c->contains("quantization_config") && (*c)["quantization_config"].is_object())
            q = &(*c)["quantization_config"];
    if (!q)
        return r;
    const std::string method = q->value("quant_method", "");
    const std::string fmt = q->contains("format") && (*q)["format"].is_string() ? (*q)["format"].get<std::string>() : "";
    if (q->contains("weight_block_size")) {
        const json &b = (*q)["weight_block_size"];
        if (b.is_array() && b.size() == 2 && b[0].is_number_integer() && b[1].is_number_integer() && b[0] > 0 && b[1] > 0) {
            r.fp8BlockRows = b[0].get<int64_t>();
            r.fp8BlockCols = b[1].get<int64_t>();
        }
    }
    // compressed-tensors: every int4 weight group of config_groups; one size when they agree.
    bool int4At32 = false;
    int64_t group = 0;
    if (q->contains("config_groups") && (*q)["config_groups"].is_object())
        for (const auto &[key, grp] : (*q)["config_groups"].items()) {
            const json w = grp.is_object() && grp.contains("weights") ? grp["weights"] : json();
            if (!w.is_object() || w.value("type", "") != "int" || !w.contains("group_size") || !w["group_size"].is_number_integer())
                continue;
            const int64_t g = w["group_size"].get<int64_t>();
            group = (group == 0 || group == g) && g > 0 ? g : -1;
            int4At32 = int4At32 || (w.value("num_bits", 0) == 4 && g == 32);
        }
    r.int4Group = std::max<int64_t>(group, 0);
    // DeepSeek V4: quantization_config describes the FP8 trunk (ue8m0 block scales); the
    // routed experts are FP4 with E8M0 scales per 32 (MXFP4's arithmetic), said apart.
    const bool fp4Experts = root.is_object() && root.value("expert_dtype", std::string()) == "fp4";
    if (fp4Experts || method == "mxfp4" || fmt.find("mxfp4") != std::string::npos)
        r.expertFormat = kFmtMXFP4;
    else if (method == "fp8")
        r.expertFormat = kFmtFP8B128;
    else if (method == "compressed-tensors" && int4At32)
        r.expertFormat = kFmtINT4G32;
    return r;
}

std::optional<uint8_t> releaseExpertFormat(const json &root) { return readReleaseQuant(root).expertFormat; }

uint8_t defaultExpertFormat(const json &root)
{
    // As convert's --experts auto: the release's own encoding unless that is plain BF16.
    const std::optional<uint8_t> own = releaseExpertFormat(root);
    return own && *own != kFmtBF16 ? *own : uint8_t(kFmtVQ3R);
}

} // namespace waste::format
