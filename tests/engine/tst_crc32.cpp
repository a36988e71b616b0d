// Every crc32 way this CPU has (PCLMULQDQ folding on x86-64, the ARMv8 CRC32 instructions
// on aarch64) gives the slice-by-8 tables' bits: random lengths (0 to past several folds),
// every alignment, random running values; and the check value of "123456789". Runs in the
// aarch64 cross check too (tests/engine/aarch64_kernels.sh), where the ARMv8 way is required.
#include <gtest/gtest.h>

#include "format/crc32.hpp"

#include <cstdio>
#include <random>
#include <vector>

using namespace waste::format;

namespace {

std::vector<std::pair<const char *, Crc32Fn>> fastWays()
{
    std::vector<std::pair<const char *, Crc32Fn>> out;
    if (Crc32Fn f = crc32Pclmul()) out.emplace_back("pclmul", f);
    if (Crc32Fn f = crc32Armv8()) out.emplace_back("armv8-crc", f);
    return out;
}

} // namespace

TEST(Crc32, ScalarHasTheStandardCheckValue)
{
    EXPECT_EQ(crc32Scalar()("123456789", 9, 0), 0xCBF43926u);
    EXPECT_EQ(crc32Scalar()("", 0, 0), 0u);
    EXPECT_EQ(crc32("123456789", 9), 0xCBF43926u);
}

TEST(Crc32, TheChosenWayIsTheFastestThisCpuHas)
{
    std::printf("crc32 way: %s\n", crc32Name());
    const auto fast = fastWays();
#if defined(__x86_64__) || defined(__aarch64__)
    // Every x86-64 CPU since 2010 and every aarch64 one this project runs on has one.
    ASSERT_FALSE(fast.empty());
#endif
    if (!fast.empty()) EXPECT_STREQ(crc32Name(), fast.front().first);
}

TEST(Crc32, EveryWayGivesTheTablesBitsAtAnyLengthAndAlignment)
{
    const auto fast = fastWays();
    if (fast.empty()) GTEST_SKIP() << "no faster crc32 way on this CPU";
    std::mt19937_64 rng(20261202);
    std::vector<uint8_t> data(70000);
    for (auto &b : data) b = static_cast<uint8_t>(rng());
    const Crc32Fn scalar = crc32Scalar();
    for (const auto &[name, fn] : fast) {
        SCOPED_TRACE(name);
        EXPECT_EQ(fn("123456789", 9, 0), 0xCBF43926u);
        // Every length to 300 (the fold boundaries at 16 and 64) at every alignment to 64...
        for (size_t len = 0; len <= 300; ++len)
            for (size_t off = 0; off < 64; off += 7) {
                const uint32_t init = static_cast<uint32_t>(rng());
                ASSERT_EQ(fn(data.data() + off, len, init), scalar(data.data() + off, len, init)) << len << " at " << off;
            }
        // ...then random long ones, and a record-sized run continued in pieces.
        for (int i = 0; i < 400; ++i) {
            const size_t off = rng() % 4096, len = rng() % (data.size() - off);
            const uint32_t init = static_cast<uint32_t>(rng());
            ASSERT_EQ(fn(data.data() + off, len, init), scalar(data.data() + off, len, init)) << len << " at " << off;
        }
        uint32_t pieces = 0;
        for (size_t at = 0; at < 65536; at += 4093)
            pieces = fn(data.data() + at, std::min<size_t>(4093, 65536 - at), pieces);
        EXPECT_EQ(pieces, scalar(data.data(), 65536, 0));
    }
}
