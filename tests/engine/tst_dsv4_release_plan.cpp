// Planning DeepSeek-V4-Flash from its config.json alone (waste::planRelease): the trunk tensor
// by tensor, the state its layers keep (window rings, compressor states, compressed rows and
// the indexer's keys), the FP4 experts' native MXFP4 records and the working set, against the
// arithmetic written out here; parameter counts against the published 284B / 13B.
#include <waste/release_plan.hpp>

#include "release_plan_arithmetic.hpp"

#include "format/native_record.hpp"
#include "format/release_config.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

namespace {

using namespace release_plan_arithmetic;

waste::ReleasePlan planOn(int64_t ram, int ctx) { return release_plan_arithmetic::planOn("deepseek-v4-flash.json", ram, ctx); }

// Q4G: two weights a byte and an f16 scale per 128 inputs; Q8G one a byte; F32 four.
int64_t groups(int64_t cols) { return (cols + 127) / 128; }
int64_t q4(int64_t rows, int64_t cols) { return rows * groups(cols) * 64 + rows * groups(cols) * 2; }
int64_t q8(int64_t rows, int64_t cols) { return rows * groups(cols) * 128 + rows * groups(cols) * 2; }

constexpr int64_t H = 4096, L = 43, V = 129280, NH = 64, D = 512, QL = 1024, G = 8, OL = 1024, E = 256, K = 6, IM = 2048;
constexpr int64_t HC = 4, M = (2 + HC) * HC, W = 128, HI = 64, DI = 128, HASH = 3;

int64_t ratioOf(int64_t l) { return l < 2 ? 0 : l == L - 1 ? 4 : (l % 2 == 0 ? 4 : 128); }

} // namespace

