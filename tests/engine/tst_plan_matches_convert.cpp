// `waste plan --config` against `waste convert`: for a tiny release of every family, in each
// expert layout releases ship (BF16, MXFP4, FP8 blocks, INT4 groups), the plan made from
// config.json alone names the expert format the converter keeps by default and sizes the
// container within 1 % of the one the converter writes (trunk, expert banks and codebooks).
// Both read the config through format/release_config.
#include "format/manifest.hpp"
#include "test_files.hpp"

#include <waste/convert.hpp>
#include <waste/release_plan.hpp>

#include <gtest/gtest.h>

#include <filesystem>

namespace fs = std::filesystem;

namespace {

struct Case {
    const char *name;
    waste::TinyModelOptions options;
    const char *format; // what convert keeps by default
};

waste::TinyModelOptions tiny(const std::string &arch, waste::TinyExperts experts = waste::TinyExperts::Default, bool k3 = false)
{
    waste::TinyModelOptions o;
    o.arch = arch;
    o.experts = experts;
    o.k3 = k3;
    o.compactVocabulary = true;
    o.seed = 3;
    return o;
}

// Qwen3-MoE with dense layers between the MoE layers (mlp_only_layers).
waste::TinyModelOptions dense()
{
    waste::TinyModelOptions o = tiny("qwen3-moe");
    o.mlpOnlyLayers = {1, 3};
    return o;
}

// GLM-4.5-Air: no q/k norm weights.
waste::TinyModelOptions air()
{
    waste::TinyModelOptions o = tiny("glm4-moe");
    o.glmAir = true;
    return o;
}

int64_t containerBytes(const std::string &dir)
{
    int64_t total = 0;
    for (const auto &e : fs::directory_iterator(dir)) {
        const std::string n = e.path().filename().string();
        if (n == "trunk.bin" || n == "codebooks.bin" || (n.starts_with("experts-") && n.ends_with(".bin")))
            total += int64_t(e.file_size());
    }
    return total;
}

class PlanMatchesConvert : public testing::TestWithParam<Case> {};

} // namespace

TEST_P(PlanMatchesConvert, SameFormatAndSizeWithinOnePercent)
{
    const Case &c = GetParam();
    const std::string base = freshOutputDir("plan-matches-convert", c.name);
    const std::string hf = base + "/hf", out = base + "/out";
    waste::makeTinyHf(hf, c.options);
    const waste::ReleasePlan plan = waste::planRelease(slurp(hf + "/config.json"));
    const waste::ReleaseLayout &made = plan.convertDefault();
    EXPECT_EQ(made.expert_format, c.format);

    waste::ConvertOptions o;
    o.jobs = 2;
    waste::convertModel(hf, out, o);
    const waste::format::Manifest m = waste::format::parseManifest(slurp(out + "/manifest.json"), "manifest.json");
    EXPECT_EQ(m.quant.fmtName, c.format);
    EXPECT_EQ(plan.arch, m.config.arch);

    const int64_t actual = containerBytes(out);
    ASSERT_GT(actual, 0);
    EXPECT_NEAR(double(made.container_bytes), double(actual), 0.01 * double(actual))
        << c.name << ": planned " << made.container_bytes << " bytes, converted " << actual;
    fs::remove_all(base);
}

INSTANTIATE_TEST_SUITE_P(
    EveryFamily, PlanMatchesConvert,
    testing::Values(Case{"kimi_linear_bf16", tiny(""), "VQ3R"},
                    Case{"kimi_k3_mxfp4", tiny("", waste::TinyExperts::Default, true), "MXFP4"},
                    Case{"deepseek_v3_fp8", tiny("deepseek-v3"), "FP8B128"},
                    Case{"kimi_k2_fp8", tiny("kimi-k2"), "FP8B128"},
                    Case{"kimi_k2_int4", tiny("kimi-k2", waste::TinyExperts::INT4G32), "INT4G32"},
                    Case{"qwen3_moe_bf16", tiny("qwen3-moe"), "VQ3R"},
                    Case{"qwen3_moe_dense_layers", dense(), "VQ3R"},
                    Case{"qwen3_next_bf16", tiny("qwen3-next"), "VQ3R"},
                    Case{"qwen3_5_moe_bf16", tiny("qwen3.5-moe"), "VQ3R"},
                    Case{"gpt_oss_mxfp4", tiny("gpt-oss"), "MXFP4"},
                    Case{"glm4_moe_bf16", tiny("glm4-moe"), "VQ3R"},
                    Case{"glm4_moe_air_bf16", air(), "VQ3R"},
                    Case{"deepseek_v32_fp8", tiny("deepseek-v32"), "FP8B128"},
                    Case{"glm_moe_dsa_bf16", tiny("glm-moe-dsa"), "VQ3R"},
                    Case{"deepseek_v4_mxfp4", tiny("deepseek-v4"), "MXFP4"}),
    [](const testing::TestParamInfo<Case> &i) { return std::string(i.param.name); });
