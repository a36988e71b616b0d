#include "model/attn_res.hpp"

#include <algorithm>
#include <cmath>

namespace waste::model {

void attnResMix(const std::vector<std::vector<float>> &R, const float *c, const float *wn, const float *wp, float *out,
                int64_t Hd, float eps)
{
    const size_t n = R.size();
    std::vector<float> s(n + 1);
    for (size_t i = 0; i <= n; ++i) {
        const float *v = i < n ? R[i].data() : c;
        float ss = 0.0f;
        for (int64_t j = 0; j < Hd; ++j)
            ss += v[j] * v[j];
        const float rho = 1.0f / std::sqrt(ss / static_cast<float>(Hd) + eps);
        float d = 0.0f;
        for (int64_t j = 0; j < Hd; ++j)
            d += v[j] * rho * wn[j] * wp[j];
        s[i] = d;
    }
    const float mx = *std::max_element(s.begin(), s.end());
    float sum = 0.0f;
    for (float &v : s) {
        v = std::exp(v - mx);
        sum += v;
    }
    // Accumulated apart from c and copied at the end, so out may alias c (a memset
    // before reading an aliased input once turned " Paris" into "________").
    const float an = s[n] / sum;
    std::vector<float> acc(static_cast<size_t>(Hd));
    for (int64_t j = 0; j < Hd; ++j)
        acc[j] = an * c[j];
    for (size_t i = 0; i < n; ++i) {
        const float ai = s[i] / sum;
        for (int64_t j = 0; j < Hd; ++j)
            acc[j] += ai * R[i][j];
    }
    std::copy(acc.begin(), acc.end(), out);
}

} // namespace waste::model
