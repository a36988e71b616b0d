// Rotary position embedding of the GQA families, in the "rotate half" pairing: element i
// turns with element i + d/2 by pos · invFreq[i]. Plain RoPE has invFreq[i] = θ^(−2i/d);
// YaRN (gpt-oss) blends that with θ^(−2i/d)/factor across a ramp between the dimensions
// that turn beta_fast and beta_slow times over the original context, and scales cos and
// sin by 0.1·ln(factor) + 1. Tables are computed in double, the angle too, then rounded
// once to f32, so the rotation does not depend on how tokens are chunked. Partial RoPE
// (Qwen3-Next): only the first rotaryDim dims of a head turn, paired within them
// (i with i + rotaryDim/2), at θ^(−2i/rotaryDim); the rest pass unchanged.
#pragma once

#include "format/gqa_config.hpp"

#include <vector>

namespace waste::model {

class Rotary {
public:
    Rotary() = default;
    Rotary(const format::GqaConfig &g);

    // cos and sin of pos (headDim/2 each), already scaled: once per token, for all its heads.
    void angles(int pos, float *cosOut, float *sinOut) const;
    // Rotates the head vector x (headDim floats; its first rotaryDim when partial) by the
    // angles of one position, in place.
    void apply(float *x, const float *c, const float *s) const;

    const std::vector<double> &invFreq() const { return m_invFreq; }
    double scale() const { return m_scale; }

private:
    std::vector<double> m_invFreq;
    double m_scale = 1.0;
    int m_dim = 0;
};

} // namespace waste::model
