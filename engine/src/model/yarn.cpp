#include "model/yarn.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace waste::model {

double yarnMscale(double scale, double k) { return scale <= 1.0 ? 1.0 : 0.1 * k * std::log(scale) + 1.0; }

namespace {

// The dim index at which a wavelength fits `rotations` turns into the original context.
double correctionDim(double rotations, int dims, double base, double originalMax)
{
    return dims * std::log(originalMax / (rotations * 2.0 * std::numbers::pi)) / (2.0 * std::log(base));
}

} // namespace

Rope::Rope(const format::RopeParams &p, int dims, int qkHeadDim)
{
    if (!p.enabled || dims <= 0) {
        // MLA without rotation (Kimi-Linear, K3): the scale it has always used, in f32.
        m_scoreScale = 1.0f / std::sqrt(static_cast<float>(qkHeadDim));
        return;
    }
    double scoreScale = 1.0 / std::sqrt(static_cast<double>(qkHeadDim));
    const int half = dims / 2;
    m_invFreq.resize(static_cast<size_t>(half));
    for (int i = 0; i < half; ++i)
        m_invFreq[static_cast<size_t>(i)] = 1.0 / std::pow(p.theta, (2.0 * i) / dims);
    if (p.yarn) {
        // High-frequency pairs (below lo) keep their frequency, low ones (above hi) are
        // divided by the factor, and a linear ramp blends the pairs between.
        const double lo = std::max(std::floor(correctionDim(p.betaFast, dims, p.theta, p.originalMax)), 0.0);
        double hi = std::min(std::ceil(correctionDim(p.betaSlow, dims, p.theta, p.originalMax)), double(dims - 1));
        if (hi == lo)
            hi += 0.001;
        for (int i = 0; i < half; ++i) {
            const double ramp = std::clamp((i - lo) / (hi - lo), 0.0, 1.0);
            double &f = m_invFreq[static_cast<size_t>(i)];
            f = (f / p.factor) * ramp + f * (1.0 - ramp);
        }
        m_cosSinScale = yarnMscale(p.factor, p.mscale) / yarnMscale(p.factor, p.mscaleAllDim);
        if (p.mscaleAllDim != 0.0) {
            const double m = yarnMscale(p.factor, p.mscaleAllDim);
            scoreScale *= m * m;
        }
    }
    m_scoreScale = static_cast<float>(scoreScale);
}

void Rope::rotate(float *x, int pos) const
{
    for (size_t i = 0; i < m_invFreq.size(); ++i) {
        // The angle in double: positions up to the context length keep their phase exact
        // to f32, and every caller (prefill chunk or single step) gets the same bits.
        const double a = static_cast<double>(pos) * m_invFreq[i];
        const float c = static_cast<float>(std::cos(a) * m_cosSinScale);
        const float s = static_cast<float>(std::sin(a) * m_cosSinScale);
        const float x0 = x[2 * i], x1 = x[2 * i + 1];
        x[2 * i] = x0 * c - x1 * s;
        x[2 * i + 1] = x1 * c + x0 * s;
    }
}

} // namespace waste::model
