#include "model/hyper_connections.hpp"

#include "model/ops.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace waste::model {

void hcSplit(const float *mix, const float *scale, const float *base, int hc, int iters, float eps, float *pre,
             float *post, float *comb)
{
    for (int i = 0; i < hc; ++i) {
        pre[i] = sigmoid(mix[i] * scale[0] + base[i]) + eps;
        post[i] = 2.0f * sigmoid(mix[hc + i] * scale[1] + base[hc + i]);
    }
    // Row i (an old stream) is a softmax over the new streams j, plus eps; then the columns
    // are normalised, and iters − 1 rounds of rows then columns follow (the first softmax
    // counts as the first row pass, as in the kernel and ds4's hc_split_sinkhorn_one).
    float *c = comb;
    for (int i = 0; i < hc; ++i) {
        float *row = c + i * hc;
        float mx = -INFINITY;
        for (int j = 0; j < hc; ++j) {
            row[j] = mix[2 * hc + i * hc + j] * scale[2] + base[2 * hc + i * hc + j];
            mx = std::max(mx, row[j]);
        }
        float sum = 0.0f;
        for (int j = 0; j < hc; ++j) {
            row[j] = std::exp(row[j] - mx);
            sum += row[j];
        }
        for (int j = 0; j < hc; ++j)
            row[j] = row[j] / sum + eps;
    }
    auto columns = [&] {
        for (int j = 0; j < hc; ++j) {
            float sum = 0.0f;
            for (int i = 0; i < hc; ++i)
                sum += c[i * hc + j];
            const float inv = 1.0f / (sum + eps);
            for (int i = 0; i < hc; ++i)
                c[i * hc + j] *= inv;
        }
    };
    auto rows = [&] {
        for (int i = 0; i < hc; ++i) {
            float sum = 0.0f;
            for (int j = 0; j < hc; ++j)
                sum += c[i * hc + j];
            const float inv = 1.0f / (sum + eps);
            for (int j = 0; j < hc; ++j)
                c[i * hc + j] *= inv;
        }
    };
    columns();
    for (int it = 1; it < iters; ++it) {
        rows();
        columns();
    }
}

void hcMerge(const float *X, const float *pre, int hc, int64_t width, float *out)
{
    for (int64_t d = 0; d < width; ++d) {
        float acc = 0.0f;
        for (int i = 0; i < hc; ++i)
            acc += pre[i] * X[i * width + d];
        out[d] = acc;
    }
}

void hcPost(float *X, const float *f, const float *post, const float *comb, int hc, int64_t width)
{
    std::vector<float> old(X, X + hc * width);
    for (int j = 0; j < hc; ++j)
        for (int64_t d = 0; d < width; ++d) {
            float acc = post[j] * f[d];
            for (int i = 0; i < hc; ++i)
                acc += comb[i * hc + j] * old[size_t(i * width + d)];
            X[j * width + d] = acc;
        }
}

void hcHeadWeights(const float *mix, float scale, const float *base, int hc, float eps, float *pre)
{
    for (int i = 0; i < hc; ++i)
        pre[i] = sigmoid(mix[i] * scale + base[i]) + eps;
}

} // namespace waste::model
