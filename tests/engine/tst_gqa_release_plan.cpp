// Planning the full-size Qwen3-MoE, Qwen3-Next, Qwen3.5-MoE, gpt-oss and GLM-4.5 releases from their
// config.json alone (waste::planRelease): trunk, KV state, records, floor and default against
// the arithmetic written out here, parameter counts against the published figures, and
// gpt-oss's sliding layers keeping 128 positions whatever the context, Qwen3-Next's
// Gated DeltaNet layers keeping a fixed state whatever the context, GLM-4.5's dense first
// layers holding no experts.
#include <waste/release_plan.hpp>

#include "release_plan_arithmetic.hpp"

#include <gtest/gtest.h>

namespace {

using namespace release_plan_arithmetic;


// Stored bytes: Q4G two weights a byte, Q8G one, rows padded to whole groups of 128
// inputs (gpt-oss's 2880 = 22.5 groups), an f16 scale per group; F32 four bytes a value
// (small tensors and every bias).
int64_t groups(int64_t cols) { return (cols + 127) / 128; }
int64_t q4(int64_t rows, int64_t cols) { return rows * groups(cols) * 64 + rows * groups(cols) * 2; }
int64_t q8(int64_t rows, int64_t cols) { return rows * groups(cols) * 128 + rows * groups(cols) * 2; }


void checkQwen3(const std::string &file, int64_t H, int64_t L, int64_t NH, int64_t IM, double total, double active)
{
    const int64_t ram = int64_t(64) << 30;
    const waste::ReleasePlan r = planOn(file, ram);
    EXPECT_EQ(r.arch, "qwen3-moe");
    const int64_t KVH = 4, HD = 128, E = 128, K = 8, V = 151936;
    // Every layer: q, k, v, o (Q4G), the per-head q/k norm weights, two norms, the Q4G
    // router; no shared expert. The final norm, the Q8G head; the embedding stays on disk.
    const int64_t layer = q4(NH * HD, H) + 2 * q4(KVH * HD, H) + q4(H, NH * HD) + 2 * f32(HD) + 2 * f32(H) + q4(E, H);
    EXPECT_EQ(r.vq.plan.trunk_bytes, L * layer + f32(H) + q8(V, H));
    // KV cache, f32, every layer: keys and values of 4 heads of 128 for 4096 positions.
    EXPECT_EQ(r.vq.plan.state_bytes, L * 4096 * 2 * KVH * HD * 4);
    EXPECT_EQ(r.vq.plan.checkpoint_bytes, f32(V)) << "no recurrent state: a checkpoint is one row of logits";
    const int64_t rec = vq3r(IM, H);
    EXPECT_EQ(r.vq.record_bytes, rec);
    EXPECT_EQ(r.vq.plan.working_set_bytes, rec * K * L);
    EXPECT_EQ(r.vq.plan.floor_bytes,
              r.vq.plan.trunk_bytes + r.vq.plan.state_bytes + r.vq.plan.scratch_bytes + rec * K * 2);
    EXPECT_EQ(r.vq.plan.recommended_bytes, defaultBudget(r.vq.plan, ram));
    EXPECT_FALSE(r.has_native) << "a BF16 release has no quantised expert layout of its own";
    EXPECT_NEAR(double(r.total_params) / 1e9, total, total * 0.02);
    EXPECT_NEAR(double(r.active_params) / 1e9, active, active * 0.08);
    std::printf("[plan] %-22s floor %.2f GiB, default %.2f GiB on 64 GiB (VQ3R record %lld B)\n", file.c_str(),
                double(r.vq.plan.floor_bytes) / double(1 << 30), double(r.vq.plan.recommended_bytes) / double(1 << 30),
                static_cast<long long>(rec));
}

void checkGptOss(const std::string &file, int64_t L, int64_t E, double total, double active)
{
    const int64_t ram = int64_t(32) << 30;
    const waste::ReleasePlan r = planOn(file, ram);
    EXPECT_EQ(r.arch, "gpt-oss");
    const int64_t H = 2880, NH = 64, KVH = 8, HD = 64, IM = 2880, K = 4, V = 201088;
    // Every layer: q, k, v, o (Q4G) with F32 biases, the sinks, two norms, the Q4G router
    // with its bias, the experts' gate/up and down biases (F32, exact).
    const int64_t layer = q4(NH * HD, H) + 2 * q4(KVH * HD, H) + q4(H, NH * HD) + f32(NH * HD + 2 * KVH * HD + H) +
                          f32(NH) + 2 * f32(H) + q4(E, H) + f32(E) + f32(E * 2 * IM) + f32(E * H);
    EXPECT_EQ(r.vq.plan.trunk_bytes, L * layer + f32(H) + q8(V, H));
    // KV: the full half of the layers 4096 positions, the sliding half 128.
    const int64_t row = 2 * KVH * HD * 4;
    EXPECT_EQ(r.vq.plan.state_bytes, L / 2 * 4096 * row + L / 2 * 128 * row);
    // The release's MXFP4 records: half a byte a weight, an E8M0 scale per 32, a header.
    ASSERT_TRUE(r.has_native);
    EXPECT_EQ(r.native.expert_format, "MXFP4");
    const int64_t mx = pages(64 + 3 * IM * H / 2 + 3 * IM * (H / 32));
    EXPECT_EQ(r.native.record_bytes, mx);
    EXPECT_EQ(r.native.plan.working_set_bytes, mx * K * L);
    EXPECT_EQ(r.native.plan.floor_bytes, r.native.plan.trunk_bytes + r.native.plan.state_bytes +
                                             r.native.plan.scratch_bytes + mx * K * 2);
    EXPECT_EQ(r.native.plan.recommended_bytes, defaultBudget(r.native.plan, ram));
    EXPECT_EQ(r.native.plan.expert_bytes_total, mx * E * L);
    EXPECT_NEAR(double(r.total_params) / 1e9, total, total * 0.02);
    EXPECT_NEAR(double(r.active_params) / 1e9, active, active * 0.05);
    // A 16 times longer context grows the full layers' KV only.
    const waste::ReleasePlan longer = planOn(file, ram, 65536);
    EXPECT_EQ(longer.native.plan.state_bytes - r.native.plan.state_bytes, L / 2 * (65536 - 4096) * row);
    // A checkpoint copies the sliding layers' rings (overwritten as positions go on) and one
    // row of logits; the full layers' keys and values are indexed by position and stay.
    EXPECT_EQ(r.native.plan.checkpoint_bytes, L / 2 * 128 * row + f32(V));
    EXPECT_EQ(longer.native.plan.checkpoint_bytes, r.native.plan.checkpoint_bytes);
    EXPECT_EQ(planOn(file, ram, 64).native.plan.checkpoint_bytes, L / 2 * 64 * row + f32(V)) << "a context under the window";
    std::printf("[plan] %-22s native MXFP4 floor %.2f GiB, default %.2f GiB on 32 GiB (record %lld B)\n", file.c_str(),
                double(r.native.plan.floor_bytes) / double(1 << 30),
                double(r.native.plan.recommended_bytes) / double(1 << 30), static_cast<long long>(mx));
}

void checkQwen3Next(const std::string &file)
{
    const int64_t ram = int64_t(32) << 30;
    const waste::ReleasePlan r = planOn(file, ram);
    EXPECT_EQ(r.arch, "qwen3-next");
    const int64_t H = 2048, L = 48, NH = 16, KVH = 2, HD = 256, E = 512, K = 10, IM = 512, SI = 512, V = 151936;
    const int64_t Hk = 16, Hv = 32, D = 128, Kw = Hk * D, Vw = Hv * D, conv = 2 * Kw + Vw, linear = 36, full = 12;
    // Gated DeltaNet layers: the qkvz, ba and out projections (Q4G); A_log, dt_bias, the
    // conv taps (8192 x 4, under the 65536-value line) and the gated norm's weight in F32.
    const int64_t deltaNet = q4(2 * Kw + 2 * Vw, H) + q4(2 * Hv, H) + q4(H, Vw) + f32(Hv) + f32(Hv) + f32(conv * 4) + f32(D);
    // Gated attention layers: q_proj twice as wide (q and the output gate), k, v, o (Q4G),
    // the q/k norm weights.
    const int64_t attention = q4(2 * NH * HD, H) + 2 * q4(KVH * HD, H) + q4(H, NH * HD) + 2 * f32(HD);
    // Every layer: two norms, the Q4G router, the shared expert (Q4G) and its gate [1, H] (F32).
    const int64_t every = 2 * f32(H) + q4(E, H) + 2 * q4(SI, H) + q4(H, SI) + f32(H);
    EXPECT_EQ(r.vq.plan.trunk_bytes, linear * deltaNet + full * attention + L * every + f32(H) + q8(V, H));
    // State: each Gated DeltaNet layer 32 matrices of 128 x 128 and 3 conv inputs of 8192
    // channels (f32), whatever the context; each full layer keys and values of 2 heads of
    // 256 for 4096 positions.
    const int64_t fixed = linear * (Hv * D * D + conv * 3) * 4;
    EXPECT_EQ(r.vq.plan.state_bytes, fixed + full * 4096 * 2 * KVH * HD * 4);
    // A checkpoint: the Gated DeltaNet layers' fixed state and one row of logits.
    EXPECT_EQ(r.vq.plan.checkpoint_bytes, fixed + f32(V));
    const int64_t rec = vq3r(IM, H);
    EXPECT_EQ(r.vq.record_bytes, rec);
    EXPECT_EQ(r.vq.plan.working_set_bytes, rec * K * L);
    EXPECT_EQ(r.vq.plan.floor_bytes,
              r.vq.plan.trunk_bytes + r.vq.plan.state_bytes + r.vq.plan.scratch_bytes + rec * K * 2);
    EXPECT_EQ(r.vq.plan.recommended_bytes, defaultBudget(r.vq.plan, ram));
    EXPECT_FALSE(r.has_native) << "a BF16 release has no quantised expert layout of its own";
    // Parameters: the experts 3 x 512 x 2048 per expert, 512 per layer; the trunk as above
    // counted in values; the embedding table and the head 151936 x 2048 each.
    const int64_t expert = 3 * IM * H;
    const int64_t trunkParams = linear * ((2 * Kw + 2 * Vw) * H + 2 * Hv * H + H * Vw + 2 * Hv + conv * 4 + D) +
                                full * (2 * NH * HD * H + 2 * KVH * HD * H + H * NH * HD + 2 * HD) +
                                L * (2 * H + E * H + 3 * SI * H + H) + H + 2 * V * H;
    EXPECT_EQ(r.total_params, trunkParams + expert * E * L);
    EXPECT_EQ(r.active_params, trunkParams - V * H + expert * K * L);
    EXPECT_NEAR(double(r.total_params) / 1e9, 80.0, 80.0 * 0.01); // published: 80B total
    // A 16 times longer context grows the full layers' KV only.
    const waste::ReleasePlan longer = planOn(file, ram, 65536);
    EXPECT_EQ(longer.vq.plan.state_bytes - r.vq.plan.state_bytes, full * (65536 - 4096) * 2 * KVH * HD * 4);
    std::printf("[plan] %-22s floor %.2f GiB, default %.2f GiB on 32 GiB (VQ3R record %lld B), %.2fB total, %.2fB active\n",
                file.c_str(), double(r.vq.plan.floor_bytes) / double(1 << 30),
                double(r.vq.plan.recommended_bytes) / double(1 << 30), static_cast<long long>(rec),
                double(r.total_params) / 1e9, double(r.active_params) / 1e9);
}

struct Qwen35 {
    int64_t H, L, E, K;
};

// Qwen3.5-MoE (the multimodal release: text_config read, the vision tower and the MTP block
// read past): Qwen3-Next's layers with the Gated DeltaNet's projections stored apart, every
// layer MoE with a gated shared expert, a 248320-token vocabulary.
void checkQwen35Moe(const std::string &file, const Qwen35 &q, double total, double active)
{
    const int64_t ram = int64_t(128) << 30;
    const waste::ReleasePlan r = planOn(file, ram);
    EXPECT_EQ(r.arch, "qwen3.5-moe");
    const int64_t H = q.H, L = q.L, E = q.E, K = q.K, NH = 32, KVH = 2, HD = 256, IM = 1024, SI = 1024, V = 248320;
    const int64_t Hk = 16, Hv = 64, D = 128, Kw = Hk * D, Vw = Hv * D, conv = 2 * Kw + Vw, linear = L / 4 * 3, full = L / 4;
    // Gated DeltaNet layers: in_proj_qkv, in_proj_z, in_proj_b, in_proj_a and out_proj (Q4G;
    // b and a are 64 x H, over the 65536-value line); A_log, dt_bias, the conv taps
    // (12288 x 4) and the gated norm's weight in F32.
    const int64_t deltaNet = q4(conv, H) + q4(Vw, H) + 2 * q4(Hv, H) + q4(H, Vw) + f32(Hv) + f32(Hv) + f32(conv * 4) + f32(D);
    // Gated attention layers: q_proj twice as wide (q and the output gate), k, v, o (Q4G),
    // the q/k norm weights.
    const int64_t attention = q4(2 * NH * HD, H) + 2 * q4(KVH * HD, H) + q4(H, NH * HD) + 2 * f32(HD);
    // Every layer: two norms, the Q4G router, the shared expert (Q4G) and its gate [1, H] (F32).
    const int64_t every = 2 * f32(H) + q4(E, H) + 2 * q4(SI, H) + q4(H, SI) + f32(H);
    EXPECT_EQ(r.vq.plan.trunk_bytes, linear * deltaNet + full * attention + L * every + f32(H) + q8(V, H));
    // State: each Gated DeltaNet layer 64 matrices of 128 x 128 and 3 conv inputs of 12288
    // channels (f32), whatever the context; each full layer keys and values of 2 heads of
    // 256 for 4096 positions.
    const int64_t fixed = linear * (Hv * D * D + conv * 3) * 4;
    EXPECT_EQ(r.vq.plan.state_bytes, fixed + full * 4096 * 2 * KVH * HD * 4);
    EXPECT_EQ(r.vq.plan.checkpoint_bytes, fixed + f32(V));
    // Records: a BF16 release converts to VQ3R by default, and the plan says so. Every layer
    // is MoE, so the working set is exactly top-k x MoE layers x one record.
    EXPECT_FALSE(r.has_native) << "a BF16 release has no quantised expert layout of its own";
    EXPECT_EQ(r.convertDefault().expert_format, "VQ3R");
    const int64_t rec = vq3r(IM, H);
    EXPECT_EQ(r.vq.record_bytes, rec);
    EXPECT_EQ(r.vq.plan.working_set_bytes, K * L * rec);
    EXPECT_EQ(r.vq.plan.expert_bytes_total, rec * E * L);
    EXPECT_EQ(r.vq.plan.floor_bytes,
              r.vq.plan.trunk_bytes + r.vq.plan.state_bytes + r.vq.plan.scratch_bytes + rec * K * 2);
    EXPECT_EQ(r.vq.plan.recommended_bytes, defaultBudget(r.vq.plan, ram));
    // Parameters, the tower and the MTP block left out: the trunk as above in values, the
    // embedding table and the head V x H each, the routed experts 3 x IM x H each.
    const int64_t trunkParams = linear * (conv * H + Vw * H + 2 * Hv * H + H * Vw + 2 * Hv + conv * 4 + D) +
                                full * (2 * NH * HD * H + 2 * KVH * HD * H + H * NH * HD + 2 * HD) +
                                L * (2 * H + E * H + 3 * SI * H + H) + H + 2 * V * H;
    const int64_t expert = 3 * IM * H;
    EXPECT_EQ(r.total_params, trunkParams + expert * E * L);
    EXPECT_EQ(r.active_params, trunkParams - V * H + expert * K * L);
    EXPECT_NEAR(double(r.total_params) / 1e9, total, total * 0.02);
    EXPECT_NEAR(double(r.active_params) / 1e9, active, active * 0.12);
    const double perParam = double(r.vq.plan.trunk_bytes) / double(trunkParams - V * H);
    EXPECT_GT(perParam, 0.45);
    EXPECT_LT(perParam, 1.2);
    // A 16 times longer context grows the full layers' KV only.
    const waste::ReleasePlan longer = planOn(file, ram, 65536);
    EXPECT_EQ(longer.vq.plan.state_bytes - r.vq.plan.state_bytes, full * (65536 - 4096) * 2 * KVH * HD * 4);
    std::printf("[plan] %-22s floor %.2f GiB, default %.2f GiB on 128 GiB (VQ3R record %lld B), %.1fB total, %.1fB "
                "active, trunk %.3f B/param\n",
                file.c_str(), double(r.vq.plan.floor_bytes) / double(1 << 30),
                double(r.vq.plan.recommended_bytes) / double(1 << 30), static_cast<long long>(rec),
                double(r.total_params) / 1e9, double(r.active_params) / 1e9, perParam);
}

struct Glm {
    int64_t H, L, FD, I, IM, E;
    bool qkNorm;
};

void checkGlm4Moe(const std::string &file, const Glm &g, double total, double active)
{
    const int64_t ram = int64_t(128) << 30;
    const waste::ReleasePlan r = planOn(file, ram);
    EXPECT_EQ(r.arch, "glm4-moe");
    const int64_t NH = 96, KVH = 8, HD = 128, K = 8, V = 151552, H = g.H, L = g.L, MoE = g.L - g.FD;
    // Every layer: q, k, v, o (Q4G) with F32 q/k/v biases (o has none), the q/k norm
    // weights where use_qk_norm, two norms. The first FD layers a dense MLP of I (Q4G); the
    // others the Q4G router, its F32 correction bias and one shared expert of IM (Q4G). The
    // MTP layer (index L) is read past. The final norm, the Q8G head; the embedding stays
    // on disk.
    const int64_t attention = q4(NH * HD, H) + 2 * q4(KVH * HD, H) + q4(H, NH * HD) + f32(NH * HD + 2 * KVH * HD) +
                              (g.qkNorm ? 2 * f32(HD) : 0) + 2 * f32(H);
    const int64_t dense = 2 * q4(g.I, H) + q4(H, g.I);
    const int64_t moe = q4(g.E, H) + f32(g.E) + 2 * q4(g.IM, H) + q4(H, g.IM);
    EXPECT_EQ(r.vq.plan.trunk_bytes, L * attention + g.FD * dense + MoE * moe + f32(H) + q8(V, H));
    // KV cache, f32, every layer: keys and values of 8 heads of 128 per position.
    EXPECT_EQ(r.vq.plan.state_bytes, L * 4096 * 2 * KVH * HD * 4);
    EXPECT_EQ(r.vq.plan.checkpoint_bytes, f32(V)) << "no recurrent state: a checkpoint is one row of logits";
    // Records: VQ3R (a BF16 release), banks on the MoE layers only. The working set is what
    // one token reads, top-8 records on each MoE layer; the default budget still steps by the
    // reference's quantum, which counts every layer (floor.hpp).
    const int64_t rec = vq3r(g.IM, H);
    EXPECT_EQ(r.vq.record_bytes, rec);
    EXPECT_EQ(r.vq.plan.working_set_bytes, rec * K * MoE);
    EXPECT_EQ(r.vq.plan.recommended_bytes - r.vq.plan.floor_bytes, 3 * rec * K * L) << "the reference's step";
    EXPECT_EQ(r.vq.plan.expert_bytes_total, rec * g.E * MoE);
    EXPECT_EQ(r.vq.plan.floor_bytes,
              r.vq.plan.trunk_bytes + r.vq.plan.state_bytes + r.vq.plan.scratch_bytes + rec * K * 2);
    EXPECT_EQ(r.vq.plan.recommended_bytes, defaultBudget(r.vq.plan, ram));
    EXPECT_FALSE(r.has_native) << "a BF16 release has no quantised expert layout of its own";
    // Parameters, the MTP layer left out: the trunk as above in values, the embedding table
    // and the head V x H each, the routed experts 3 x IM x H each.
    const int64_t trunkParams = L * (2 * NH * HD * H + 2 * KVH * HD * H + NH * HD + 2 * KVH * HD +
                                     (g.qkNorm ? 2 * HD : 0) + 2 * H) +
                                g.FD * 3 * g.I * H + MoE * (g.E * H + g.E + 3 * g.IM * H) + H + 2 * V * H;
    const int64_t expert = 3 * g.IM * H;
    EXPECT_EQ(r.total_params, trunkParams + expert * g.E * MoE);
    EXPECT_EQ(r.active_params, trunkParams - V * H + expert * K * MoE);
    EXPECT_NEAR(double(r.total_params) / 1e9, total, total * 0.02);
    EXPECT_NEAR(double(r.active_params) / 1e9, active, active * 0.08);
    // The trunk as stored: between 0.45 and 1.2 bytes per parameter that is not a routed
    // expert's (the embedding table, read from disk a row at a time, left out).
    const double perParam = double(r.vq.plan.trunk_bytes) / double(trunkParams - V * H);
    EXPECT_GT(perParam, 0.45);
    EXPECT_LT(perParam, 1.2);
    // A 16 times longer context grows every layer's KV: 8 KiB per layer per position.
    const waste::ReleasePlan longer = planOn(file, ram, 65536);
    EXPECT_EQ(longer.vq.plan.state_bytes - r.vq.plan.state_bytes, L * (65536 - 4096) * int64_t(8192));
    std::printf("[plan] %-22s floor %.2f GiB, default %.2f GiB on 128 GiB (VQ3R record %lld B), %.1fB total, %.1fB "
                "active, trunk %.3f B/param\n",
                file.c_str(), double(r.vq.plan.floor_bytes) / double(1 << 30),
                double(r.vq.plan.recommended_bytes) / double(1 << 30), static_cast<long long>(rec),
                double(r.total_params) / 1e9, double(r.active_params) / 1e9, perParam);
}

} // namespace

