#include "plan/checkpoint.hpp"

#include <algorithm>

namespace waste::plan {

int64_t checkpointBytes(const PlanInputs &in)
{
    const int64_t channels = in.kdaHeads * in.kdaDim;
    const int64_t perLayer = channels * in.kdaDim + 3 * std::max<int64_t>(in.convKernel - 1, 0) * channels;
    return (in.kdaLayers * perLayer + in.vocab) * 4;
}

} // namespace waste::plan
