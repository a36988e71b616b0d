#include "model/rotary.hpp"

#include "model/yarn.hpp"

#include <cmath>

namespace waste::model {

Rotary::Rotary(const format::GqaConfig &g)
    : m_invFreq(ropeInverseFrequencies(g.ropeTheta, g.rotaryDim > 0 ? g.rotaryDim : g.headDim, g.yarnFactor,
                                       g.yarnBetaFast, g.yarnBetaSlow, g.yarnOrigCtx, g.yarnTruncate)),
      m_dim(g.rotaryDim > 0 ? g.rotaryDim : g.headDim)
{
    if (g.yarnFactor > 1.0)
        m_scale = yarnMscale(g.yarnFactor, 1.0);
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
