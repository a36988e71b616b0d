// Which of MLA's two forms a prompt's pass attends in (model/mla.cpp), and what each costs.
//
// Absorbed (decode, and short passes): each query goes through its head's kv_b_proj rows into
// the latent space; its scores are against the cached latent (dc + dr wide) and its values
// are summed there (dc wide), then brought up through the other kv_b_proj rows. Per head:
// 2 dc (dn + dv) FLOPs a query for kv_b, and 2 (dc + dr) + 2 dc a (query, key) pair.
// Expanded (long passes): every cached position's keys (dn, with the shared dr rotated dims)
// and values (dv) go up through kv_b_proj once a pass, and the queries attend as plain
// multi-head attention. Per head: 2 dc (dn + dv) FLOPs a position up to the pass's last, and
// 2 (dn + dr) + 2 dv a pair: at DeepSeek-V3's and Kimi's sizes 640 against 2,176.
//
// The two round differently (within 1e-5 relative on the test models), so a prompt's logits
// are the same bits however it is cut into passes as long as the passes take the same form.
// Only long passes expand, and only where the budget holds the rows (Forward::MlaForm): a long
// prompt read whole and the same prompt read in short passes, batched with others or after a
// cached prefix can differ in the last bits.
#pragma once

#include <cstdint>

namespace waste::model {

struct MlaDims {
    double nope = 0, rope = 0, v = 0, lora = 0; // qk_nope_head_dim, qk_rope_head_dim, v_head_dim, kv_lora_rank
};

// FLOPs per head of a pass of n queries at positions first..first + n - 1.
inline double mlaPairs(double first, double n) { return n * first + n * (n + 1) / 2; }
inline double mlaAbsorbedFlops(const MlaDims &d, double first, double n)
{
    return 2 * d.lora * (d.nope + d.v) * n + mlaPairs(first, n) * (2 * (d.lora + d.rope) + 2 * d.lora);
}
inline double mlaExpandedFlops(const MlaDims &d, double first, double n)
{
    return 2 * d.lora * (d.nope + d.v) * (first + n) + mlaPairs(first, n) * (2 * (d.nope + d.rope) + 2 * d.v);
}
// The expanded form's rows: every position's keys (dn + dr) and values (dv) for every head, in
// f32, held for a pass (the engine lends the room; the forecast asks whether the budget has it).
inline int64_t mlaExpandedRowBytes(int64_t positions, int64_t heads, int64_t nope, int64_t rope, int64_t v)
{
    return positions * heads * (nope + rope + v) * int64_t(sizeof(float));
}

// Passes shorter than this stay absorbed, however the FLOPs fall: a chat's turns, a batch's
// sequences and a prompt read after a cached prefix then take the form the same prompt read
// whole would (their logits the same bits); it is long prompts that attention slows down.
inline constexpr double kMlaExpandFrom = 1024;
// The expanded form for a pass of kMlaExpandFrom tokens or more where it saves a fifth of the
// FLOPs or more: its keys and values are read from memory a head at a time, where the
// absorbed form's latent serves every head.
inline bool mlaExpandedPays(const MlaDims &d, double first, double n)
{
    return n >= kMlaExpandFrom && mlaExpandedFlops(d, first, n) < 0.8 * mlaAbsorbedFlops(d, first, n);
}

} // namespace waste::model