TEST(Dsv4ReleasePlan, TrunkStateRecordsAndParameters)
{
    const int64_t ram = int64_t(64) << 30;
    const waste::ReleasePlan r = planOn(ram, 4096);
    EXPECT_EQ(r.arch, "deepseek-v4");

    // The layer schedule the config lists: 2 window-only, then 4 and 128 alternating, 4 last.
    int64_t r4 = 0, r128 = 0;
    for (int64_t l = 0; l < L; ++l) {
        r4 += ratioOf(l) == 4;
        r128 += ratioOf(l) == 128;
    }
    EXPECT_EQ(r4, 21);
    EXPECT_EQ(r128, 20);

    // Every layer: the two hyper-connection mixes (F32, as released), two norms, the sinks,
    // q (wq_a, its norm, wq_b), the shared key=value head (wkv, its norm), the grouped output
    // (wo_a: 8 groups of 1024 over 8 heads' 4096; wo_b), the router (tid2eid F32 on the 3 hash
    // layers, else its bias) and the shared expert; the compressor on ratio-4 (two blocks wide)
    // and ratio-128 layers, its position table F32; the indexer on ratio-4 layers.
    const int64_t common = 2 * (f32(M * HC * H) + f32(M) + f32(3)) + 2 * f32(H) + f32(NH) + q4(QL, H) + f32(QL) +
                           q4(NH * D, QL) + q4(D, H) + f32(D) + q4(G * OL, NH * D / G) + q4(H, G * OL) + q4(E, H) +
                           q4(IM, H) + q4(H, IM) + q4(IM, H);
    const int64_t comp4 = 2 * q4(2 * D, H) + f32(4 * 2 * D) + f32(D);
    // weights_proj [HI, H] stays F32, as DSA's (format/trunk_layout.cpp: it weighs each head's vote).
    const int64_t index4 = q4(HI * DI, QL) + f32(HI * H) + 2 * q4(2 * DI, H) + f32(4 * 2 * DI) + f32(DI);
    const int64_t comp128 = 2 * q4(D, H) + f32(128 * D) + f32(D);
    const int64_t trunk = L * common + HASH * f32(V * K) + (L - HASH) * f32(E) + r4 * (comp4 + index4) + r128 * comp128 +
                          f32(H) + q8(V, H) + f32(HC * HC * H) + f32(HC) + f32(1); // + norm, head, its mix; embed on disk
    ASSERT_TRUE(r.has_native);
    EXPECT_EQ(r.native.plan.trunk_bytes, trunk);

    // State at 4096 positions, f32: every layer's window of 128 rows of 512; ratio-4 layers
    // their compressor's state (8 tokens of keys and gates, 1024 wide), the indexer's (8 of
    // 256) and 1024 rows of 512 + 128 (the indexer's keys); ratio-128 layers 128 tokens of
    // keys and gates 512 wide and 32 rows of 512.
    const auto state = [&](int64_t ctx) {
        return f32(L * W * D + r4 * (2 * 8 * 2 * D + 2 * 8 * 2 * DI + ctx / 4 * (D + DI)) +
                   r128 * (2 * 128 * D + ctx / 128 * D));
    };
    EXPECT_EQ(r.native.plan.state_bytes, state(4096));
    const waste::ReleasePlan longer = planOn(ram, 65536);
    EXPECT_EQ(longer.native.plan.state_bytes - r.native.plan.state_bytes,
              f32(r4 * (65536 - 4096) / 4 * (D + DI) + r128 * (65536 - 4096) / 128 * D))
        << "a token adds a quarter row (and indexer key) on ratio-4 layers, 1/128 row on ratio-128 ones";
    // A checkpoint copies the window rings and compressor states, not the rows.
    EXPECT_EQ(r.native.plan.checkpoint_bytes, state(0) + f32(V));

    // The experts as convert keeps them by default: the release's FP4 as MXFP4 records.
    const nlohmann::json root = nlohmann::json::parse(readText(kConfigs + "deepseek-v4-flash.json"));
    EXPECT_EQ(waste::format::defaultExpertFormat(root), waste::format::kFmtMXFP4);
    EXPECT_EQ(r.native.expert_format, "MXFP4");
    const int64_t mx = pages(64 + 3 * IM * H / 2 + 3 * IM * (H / 32));
    EXPECT_EQ(r.native.record_bytes, mx);
    // Hash layers route too (to their tid2eid row's 6): top-k of every one of the 43 layers.
    const double ws = double(r.native.plan.working_set_bytes), want = double(K * L * mx);
    EXPECT_NEAR(ws, want, 0.03 * want);
    EXPECT_EQ(r.native.plan.working_set_bytes, K * L * mx);
    EXPECT_EQ(r.native.plan.expert_bytes_total, mx * E * L);
    EXPECT_EQ(r.native.plan.floor_bytes, r.native.plan.trunk_bytes + r.native.plan.state_bytes +
                                             r.native.plan.scratch_bytes + mx * K * 2);

    // 284B total, 13B active (the model card's); the trunk 0.45-1.2 bytes per parameter that
    // is not a routed expert's.
    const double routed = double(3 * IM * H) * E * L;
    EXPECT_NEAR(double(r.total_params) / 1e9, 284.0, 284.0 * 0.02);
    EXPECT_NEAR(double(r.active_params) / 1e9, 13.0, 13.0 * 0.08);
    const double perParam = double(r.native.plan.trunk_bytes) / (double(r.total_params) - routed);
    EXPECT_GE(perParam, 0.45);
    EXPECT_LE(perParam, 1.2);
    std::printf("[plan] deepseek-v4-flash  MXFP4 record %.2f MiB, working set %.2f GiB, trunk %.2f GiB (%.2f B per "
                "non-routed parameter), state %.2f GiB at 4096, floor %.2f GiB; %.1fB total, %.1fB active\n",
                double(mx) / double(1 << 20), ws / double(1 << 30), double(r.native.plan.trunk_bytes) / double(1 << 30),
                perParam, double(r.native.plan.state_bytes) / double(1 << 30),
                double(r.native.plan.floor_bytes) / double(1 << 30), double(r.total_params) / 1e9,
                double(r.active_params) / 1e9);
}
