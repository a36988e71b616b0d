#include "format/arch_names.hpp"

namespace waste::format {
namespace {

struct Arch {
    const char *key;       // the engine's name
    const char *classPart; // what a release's class name holds
    const char *modelType; // what a config without "architectures" says
    const char *shown;     // the family as a person reads it
    bool gqa;
};

// In matching order: a class name is matched by the first row whose part it holds, so a
// name that contains another (DeepseekV32 holds DeepseekV3) comes first.
constexpr Arch kArchs[] = {
    {"kimi-linear", "KimiLinear", "kimi_linear", "Kimi-Linear", false},
    {"kimi-k3", "KimiK3", "kimi_k3", "Kimi K3", false},
    {"kimi-k2", "KimiK25", "kimi_k25", "", false}, // K2.5: Kimi K2's text model, the vision tower read past
    {"deepseek-v32", "DeepseekV32", "deepseek_v32", "DeepSeek-V3.2", false},
    {"glm-moe-dsa", "GlmMoeDsa", "glm_moe_dsa", "GLM-5", false},
    {"deepseek-v4", "DeepseekV4", "deepseek_v4", "DeepSeek V4 Flash", false},
    {"deepseek-v3", "DeepseekV3", "deepseek_v3", "DeepSeek-V3 / Kimi K2", false},
    {"qwen3-moe", "Qwen3Moe", "qwen3_moe", "Qwen3-MoE", true},
    {"qwen3-next", "Qwen3Next", "qwen3_next", "Qwen3-Next", true},
    {"qwen3.5-moe", "Qwen3_5Moe", "qwen3_5_moe", "Qwen3.5-MoE", true}, // the wrapper and its text model alike
    {"gpt-oss", "GptOss", "gpt_oss", "gpt-oss", true},
    {"glm4-moe", "Glm4Moe", "glm4_moe", "GLM-4.5", true},
};

const Arch *byKey(const std::string &key)
{
    for (const Arch &a : kArchs)
        if (key == a.key)
            return &a;
    return nullptr;
}

} // namespace

std::string archNamed(const std::string &className, const std::string &modelType)
{
    const Arch *found = nullptr;
    if (className.empty()) {
        for (const Arch &a : kArchs)
            if (modelType == a.modelType)
                found = &a;
        if (modelType == "qwen3_5_moe_text")
            found = byKey("qwen3.5-moe");
        if (modelType == "kimi_k2")
            return "kimi-k2";
    } else if (className.find("Glm4MoeLite") == std::string::npos) { // GLM-4.7-Flash is an MLA model, not GLM-4.5's family
        for (const Arch &a : kArchs)
            if (!found && className.find(a.classPart) != std::string::npos)
                found = &a;
    }
    if (!found)
        return {};
    // Kimi K2 ships DeepSeek-V3's class and says what it is only in its model_type.
    if (std::string(found->key) == "deepseek-v3" && modelType == "kimi_k2")
        return "kimi-k2";
    return found->key;
}

bool knownArch(const std::string &arch)
{
    return byKey(arch) != nullptr;
}

bool isGqaFamily(const std::string &arch)
{
    const Arch *a = byKey(arch);
    return a && a->gqa;
}

const std::string &knownArchList()
{
    static const std::string list = [] {
        std::string s;
        for (const Arch &a : kArchs) {
            if (!*a.shown)
                continue;
            s += s.empty() ? "" : ", ";
            s += a.shown;
        }
        return s;
    }();
    return list;
}

} // namespace waste::format
