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

std::vector<double> ropeInverseFrequencies(double theta, int dims, double factor, double betaFast, double betaSlow,
                                           double originalMax, bool truncate)
{
    const int half = dims / 2;
    std::vector<double> invFreq(static_cast<size_t>(half));
    for (int i = 0; i < half; ++i)
        invFreq[static_cast<size_t>(i)] = 1.0 / std::pow(theta, (2.0 * i) / dims);
    if (factor <= 1.0)
        return invFreq;
    double lo = correctionDim(betaFast, dims, theta, originalMax);
    double hi = correctionDim(betaSlow, dims, theta, originalMax);
    if (truncate) {
        lo = std::floor(lo);
        hi = std::ceil(hi);
    }
    lo = std::max(lo, 0.0);
    hi = std::min(hi, double(dims - 1));
    if (hi == lo)
        hi += 0.001;
    for (int i = 0; i < half; ++i) {
        const double ramp = std::clamp((i - lo) / (hi - lo), 0.0, 1.0);
        double &f = invFreq[static_cast<size_t>(i)];
        f = (f / factor) * ramp + f * (1.0 - ramp);
    }
    return invFreq;
}

Rope::Rope(const format::RopeParams &p, int dims, int qkHeadDim)
{
    if (!p.enabled || dims <= 0) {
        // MLA without rotation (Kimi-Linear, K3): the scale it has always used, in f32.
        m_scoreScale = 1.0f / std::sqrt(static_cast<float>(qkHeadDim));
        return;
    }
    double scoreScale = 1.0 / std::sqrt(static_cast<double>(qkHeadDim));
    m_invFreq = ropeInverseFrequencies(p.theta, dims, p.yarn ? p.factor : 1.0, p.betaFast, p.betaSlow, p.originalMax,
                                       true);
    if (p.yarn) {
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
