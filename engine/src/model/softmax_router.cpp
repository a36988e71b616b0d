#include "model/softmax_router.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace waste::model {

namespace {

// The k largest of v (ties to the lower index), in descending order.
void topK(const float *v, int n, int k, int *out)
{
    std::vector<bool> taken(size_t(n), false);
    for (int j = 0; j < k; ++j) {
        int best = -1;
        for (int e = 0; e < n; ++e)
            if (!taken[size_t(e)] && (best < 0 || v[e] > v[best]))
                best = e;
        taken[size_t(best)] = true;
        out[j] = best;
    }
}

} // namespace

void routeSoftmax(const format::ModelConfig &c, float *r, int *chosen, float *weight)
{
    const int E = c.experts, K = c.topK;
    if (c.g.softmaxOverTopK) {
        topK(r, E, K, chosen);
        const float top = r[chosen[0]];
        float sum = 0.0f;
        for (int j = 0; j < K; ++j) {
            weight[j] = std::exp(r[chosen[j]] - top);
            sum += weight[j];
        }
        for (int j = 0; j < K; ++j)
            weight[j] = weight[j] / sum;
        return;
    }
    float top = r[0];
    for (int e = 1; e < E; ++e)
        top = std::max(top, r[e]);
    float sum = 0.0f;
    for (int e = 0; e < E; ++e) {
        r[e] = std::exp(r[e] - top);
        sum += r[e];
    }
    for (int e = 0; e < E; ++e)
        r[e] = r[e] / sum;
    topK(r, E, K, chosen);
    float kept = 0.0f;
    for (int j = 0; j < K; ++j) {
        weight[j] = r[chosen[j]];
        kept += weight[j];
    }
    if (c.renormalize)
        for (int j = 0; j < K; ++j)
            weight[j] = weight[j] / kept;
}

} // namespace waste::model
