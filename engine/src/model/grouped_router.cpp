#include "model/grouped_router.hpp"

#include <cmath>
#include <vector>

namespace waste::model {

void keepBestGroups(float *key, int64_t E, int groups, int topkGroups)
{
    if (groups <= 1 || topkGroups >= groups)
        return;
    const int64_t per = E / groups;
    std::vector<float> score(static_cast<size_t>(groups));
    for (int g = 0; g < groups; ++g) {
        float a = -INFINITY, b = -INFINITY; // the two largest keys of the group
        for (int64_t e = g * per; e < (g + 1) * per; ++e) {
            if (key[e] > a) {
                b = a;
                a = key[e];
            } else if (key[e] > b) {
                b = key[e];
            }
        }
        score[static_cast<size_t>(g)] = a + b;
    }
    std::vector<bool> kept(static_cast<size_t>(groups), false);
    for (int j = 0; j < topkGroups; ++j) {
        int best = -1;
        for (int g = 0; g < groups; ++g)
            if (!kept[g] && (best < 0 || score[g] > score[best]))
                best = g;
        kept[best] = true;
    }
    for (int64_t e = 0; e < E; ++e)
        if (!kept[e / per])
            key[e] = -INFINITY;
}

void selectExperts(const float *key, int64_t E, int64_t K, int groups, int topkGroups, int *chosen)
{
    std::vector<float> k(key, key + E);
    keepBestGroups(k.data(), E, groups, topkGroups); // config checks leave >= K experts kept
    std::vector<bool> taken(static_cast<size_t>(E), false);
    for (int64_t j = 0; j < K; ++j) {
        int64_t best = -1;
        for (int64_t e = 0; e < E; ++e)
            if (!taken[e] && (best < 0 || k[e] > k[best]))
                best = e;
        taken[best] = true;
        chosen[j] = static_cast<int>(best);
    }
}

} // namespace waste::model
