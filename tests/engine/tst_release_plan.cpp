// Planning a release from its config.json alone (waste::planRelease), before a byte of it is
// downloaded: full-size Kimi K3 gives the floor and default the manifest-only plan gives
// (and the reference published), and DeepSeek-V3 / Kimi K2 give the figures the arithmetic
// written out below gives, for the VQ3R container and the release's own FP8 records.
#include <waste/release_plan.hpp>

#include "release_plan_arithmetic.hpp"

#include <gtest/gtest.h>

namespace {

using namespace release_plan_arithmetic;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Stored bytes of a [rows, cols] trunk matrix: Q4G two weights a byte, Q8G one, both with
// an f16 scale per 128 inputs; F32 four bytes a value.
int64_t q4(int64_t rows, int64_t cols) { return rows * cols / 2 + rows * ((cols + 127) / 128) * 2; }
int64_t q8(int64_t rows, int64_t cols) { return rows * cols + rows * ((cols + 127) / 128) * 2; }

} // namespace

TEST(ReleasePlan, KimiK3ConfigGivesTheManifestPlanAndTheReferenceFigures)
{
    const std::string manifest = std::string(WASTE_FIXTURES_DIR) + "/k3-full-manifest";
    const struct {
        int ctx;
        double floorGiB;
    } cases[] = {{4096, 29.06}, {32768, 30.54}, {131072, 35.64}, {1048576, 83.22}};
    for (const auto &c : cases) {
        const waste::ReleasePlan r = planOn("kimi-k3.json", int64_t(64) << 30, c.ctx);
        const waste::MemoryPlan m = waste::planMemory(manifest, c.ctx);
        EXPECT_EQ(r.arch, "kimi-k3");
        // Byte for byte what the converted container's manifest gives.
        EXPECT_EQ(r.vq.plan.trunk_bytes, m.trunk_bytes) << "ctx " << c.ctx;
        EXPECT_EQ(r.vq.plan.state_bytes, m.state_bytes) << "ctx " << c.ctx;
        EXPECT_EQ(r.vq.plan.floor_bytes, m.floor_bytes) << "ctx " << c.ctx;
        EXPECT_EQ(r.vq.plan.recommended_bytes, m.recommended_bytes) << "ctx " << c.ctx;
        EXPECT_NEAR(r.vq.plan.floor_bytes / kGiB, c.floorGiB, c.floorGiB * 0.01) << "ctx " << c.ctx;
    }
    const waste::ReleasePlan r = planOn("kimi-k3.json", int64_t(64) << 30);
    // Default on a 64 GB machine: floor + 1 working set = 46.25 GiB (reference §4.2).
    const waste::BudgetChoice d = waste::resolveBudget(r.vq.plan, 0);
    EXPECT_NEAR(d.budget_bytes / kGiB, 46.25, 46.25 * 0.01);
    // The reference's cache holds what this engine's does plus its state checkpoint, which a
    // release plan knows before the download as the container's manifest does.
    EXPECT_TRUE(d.checkpoint_kept);
    EXPECT_EQ(r.vq.plan.checkpoint_bytes, waste::planMemory(manifest, 4096).checkpoint_bytes);
    EXPECT_NEAR((d.expert_cache_bytes + r.vq.plan.checkpoint_bytes) / kGiB, 17.56, 17.56 * 0.01);
    // The cliff on that machine: 64 - 64/6 assumed held by other programs - 4 - 0.5 GiB.
    EXPECT_EQ(r.vq.plan.cliff_bytes, (int64_t(64) << 30) - (int64_t(64) << 30) / 6 - (int64_t(4) << 30) - (int64_t(512) << 20));
    EXPECT_GT(d.budget_bytes, 0);
    EXPECT_LT(d.budget_bytes, r.vq.plan.cliff_bytes);

    // The release's MXFP4 experts, kept native: latent width 3584, inter 3072. gate/up
    // [3072, 3584] and down [3584, 3072] are 3584*3072/2 bytes of nibbles each plus a scale
    // byte per 32; parts start on 64-byte boundaries after the 48-byte header.
    ASSERT_TRUE(r.has_native);
    EXPECT_EQ(r.native.expert_format, "MXFP4");
    const int64_t payload = 3584LL * 3072 / 2, scales = 3584LL * 3072 / 32;
    EXPECT_EQ(r.native.record_bytes, pages(64 + 3 * payload + 3 * scales));
    // The VQ3R record of the reference: 11.83 MiB.
    EXPECT_NEAR(r.vq.record_bytes / 1048576.0, 11.83, 0.01);
}

