// What the release-plan tests (tst_release_plan, tst_gqa_release_plan, tst_dsa_release_plan,
// tst_dsv4_release_plan) share: a fixture config planned at a RAM size and context, and the
// byte arithmetic they check the plans against. The trunk's Q4G / Q8G sizes stay in each
// test: some count a matrix's last partial group of 128 inputs as whole, some as it is.
#pragma once

#include <waste/release_plan.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>

namespace release_plan_arithmetic {

inline const std::string kConfigs = std::string(WASTE_FIXTURES_DIR) + "/release-configs/";

inline std::string readText(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    EXPECT_TRUE(f.good()) << path;
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// `file` of tests/fixtures/release-configs planned for `ram` bytes at `ctx` positions.
inline waste::ReleasePlan planOn(const std::string &file, int64_t ram, int ctx = 4096)
{
    waste::ReleasePlanOptions o;
    o.ctx = ctx;
    o.ramBytes = ram;
    return waste::planRelease(readText(kConfigs + file), o);
}

inline int64_t f32(int64_t n) { return n * 4; }
inline int64_t pages(int64_t bytes) { return (bytes + 4095) / 4096 * 4096; }

// VQ3R record of an expert (gate and up IM x H, down H x IM): 3 index bytes per 8 inputs per
// row (rows in blocks of 64), f16 row scales, a 48-byte header, whole pages.
inline int64_t vq3r(int64_t IM, int64_t H) { return pages(48 + 3 * (IM / 64) * (H / 8) * 64 * 3 + 2 * (2 * IM + H)); }

// The default budget: floor plus 3, 2 or 1 of the reference's working sets (every layer's
// top-k records; recommended_bytes is floor + 3 of them), the first under 7/8 of RAM.
inline int64_t defaultBudget(const waste::MemoryPlan &p, int64_t ram)
{
    const int64_t cap = ram - ram / 8;
    const int64_t step = (p.recommended_bytes - p.floor_bytes) / 3;
    for (int n = 3; n >= 1; --n)
        if (p.floor_bytes + n * step <= cap)
            return p.floor_bytes + n * step;
    return p.floor_bytes;
}

} // namespace release_plan_arithmetic