// Published: 355B total / 32B active, 106B / 12B (both counting the MTP layer, which the
// plan leaves out: about 4B on GLM-4.5, 1.5B on Air). GLM-4.6 and 4.7 have 4.5's geometry.
TEST(GqaReleasePlan, Glm45) { checkGlm4Moe("glm-4.5.json", {5120, 92, 3, 12288, 1536, 160, true}, 355.0, 32.0); }
TEST(GqaReleasePlan, Glm47) { checkGlm4Moe("glm-4.7.json", {5120, 92, 3, 12288, 1536, 160, true}, 355.0, 32.0); }
TEST(GqaReleasePlan, Glm45Air) { checkGlm4Moe("glm-4.5-air.json", {4096, 46, 1, 10944, 1408, 128, false}, 106.0, 12.0); }

// Published: 80B total / 3B active (the 3B leaves out the embedding table and the head).
TEST(GqaReleasePlan, Qwen3Next_80B_A3B) { checkQwen3Next("qwen3-next-80b-a3b.json"); }

// Published: 397B total / 17B active, 122B / 10B (the text model: 396.3B and 122.1B here,
// the vision tower and the MTP block left out; active counts leave out the embedding table).
TEST(GqaReleasePlan, Qwen35_397B_A17B) { checkQwen35Moe("qwen3.5-397b-a17b.json", {4096, 60, 512, 10}, 397.0, 17.0); }
TEST(GqaReleasePlan, Qwen35_122B_A10B) { checkQwen35Moe("qwen3.5-122b-a10b.json", {3072, 48, 256, 8}, 122.0, 10.0); }

// Published: 30.5B total / 3.3B active; 235B / 22B.
TEST(GqaReleasePlan, Qwen3_30B_A3B) { checkQwen3("qwen3-30b-a3b.json", 2048, 48, 32, 768, 30.5, 3.3); }
TEST(GqaReleasePlan, Qwen3_235B_A22B) { checkQwen3("qwen3-235b-a22b.json", 4096, 94, 64, 1536, 235.0, 22.0); }
// Published: 21B total / 3.6B active; 117B / 5.1B.
TEST(GqaReleasePlan, GptOss20b) { checkGptOss("gpt-oss-20b.json", 24, 32, 20.9, 3.6); }
TEST(GqaReleasePlan, GptOss120b) { checkGptOss("gpt-oss-120b.json", 36, 128, 116.8, 5.1); }
