#include "plan/checkpoint.hpp"

#include <algorithm>

namespace waste::plan {

int64_t checkpointBytes(const PlanInputs &in, int64_t ctx)
{
    // Linear-attention layers: Qwen3-Next's Gated DeltaNet state and its one conv ring
    // (linearStateBytes), or KDA's S matrices and three conv rings.
    const int64_t channels = in.kdaHeads * in.kdaDim;
    const int64_t perLinear = in.linearStateBytes > 0
                                  ? in.linearStateBytes
                                  : (channels * in.kdaDim + 3 * std::max<int64_t>(in.convKernel - 1, 0) * channels) * 4;
    // Sliding-window layers (gpt-oss): their K/V ring is overwritten as positions go on, so
    // it is copied too; it holds the window, or the whole context when that is shorter.
    const int64_t ring = in.window > 0 ? std::min(ctx, in.window) : 0;
    const int64_t perSliding = ring * 2 * in.kvHeads * in.headDim * 4;
    // DeepSeek V4: the window rings and compressor states (its compressed rows only grow).
    return in.kdaLayers * perLinear + in.gqaSlidingLayers * perSliding + in.v4FixedStateBytes + in.vocab * 4;
}

} // namespace waste::plan
