// A whole eval at every SIMD level this CPU supports agrees with the scalar eval within
// 1e-5 relative (the kernels one by one: tst_simd), and a prompt's pass leaves the scalar
// pass's state bit for bit at every level, for each family and expert format (its panel
// products, decoders, e^x, log(1 + x), delta rule and convolutions are each the scalar order;
// only the last position's logits come from the decode's lm_head kernels, within 1e-5): one
// more token decoded on the scalar kernels from that state gives the same logits bit for bit.
// Kept apart from tst_simd because it needs the whole engine, while tst_simd is one of the
// kernel tests the aarch64 cross check builds without it (tests/engine/aarch64_kernels.sh).
#include <gtest/gtest.h>

#include "quant/simd.hpp"
#include "waste/convert.hpp"
#include "waste/waste.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using waste::quant::SimdLevel;

namespace {

std::vector<SimdLevel> supported()
{
    std::vector<SimdLevel> out;
    for (SimdLevel l : {SimdLevel::Avx2, SimdLevel::Avx512, SimdLevel::Neon})
        if (waste::quant::simdSupported(l))
            out.push_back(l);
    return out;
}

} // namespace

TEST(SimdEval, WholeEvalAgreesWithScalar)
{
    const std::string dir = std::string(WASTE_FIXTURES_DIR) + "/reference-container/";
    std::ifstream in(dir + "r3.tok.fox.json");
    const auto ids = nlohmann::json::parse(in)["ids"].get<std::vector<int32_t>>();
    const SimdLevel before = waste::quant::activeSimd();
    waste::quant::setActiveSimd(SimdLevel::Scalar);
    const std::vector<float> ref = waste::Model::open(dir + "r3.waste")->eval(ids);
    for (SimdLevel lvl : supported()) {
        waste::quant::setActiveSimd(lvl);
        const std::vector<float> got = waste::Model::open(dir + "r3.waste")->eval(ids);
        ASSERT_EQ(got.size(), ref.size());
        double maxAbs = 0, scale = 0;
        for (size_t i = 0; i < ref.size(); ++i) {
            maxAbs = std::max(maxAbs, std::fabs(double(got[i]) - ref[i]));
            scale = std::max(scale, std::fabs(double(ref[i])));
        }
        EXPECT_LE(maxAbs, 1e-5 * scale) << waste::quant::simdName(lvl);
    }
    waste::quant::setActiveSimd(before);
}

TEST(SimdEval, PromptPassLeavesTheSameStateAtEveryLevel)
{
    struct Case {
        const char *name;
        waste::TinyModelOptions options;
    };
    std::vector<Case> cases;
    const auto add = [&](const char *name, std::string arch, waste::TinyExperts experts, waste::ExpertEncoding encoding,
                         bool k3 = false) {
        waste::TinyModelOptions o;
        o.arch = std::move(arch);
        o.k3 = k3;
        o.experts = experts;
        o.expertEncoding = encoding;
        o.compactVocabulary = true;
        cases.push_back({name, o});
    };
    using waste::ExpertEncoding;
    using waste::TinyExperts;
    add("kimi-linear VQ3R", "", TinyExperts::BF16, ExpertEncoding::VQ3R);
    add("kimi-linear BF16", "", TinyExperts::BF16, ExpertEncoding::Native);
    add("kimi-k3 MXFP4", "", TinyExperts::Default, ExpertEncoding::Native, true);
    add("deepseek-v3 FP8B128", "deepseek-v3", TinyExperts::Default, ExpertEncoding::Native);
    add("kimi-k2 INT4G32", "kimi-k2", TinyExperts::INT4G32, ExpertEncoding::Native);
    add("qwen3-next VQ3R", "qwen3-next", TinyExperts::Default, ExpertEncoding::VQ3R);
    add("gpt-oss MXFP4", "gpt-oss", TinyExperts::Default, ExpertEncoding::Native);

    const SimdLevel before = waste::quant::activeSimd();
    const std::filesystem::path root = std::filesystem::path(WASTE_TEST_OUTPUT_DIR) / "simd-eval-pass";
    for (size_t c = 0; c < cases.size(); ++c) {
        const std::string dir = (root / std::to_string(c)).string();
        std::filesystem::remove_all(dir);
        waste::makeTinyContainer(dir, cases[c].options);
        waste::quant::setActiveSimd(SimdLevel::Scalar);
        std::unique_ptr<waste::Model> scalar = waste::Model::open(dir);
        std::vector<int32_t> ids(150);
        for (size_t i = 0; i < ids.size(); ++i)
            ids[i] = int32_t((i * 37 + 11) % size_t(std::min(scalar->info().vocab, 200)));
        const std::vector<float> ref = scalar->eval(ids);
        const int32_t next = ids[3];
        const std::vector<float> refNext = scalar->eval(std::span<const int32_t>(&next, 1));
        scalar.reset();
        for (SimdLevel lvl : supported()) {
            waste::quant::setActiveSimd(lvl);
            std::unique_ptr<waste::Model> m = waste::Model::open(dir);
            const std::vector<float> got = m->eval(ids);
            waste::quant::setActiveSimd(SimdLevel::Scalar);
            const std::vector<float> gotNext = m->eval(std::span<const int32_t>(&next, 1));
            ASSERT_EQ(gotNext.size(), refNext.size());
            EXPECT_EQ(std::memcmp(gotNext.data(), refNext.data(), refNext.size() * sizeof(float)), 0)
                << cases[c].name << ": the state the pass left at " << waste::quant::simdName(lvl)
                << " is not the scalar pass's";
            ASSERT_EQ(got.size(), ref.size());
            double maxAbs = 0, scale = 0;
            for (size_t i = 0; i < ref.size(); ++i) {
                maxAbs = std::max(maxAbs, std::fabs(double(got[i]) - ref[i]));
                scale = std::max(scale, std::fabs(double(ref[i])));
            }
            EXPECT_LE(maxAbs, 1e-5 * scale) << cases[c].name << " at " << waste::quant::simdName(lvl);
        }
        std::filesystem::remove_all(dir);
    }
    waste::quant::setActiveSimd(before);
}
