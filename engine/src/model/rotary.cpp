#include "model/rotary.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace waste::model {

namespace {

// The dimension index that turns `rotations` times over `ctx` positions.
double correctionDim(double rotations, double dim, double base, double ctx)
{
    return dim * std::log(ctx / (rotations * 2.0 * std::numbers::pi)) / (2.0 * std::log(base));
}

} // namespace

Rotary::Rotary(const format::GqaConfig &g) : m_dim(g.headDim)
{
    const int half = m_dim / 2;
    m_invFreq.resize(size_t(half));
    for (int i = 0; i < half; ++i)
        m_invFreq[size_t(i)] = 1.0 / std::pow(g.ropeTheta, double(2 * i) / double(m_dim));
    if (g.yarnFactor > 1.0) {
        double lo = correctionDim(g.yarnBetaFast, m_dim, g.ropeTheta, g.yarnOrigCtx);
        double hi = correctionDim(g.yarnBetaSlow, m_dim, g.ropeTheta, g.yarnOrigCtx);
        if (g.yarnTruncate) {
            lo = std::floor(lo);
            hi = std::ceil(hi);
        }
        lo = std::max(lo, 0.0);
        hi = std::min(hi, double(m_dim - 1));
        if (lo == hi)
            hi += 0.001;
        for (int i = 0; i < half; ++i) {
            const double ramp = std::clamp((double(i) - lo) / (hi - lo), 0.0, 1.0);
            const double extrapolate = 1.0 - ramp; // share of the original frequency
            const double f = m_invFreq[size_t(i)];
            m_invFreq[size_t(i)] = f / g.yarnFactor * (1.0 - extrapolate) + f * extrapolate;
        }
        m_scale = 0.1 * std::log(g.yarnFactor) + 1.0;
    }
}

void Rotary::angles(int pos, float *c, float *s) const
{
    for (size_t i = 0; i < m_invFreq.size(); ++i) {
        const double a = double(pos) * m_invFreq[i];
        c[i] = float(std::cos(a) * m_scale);
        s[i] = float(std::sin(a) * m_scale);
    }
}

void Rotary::apply(float *x, const float *c, const float *s) const
{
    const int half = m_dim / 2;
    for (int i = 0; i < half; ++i) {
        const float x1 = x[i], x2 = x[i + half];
        x[i] = x1 * c[i] - x2 * s[i];
        x[i + half] = x2 * c[i] + x1 * s[i];
    }
}

} // namespace waste::model
