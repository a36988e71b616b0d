// Planning the full-size DeepSeek-V3.2, GLM-5 / 5.1 and GLM-5.2 releases from their
// config.json alone (waste::planRelease; tests/fixtures/release-configs): trunk (each layer's
// lightning indexer included), state (the MLA latent and rotated key plus the indexer's key
// per position, on GLM-5.2 only on its 21 layers that run an indexer), records, floor and
// default against the arithmetic written out here; parameter counts against the published
// figures; the expert format convert makes by default; DeepSeek-V3.2 no longer planned as
// DeepSeek-V3.
#include <waste/release_plan.hpp>

#include "release_plan_arithmetic.hpp"

#include <gtest/gtest.h>

namespace {

using namespace release_plan_arithmetic;


// Stored bytes: Q4G two weights a byte, Q8G one, an f16 scale per 128 inputs; F32 four
// bytes a value (tensors under 65536 values, biases, and the indexer's head weights).
int64_t q4(int64_t rows, int64_t cols) { return rows * cols / 2 + rows * ((cols + 127) / 128) * 2; }
int64_t q8(int64_t rows, int64_t cols) { return rows * cols + rows * ((cols + 127) / 128) * 2; }
int64_t fp8(int64_t IM, int64_t H) { return pages(64 + 3 * IM * H + 3 * (IM / 128) * (H / 128) * 4); }

struct Dsa {
    const char *file, *arch;
    int64_t H, L, FD, I, V, NH, QL, DN, DV, HI, indexers; // indexers: layers that run one
    double totalB, activeB;                               // published, billions
    bool fp8;
};


void check(const Dsa &d)
{
    const int64_t ram = int64_t(256) << 30;
    const waste::ReleasePlan r = planOn(d.file, ram);
    EXPECT_EQ(r.arch, d.arch);
    const int64_t H = d.H, L = d.L, M = d.L - d.FD, E = 256, K = 8, IM = 2048, DC = 512, DR = 64, DI = 128, V = d.V;
    // Every layer: MLA with the low-rank query (Q4G matrices, F32 norms), two norms. Layers
    // with an indexer: wq_b [HI·DI, QL] and wk [DI, H] (Q4G), k_norm weight and bias (F32),
    // weights_proj [HI, H] (F32: kept exact). Dense layers an MLP of I; MoE layers the Q4G
    // router, its F32 bias and one shared expert. The final norm and the Q8G head; the
    // embedding table stays on disk. The MTP layer (index L) is read past.
    const int64_t mla = q4(d.QL, H) + f32(d.QL) + q4(d.NH * (d.DN + DR), d.QL) + q4(DC + DR, H) + f32(DC) +
                        q4(d.NH * (d.DN + d.DV), DC) + q4(H, d.NH * d.DV) + 2 * f32(H);
    const int64_t indexer = q4(d.HI * DI, d.QL) + q4(DI, H) + 2 * f32(DI) + f32(d.HI * H);
    const int64_t dense = 2 * q4(d.I, H) + q4(H, d.I);
    const int64_t moe = q4(E, H) + f32(E) + 2 * q4(IM, H) + q4(H, IM);
    EXPECT_EQ(r.vq.plan.trunk_bytes, L * mla + d.indexers * indexer + d.FD * dense + M * moe + f32(H) + q8(V, H));
    // State per position: the latent and rotated key (f32) on every layer, the indexer's key
    // (128 f32) on each layer that runs an indexer.
    EXPECT_EQ(r.vq.plan.state_bytes, 4096 * (L * (DC + DR) * 4 + d.indexers * DI * 4));
    const waste::ReleasePlan longer = planOn(d.file, ram, 65536);
    EXPECT_EQ(longer.vq.plan.state_bytes - r.vq.plan.state_bytes, (65536 - 4096) * (L * 2304 + d.indexers * 512));
    // Records, and the format convert makes by default: the release's FP8 blocks kept native
    // on V3.2, VQ3R from GLM's BF16.
    const int64_t vq = vq3r(IM, H);
    EXPECT_EQ(r.vq.record_bytes, vq);
    EXPECT_EQ(r.has_native, d.fp8);
    const waste::ReleaseLayout &made = r.convertDefault();
    EXPECT_EQ(made.expert_format, d.fp8 ? "FP8B128" : "VQ3R");
    const int64_t rec = d.fp8 ? fp8(IM, H) : vq;
    EXPECT_EQ(made.record_bytes, rec);
    EXPECT_EQ(made.plan.expert_bytes_total, rec * E * M);
    EXPECT_EQ(made.plan.min_expert_cache, rec * K * 2);
    EXPECT_EQ(made.plan.floor_bytes,
              made.plan.trunk_bytes + made.plan.state_bytes + made.plan.scratch_bytes + made.plan.min_expert_cache);
    EXPECT_EQ(made.plan.recommended_bytes, defaultBudget(made.plan, ram));
    // The working set: what one token reads, top-8 records on each MoE layer (the dense first
    // layers read none); the default budget steps by the reference's quantum over every layer.
    EXPECT_EQ(made.plan.working_set_bytes, rec * K * M);
    EXPECT_EQ(made.plan.recommended_bytes - made.plan.floor_bytes, 3 * rec * K * L);
    // Parameters without the MTP layer: trunk values as above, embedding and head V x H each,
    // routed experts 3 x IM x H each.
    const int64_t trunkParams = L * (d.QL * H + d.QL + d.NH * (d.DN + DR) * d.QL + (DC + DR) * H + DC +
                                     d.NH * (d.DN + d.DV) * DC + H * d.NH * d.DV + 2 * H) +
                                d.indexers * (d.HI * DI * d.QL + DI * H + 2 * DI + d.HI * H) + d.FD * 3 * d.I * H +
                                M * (E * H + E + 3 * IM * H) + H + 2 * V * H;
    const int64_t expert = 3 * IM * H;
    EXPECT_EQ(r.total_params, trunkParams + expert * E * M);
    EXPECT_EQ(r.active_params, trunkParams - V * H + expert * K * M);
    EXPECT_NEAR(double(r.total_params) / 1e9, d.totalB, d.totalB * 0.02);
    EXPECT_NEAR(double(r.active_params) / 1e9, d.activeB, d.activeB * 0.08);
    const double perParam = double(r.vq.plan.trunk_bytes) / double(trunkParams - V * H);
    EXPECT_GT(perParam, 0.45);
    EXPECT_LT(perParam, 1.2);
    std::printf("[plan] %-20s %s: floor %.2f GiB, default %.2f GiB on 256 GiB (%s record %lld B), %.1fB total, "
                "%.1fB active, trunk %.3f B/param, state %.1f KiB/token\n",
                d.file, made.expert_format.c_str(), double(made.plan.floor_bytes) / double(1 << 30),
                double(made.plan.recommended_bytes) / double(1 << 30), made.expert_format.c_str(),
                static_cast<long long>(rec), double(r.total_params) / 1e9, double(r.active_params) / 1e9, perParam,
                double(r.vq.plan.state_bytes) / 4096 / 1024);
}

} // namespace