TEST(ReleasePlan, DeepSeekV3MatchesTheArithmetic)
{
    const waste::ReleasePlan r = planOn("deepseek-v3.json", int64_t(128) << 30);
    EXPECT_EQ(r.arch, "deepseek-v3");
    const int64_t H = 7168, L = 61, FD = 3, M = L - FD, E = 256, K = 8, IM = 2048, I = 18432, V = 129280;
    const int64_t NH = 128, QL = 1536, DC = 512, DN = 128, DR = 64, DV = 128;

    // Resident trunk: every layer is MLA with a low-rank query; three dense FFN layers; each
    // MoE layer a Q4G router, its f32 bias and one shared expert; the Q8G head. The Q8G
    // embedding table stays on disk.
    const int64_t mla = q4(QL, H) + f32(QL) + q4(NH * (DN + DR), QL) + q4(DC + DR, H) + f32(DC) + q4(NH * (DN + DV), DC) +
                        q4(H, NH * DV);
    const int64_t norms = 2 * f32(H);
    const int64_t dense = 2 * q4(I, H) + q4(H, I);
    const int64_t moe = q4(E, H) + f32(E) + 2 * q4(IM, H) + q4(H, IM);
    const int64_t trunk = L * (mla + norms) + FD * dense + M * moe + f32(H) + q8(V, H);
    EXPECT_EQ(r.vq.plan.trunk_bytes, trunk);

    // MLA latent cache, f32, every layer: 61 x 4096 x (512 + 64) x 4.
    EXPECT_EQ(r.vq.plan.state_bytes, L * 4096 * (DC + DR) * 4);

    // VQ3R record: 3 index bytes per 8 inputs per row (rows in blocks of 64), f16 row
    // scales, a 48-byte header, whole pages.
    const int64_t vq = pages(48 + 3 * (IM / 64) * (H / 8) * 64 * 3 + 2 * (2 * IM + H));
    EXPECT_EQ(r.vq.record_bytes, vq);
    EXPECT_EQ(r.vq.plan.min_expert_cache, vq * K * 2);
    EXPECT_EQ(r.vq.plan.working_set_bytes, vq * K * M) << "top-k records on each MoE layer; the 3 dense layers read none";
    EXPECT_EQ(r.vq.plan.floor_bytes,
              r.vq.plan.trunk_bytes + r.vq.plan.state_bytes + r.vq.plan.scratch_bytes + r.vq.plan.min_expert_cache);
    EXPECT_EQ(r.vq.plan.recommended_bytes, r.vq.plan.floor_bytes + 3 * vq * K * L);
    EXPECT_EQ(r.vq.plan.expert_bytes_total, vq * E * M);

    // The release's FP8 records: one byte per weight, an f32 per 128x128 block.
    ASSERT_TRUE(r.has_native);
    EXPECT_EQ(r.native.expert_format, "FP8B128");
    const int64_t fp8 = pages(64 + 3 * IM * H + 3 * (IM / 128) * (H / 128) * 4);
    EXPECT_EQ(r.native.record_bytes, fp8);
    EXPECT_EQ(r.native.plan.floor_bytes - r.vq.plan.floor_bytes, (fp8 - vq) * K * 2);

    // 671B parameters in all, about 37B active (DeepSeek's own figures, without the MTP layer).
    EXPECT_NEAR(double(r.total_params) / 1e9, 671, 10);
    EXPECT_NEAR(double(r.active_params) / 1e9, 37, 2);

    // A 128 GiB machine: the default steps down whole working sets to fit under 7/8 of RAM.
    const int64_t cap = (int64_t(128) << 30) - (int64_t(128) << 30) / 8;
    const int64_t ws = vq * K * L;
    int64_t expect = r.vq.plan.floor_bytes;
    for (int n = 3; n >= 1; --n)
        if (r.vq.plan.floor_bytes + n * ws <= cap) {
            expect = r.vq.plan.floor_bytes + n * ws;
            break;
        }
    EXPECT_EQ(waste::resolveBudget(r.vq.plan, 0).budget_bytes, expect);
}

TEST(ReleasePlan, KimiK2MatchesTheArithmetic)
{
    const waste::ReleasePlan r = planOn("kimi-k2.json", int64_t(64) << 30);
    const int64_t H = 7168, L = 61, FD = 1, M = L - FD, E = 384, K = 8, IM = 2048, I = 18432, V = 163840;
    const int64_t NH = 64, QL = 1536, DC = 512, DN = 128, DR = 64, DV = 128;
    const int64_t mla = q4(QL, H) + f32(QL) + q4(NH * (DN + DR), QL) + q4(DC + DR, H) + f32(DC) + q4(NH * (DN + DV), DC) +
                        q4(H, NH * DV);
    const int64_t moe = q4(E, H) + f32(E) + 2 * q4(IM, H) + q4(H, IM);
    const int64_t trunk = L * (mla + 2 * f32(H)) + FD * (2 * q4(I, H) + q4(H, I)) + M * moe + f32(H) + q8(V, H);
    EXPECT_EQ(r.vq.plan.trunk_bytes, trunk);
    EXPECT_EQ(r.vq.plan.state_bytes, L * 4096 * (DC + DR) * 4);
    const int64_t vq = pages(48 + 3 * (IM / 64) * (H / 8) * 64 * 3 + 2 * (2 * IM + H));
    EXPECT_EQ(r.vq.plan.expert_bytes_total, vq * E * M);
    EXPECT_EQ(r.vq.container_bytes - r.vq.plan.expert_bytes_total,
              trunk + q8(V, H) + M * 9 * (16 + 256 * 8 * 2)); // + the on-disk embedding + codebooks
    // About a trillion parameters, 32B active (Moonshot's figures).
    EXPECT_NEAR(double(r.total_params) / 1e12, 1.03, 0.03);
    EXPECT_NEAR(double(r.active_params) / 1e9, 32, 2);
    // On 64 GB the floor fits, the default is floor + 1 working set or the floor itself.
    EXPECT_LT(r.vq.plan.floor_bytes, r.vq.plan.cap_bytes);
}

