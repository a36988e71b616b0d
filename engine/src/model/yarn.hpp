// RoPE with YaRN scaling for the rotated dims of DeepSeek-V3's MLA
// (docs/architectures/deepseek-v3.md): the per-pair inverse frequencies, the cos/sin scale
// and the attention-score scale. Built once per model from the config; rotating is then a
// pure function of the position.
#pragma once

#include "format/rope_params.hpp"

#include <cstdint>
#include <vector>

namespace waste::model {

// YaRN's attention-temperature factor m(scale, k): 1 for scale <= 1, else 0.1 k ln(scale) + 1.
double yarnMscale(double scale, double k);

// RoPE's per-pair inverse frequencies θ^(−2i/dims), i < dims/2, with YaRN's blend when
// factor > 1: pairs turning more than betaFast times over originalMax positions keep their
// frequency, those under betaSlow are divided by the factor, a linear ramp between (its ends
// rounded outwards when `truncate`, as the releases' code does by default). Shared by MLA's
// Rope below and the GQA families' Rotary (rotary.hpp).
std::vector<double> ropeInverseFrequencies(double theta, int dims, double factor, double betaFast, double betaSlow,
                                           double originalMax, bool truncate);

class Rope {
public:
    Rope() = default;
    // dims: qk_rope_head_dim (even); qkHeadDim: qk_nope + qk_rope (for the score scale).
    Rope(const format::RopeParams &p, int dims, int qkHeadDim);

    bool enabled() const { return !m_invFreq.empty(); }
    // Rotates the pairs (x[2i], x[2i+1]) by pos * invFreq[i] and applies the cos/sin scale.
    void rotate(float *x, int pos) const;
    // Multiplies 1/sqrt(qk head dim): the softmax scale of the scores.
    float scoreScale() const { return m_scoreScale; }
    const std::vector<double> &invFreq() const { return m_invFreq; }
    double cosSinScale() const { return m_cosSinScale; }

private:
    std::vector<double> m_invFreq; // dims/2 entries
    double m_cosSinScale = 1.0;
    float m_scoreScale = 1.0f;
};

} // namespace waste::model
