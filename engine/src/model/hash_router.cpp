#include "model/hash_router.hpp"

#include "model/ops.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace waste::model {

void routeSqrtSoftplus(float *logits, int64_t E, int64_t K, const float *bias, const float *hashRow, float scale,
                       int *chosen, float *weight)
{
    for (int64_t e = 0; e < E; ++e)
        logits[e] = std::sqrt(softplus(logits[e]));
    if (hashRow) {
        for (int64_t j = 0; j < K; ++j)
            chosen[j] = int(hashRow[j]);
    } else {
        std::vector<int> ids(size_t(E), 0);
        std::iota(ids.begin(), ids.end(), 0);
        const auto key = [&](int e) { return logits[e] + (bias ? bias[e] : 0.0f); };
        std::partial_sort(ids.begin(), ids.begin() + K, ids.end(),
                          [&](int x, int y) { return key(x) > key(y) || (key(x) == key(y) && x < y); });
        std::copy(ids.begin(), ids.begin() + K, chosen);
    }
    float sum = 0.0f;
    for (int64_t j = 0; j < K; ++j)
        sum += logits[chosen[j]];
    for (int64_t j = 0; j < K; ++j)
        weight[j] = logits[chosen[j]] / sum * scale;
}

} // namespace waste::model
