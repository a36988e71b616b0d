// DeepSeek V4's rotary embedding: the last `dim` dims of a vector turn in interleaved pairs
// (2i, 2i+1) by pos · f_i (model.py apply_rotary_emb). Window-only layers use plain
// f_i = θ^(−2i/dim); compressed layers their own θ with YaRN's frequency blend and, unlike
// V3's YaRN, no magnitude factor. The angle is computed in double and its cos and sin rounded
// once to f32, so a rotation does not depend on how tokens are chunked.
#pragma once

#include "format/dsv4_config.hpp"

#include <vector>

namespace waste::model {

class Dsv4Rope {
public:
    Dsv4Rope() = default;
    // compressed: the table of compressed layers (compress_rope_theta and YaRN), else plain.
    Dsv4Rope(const format::Dsv4Config &v, bool compressed);

    // Turns x[0 .. dim) by position pos (inverse: by −pos).
    void apply(float *x, int64_t pos, bool inverse = false) const;

private:
    std::vector<double> m_freq;
};

} // namespace waste::model