// Kimi K2.5 nests K2's text model in text_config beside a vision tower: it plans as that
// text model (the same trunk, state and VQ3R records as K2's figures above), its INT4
// group-32 experts read from text_config's quantization_config, the tower left out.
TEST(ReleasePlan, KimiK25PlansItsTextModel)
{
    const waste::ReleasePlan k25 = planOn("kimi-k2.5.json", int64_t(64) << 30);
    const waste::ReleasePlan k2 = planOn("kimi-k2.json", int64_t(64) << 30);
    EXPECT_EQ(k25.arch, k2.arch);
    EXPECT_EQ(k25.vq.plan.trunk_bytes, k2.vq.plan.trunk_bytes);
    EXPECT_EQ(k25.vq.plan.state_bytes, k2.vq.plan.state_bytes);
    EXPECT_EQ(k25.vq.record_bytes, k2.vq.record_bytes);
    EXPECT_EQ(k25.vq.plan.floor_bytes, k2.vq.plan.floor_bytes);
    EXPECT_EQ(k25.total_params, k2.total_params);
    // INT4 records: half a byte per weight, a bf16 scale per 32, after the 64-byte header.
    const int64_t H = 7168, IM = 2048;
    ASSERT_TRUE(k25.has_native);
    EXPECT_EQ(k25.native.expert_format, "INT4G32");
    EXPECT_EQ(k25.native.record_bytes, pages(64 + 3 * IM * H / 2 + 3 * (IM * H / 32) * 2));
}

TEST(ReleasePlan, KimiLinearStateMatchesTheReference)
{
    const waste::ReleasePlan r = planOn("kimi-linear-48b.json", int64_t(32) << 30);
    EXPECT_EQ(r.arch, "kimi-linear");
    EXPECT_FALSE(r.has_native);
    // 20 KDA layers of 32 heads x 128 x 128 f32 (+ conv rings), 7 MLA layers of 4096 x 576 f32:
    // the reference's 40 MiB + 3 MiB + 63 MiB.
    EXPECT_EQ(r.vq.plan.state_bytes, 20LL * 32 * 128 * 128 * 4 + 20LL * 3 * 3 * 32 * 128 * 4 + 7LL * 4096 * 576 * 4);
    // Record 2.54 MiB, working set 0.54 GB, recommended ~ floor + 1.6 GB.
    EXPECT_NEAR(r.vq.record_bytes / 1048576.0, 2.54, 0.02);
    EXPECT_NEAR(r.vq.plan.working_set_bytes / 1e9, 0.57, 0.03);
}

TEST(ReleasePlan, RefusesWhatItCannotPlan)
{
    EXPECT_THROW(waste::planRelease("{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":4096}"), waste::Error);
    EXPECT_THROW(waste::planRelease("not json"), waste::Error);
    EXPECT_THROW(waste::planRelease("{\"architectures\":[\"DeepseekV3ForCausalLM\"],\"hidden_size\":7168,"
                                    "\"num_hidden_layers\":61,\"vocab_size\":1000,\"num_attention_heads\":8}"),
                 waste::Error);
}

TEST(ReleasePlan, TheDefaultBudgetStaysUnderThePagingCliff)
{
    // K3 with its experts kept as MXFP4 on a 64 GiB machine: one working set above the floor
    // (53.5 GiB) fits the 7/8 line but is past the cliff (48.8 GiB), where the OS would page
    // the cache. The default is the cliff itself: more than the floor, never past the cliff.
    for (const int64_t ram : {int64_t(32) << 30, int64_t(64) << 30, int64_t(128) << 30, int64_t(256) << 30}) {
        const waste::ReleasePlan r = planOn("kimi-k3.json", ram, 4096);
        for (const waste::ReleaseLayout *l : {&r.vq, &r.native}) {
            const waste::BudgetChoice d = waste::resolveBudget(l->plan, 0);
            if (l->plan.floor_bytes <= l->plan.cliff_bytes)
                EXPECT_LE(d.budget_bytes, l->plan.cliff_bytes) << l->expert_format << " on " << (ram >> 30) << " GiB";
        }
    }
    const waste::ReleasePlan at64 = planOn("kimi-k3.json", int64_t(64) << 30, 4096);
    const waste::BudgetChoice mx = waste::resolveBudget(at64.native.plan, 0);
    EXPECT_EQ(mx.budget_bytes, at64.native.plan.cliff_bytes);
    EXPECT_GT(mx.budget_bytes, at64.native.plan.floor_bytes);
    EXPECT_TRUE(mx.warnings.empty());
}
