// The one table of the architectures the engine runs (format/arch_names): each release family
// is named by its class and, without one, by its model_type; the names that contain others
// and the look-alikes are told apart; the refusal lists every family once.
#include "format/arch_names.hpp"
#include "format/release_config.hpp"

#include "waste/waste.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

using waste::format::archNamed;

TEST(ArchNames, EachReleaseClassIsItsFamily)
{
    const std::pair<const char *, const char *> classes[] = {
        {"KimiLinearForCausalLM", "kimi-linear"},
        {"KimiK3ForConditionalGeneration", "kimi-k3"},
        {"KimiK25ForConditionalGeneration", "kimi-k2"},
        {"DeepseekV3ForCausalLM", "deepseek-v3"},
        {"DeepseekV32ForCausalLM", "deepseek-v32"}, // holds "DeepseekV3": matched first
        {"DeepseekV4ForCausalLM", "deepseek-v4"},
        {"GlmMoeDsaForCausalLM", "glm-moe-dsa"},
        {"Glm4MoeForCausalLM", "glm4-moe"},
        {"Qwen3MoeForCausalLM", "qwen3-moe"},
        {"Qwen3NextForCausalLM", "qwen3-next"},
        {"Qwen3_5MoeForConditionalGeneration", "qwen3.5-moe"},
        {"GptOssForCausalLM", "gpt-oss"},
    };
    for (const auto &[cls, key] : classes) {
        EXPECT_EQ(archNamed(cls, ""), key) << cls;
        EXPECT_TRUE(waste::format::knownArch(key)) << key;
    }
}

TEST(ArchNames, KimiK2SaysWhatItIsInItsModelType)
{
    EXPECT_EQ(archNamed("DeepseekV3ForCausalLM", "kimi_k2"), "kimi-k2");
    EXPECT_EQ(archNamed("", "kimi_k2"), "kimi-k2");
    EXPECT_EQ(archNamed("DeepseekV3ForCausalLM", "deepseek_v3"), "deepseek-v3");
}

TEST(ArchNames, AConfigWithoutArchitecturesIsNamedByItsModelType)
{
    const std::pair<const char *, const char *> types[] = {
        {"kimi_linear", "kimi-linear"}, {"kimi_k3", "kimi-k3"},   {"kimi_k25", "kimi-k2"},
        {"deepseek_v3", "deepseek-v3"}, {"deepseek_v32", "deepseek-v32"}, {"deepseek_v4", "deepseek-v4"},
        {"glm_moe_dsa", "glm-moe-dsa"}, {"glm4_moe", "glm4-moe"}, {"qwen3_moe", "qwen3-moe"},
        {"qwen3_next", "qwen3-next"},   {"qwen3_5_moe", "qwen3.5-moe"}, {"qwen3_5_moe_text", "qwen3.5-moe"},
        {"gpt_oss", "gpt-oss"},
    };
    for (const auto &[type, key] : types)
        EXPECT_EQ(archNamed("", type), key) << type;
    // The class decides when there is one.
    EXPECT_EQ(archNamed("LlamaForCausalLM", "qwen3_moe"), "");
}

TEST(ArchNames, LookAlikesAndUnknownsAreNoFamily)
{
    EXPECT_EQ(archNamed("Glm4MoeLiteForCausalLM", "glm4_moe_lite"), ""); // GLM-4.7-Flash: MLA, not GLM-4.5
    EXPECT_EQ(archNamed("LlamaForCausalLM", "llama"), "");
    EXPECT_EQ(archNamed("", ""), "");
    EXPECT_FALSE(waste::format::knownArch("llama"));
    EXPECT_FALSE(waste::format::knownArch(""));
    // configArch keeps an unknown class's own name, for the refusal to show.
    EXPECT_EQ(waste::format::configArch(nlohmann::json{{"architectures", {"LlamaForCausalLM"}}}), "LlamaForCausalLM");
    EXPECT_EQ(waste::format::configArch(nlohmann::json::object()), "unknown");
}

TEST(ArchNames, OnlyTheGqaFamiliesReadTheGqaKeys)
{
    for (const char *key : {"qwen3-moe", "qwen3-next", "qwen3.5-moe", "gpt-oss", "glm4-moe"})
        EXPECT_TRUE(waste::format::isGqaFamily(key)) << key;
    for (const char *key : {"kimi-linear", "kimi-k3", "kimi-k2", "deepseek-v3", "deepseek-v32", "glm-moe-dsa", "deepseek-v4"})
        EXPECT_FALSE(waste::format::isGqaFamily(key)) << key;
}

TEST(ArchNames, TheRefusalNamesEveryFamilyOnce)
{
    try {
        waste::format::readReleaseConfig(nlohmann::json{{"architectures", {"LlamaForCausalLM"}}});
        FAIL() << "a Llama config was read";
    } catch (const waste::Error &e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("\"LlamaForCausalLM\" is not one this engine runs"), std::string::npos) << what;
        for (const char *family : {"Kimi-Linear", "Kimi K3", "DeepSeek-V3 / Kimi K2", "DeepSeek-V3.2", "GLM-5",
                                   "DeepSeek V4 Flash", "Qwen3-MoE", "Qwen3-Next", "Qwen3.5-MoE", "gpt-oss", "GLM-4.5"}) {
            const size_t at = what.find(family);
            EXPECT_NE(at, std::string::npos) << family << " in " << what;
        }
    }
}
