// A whole eval at every SIMD level this CPU supports agrees with the scalar eval within
// 1e-5 relative (the kernels one by one: tst_simd). Kept apart from tst_simd because it needs
// the whole engine, while tst_simd is one of the kernel tests the aarch64 cross check builds
// without it (tests/engine/aarch64_kernels.sh).
#include <gtest/gtest.h>

#include "quant/simd.hpp"
#include "waste/waste.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
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
