// Rotary-embedding settings of MLA layers that rotate their qk_rope dims (the
// DeepSeek-V3 family; docs/architectures/deepseek-v3.md): theta and the YaRN scaling keys of
// config.rope_scaling. Kimi-Linear and K3 MLA layers use no rotation (enabled false).
#pragma once

namespace waste::format {

struct RopeParams {
    bool enabled = false;
    double theta = 10000.0;
    bool yarn = false; // rope_scaling.type (or rope_type) "yarn"; otherwise plain RoPE
    double factor = 1.0, betaFast = 32.0, betaSlow = 1.0, mscale = 1.0, mscaleAllDim = 0.0;
    double originalMax = 4096.0;
};

} // namespace waste::format