// Published: DeepSeek-V3.2 671B / 37B (V3's geometry, the indexer adds 0.8B); GLM-5 744B / 40B.
TEST(DsaReleasePlan, DeepSeekV32)
{
    check({"deepseek-v3.2.json", "deepseek-v32", 7168, 61, 3, 18432, 129280, 128, 1536, 128, 128, 64, 61, 671, 37, true});
}
TEST(DsaReleasePlan, Glm5) { check({"glm-5.json", "glm-moe-dsa", 6144, 78, 3, 12288, 154880, 64, 2048, 192, 256, 32, 78, 744, 40, false}); }
TEST(DsaReleasePlan, Glm52SharesTheIndexerOnThreeLayersOfFour)
{
    check({"glm-5.2.json", "glm-moe-dsa", 6144, 78, 3, 12288, 154880, 64, 2048, 192, 256, 32, 21, 744, 40, false});
}

TEST(DsaReleasePlan, DeepSeekV32IsNotPlannedAsV3)
{
    // The same trunk and experts as DeepSeek-V3; the indexer adds its tensors and 512 bytes
    // of state per layer per position.
    const waste::ReleasePlan v3 = planOn("deepseek-v3.json", int64_t(256) << 30);
    const waste::ReleasePlan v32 = planOn("deepseek-v3.2.json", int64_t(256) << 30);
    EXPECT_EQ(v3.arch, "deepseek-v3");
    EXPECT_EQ(v32.arch, "deepseek-v32");
    EXPECT_EQ(v32.vq.plan.state_bytes - v3.vq.plan.state_bytes, 61 * 4096 * 512);
    EXPECT_EQ(v32.vq.plan.trunk_bytes - v3.vq.plan.trunk_bytes,
              61 * (q4(64 * 128, 1536) + q4(128, 7168) + f32(2 * 128) + f32(64 * 7168)));
}
