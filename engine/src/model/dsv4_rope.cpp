#include "model/dsv4_rope.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace waste::model {

Dsv4Rope::Dsv4Rope(const format::Dsv4Config &v, bool compressed)
{
    const int dim = v.ropeDim;
    const double base = compressed ? v.compressTheta : v.ropeTheta;
    m_freq.resize(size_t(dim / 2));
    for (int i = 0; i < dim / 2; ++i)
        m_freq[size_t(i)] = 1.0 / std::pow(base, double(2 * i) / double(dim));
    if (!compressed || v.yarnOrig <= 0.0) // model.py: original_seq_len 0 disables YaRN
        return;
    // precompute_freqs_cis: the dims that turn beta_fast .. beta_slow times over the original
    // context get a linear ramp between the scaled and the original frequency.
    const auto corr = [&](double rotations) {
        return dim * std::log(v.yarnOrig / (rotations * 2.0 * std::numbers::pi)) / (2.0 * std::log(base));
    };
    const double lo = std::max(std::floor(corr(v.betaFast)), 0.0);
    double hi = std::min(std::ceil(corr(v.betaSlow)), double(dim - 1));
    if (lo == hi)
        hi += 0.001;
    for (int i = 0; i < dim / 2; ++i) {
        const double ramp = std::clamp((double(i) - lo) / (hi - lo), 0.0, 1.0);
        const double smooth = 1.0 - ramp;
        double &f = m_freq[size_t(i)];
        f = f / v.yarnFactor * (1.0 - smooth) + f * smooth;
    }
}

void Dsv4Rope::apply(float *x, int64_t pos, bool inverse) const
{
    for (size_t i = 0; i < m_freq.size(); ++i) {
        const double a = double(pos) * m_freq[i];
        const float c = float(std::cos(a)), s = inverse ? -float(std::sin(a)) : float(std::sin(a));
        const float x0 = x[2 * i], x1 = x[2 * i + 1];
        x[2 * i] = x0 * c - x1 * s;
        x[2 * i + 1] = x0 * s + x1 * c;
    }
}

} // namespace waste::model
