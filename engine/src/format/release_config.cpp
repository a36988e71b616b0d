#include "format/release_config.hpp"

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

bool knownArch(const std::string &arch)
{
    for (const char *a : {"kimi-linear", "kimi-k3", "kimi-k2", "deepseek-v3", "qwen3-moe", "qwen3-next", "gpt-oss", "glm4-moe"})
        if (arch == a)
            return true;
    return false;
}

ModelConfig readReleaseConfig(const json &root)
{
    if (!root.is_object())
        throw Error(ErrorCode::Format, "config.json: not a JSON object");
    const json text = json(textModelConfig(ordered_json(root)));
    const std::string arch = configArch(text);
    if (!knownArch(arch))
        throw Error(ErrorCode::Format, "config.json: architecture \"" + arch +
                                           "\" is not one this engine runs (Kimi-Linear, Kimi K3, DeepSeek-V3 / "
                                           "Kimi K2, Qwen3-MoE, Qwen3-Next, gpt-oss, GLM-4.5)");
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

std::optional<uint8_t> releaseExpertFormat(const json &root)
{
    // A multimodal wrapper (Kimi K2.5) describes its text model's quantization in text_config.
    for (const json *c : {&root, root.is_object() && root.contains("text_config") ? &root["text_config"] : nullptr}) {
        if (!c || !c->is_object() || !c->contains("quantization_config") || !(*c)["quantization_config"].is_object())
            continue;
        const json &q = (*c)["quantization_config"];
        const std::string method = q.value("quant_method", "");
        const std::string fmt = q.contains("format") && q["format"].is_string() ? q["format"].get<std::string>() : "";
        if (method == "mxfp4" || fmt.find("mxfp4") != std::string::npos)
            return kFmtMXFP4;
        if (method == "fp8")
            return kFmtFP8B128;
        if (method == "compressed-tensors" && q.contains("config_groups") && q["config_groups"].is_object())
            for (const json &group : q["config_groups"]) {
                const json w = group.is_object() && group.contains("weights") ? group["weights"] : json();
                if (w.is_object() && w.value("num_bits", 0) == 4 && w.value("type", "") == "int" &&
                    w.value("group_size", 0) == 32)
                    return kFmtINT4G32;
            }
    }
    return std::nullopt;
}

uint8_t defaultExpertFormat(const json &root)
{
    // As convert's --experts auto: the release's own encoding unless that is plain BF16.
    const std::optional<uint8_t> own = releaseExpertFormat(root);
    return own && *own != kFmtBF16 ? *own : uint8_t(kFmtVQ3R);
}

} // namespace waste::format
