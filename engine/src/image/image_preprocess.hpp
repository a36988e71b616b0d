// From decoded RGB to the tower's input: the patch grid, the bilinear resample, the per-channel
// normalisation and the channel-major patch layout (k3-vision-math §3-§5).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "image/image_decode.hpp"

namespace waste::image {

inline constexpr int kPatchSize = 14;
inline constexpr int kPatchValues = 3 * kPatchSize * kPatchSize; // 588

struct PatchGrid {
    int gh = 0; // patch rows (even)
    int gw = 0; // patch columns (even)
    int patches() const { return gh * gw; }
    int positions() const { return (gh / 2) * (gw / 2); } // after the 2x2 merge
};

// The grid for a Ws x Hs source under a budget of `maxPatches` (>= 4) patches: fit the budget
// keeping the aspect ratio roughly, never enlarge on purpose, both counts even.
PatchGrid chooseGrid(int srcWidth, int srcHeight, int maxPatches);

struct PatchTensor {
    PatchGrid grid;
    std::vector<float> values; // [patches][588]; patch i = py*gw + px, value c*196 + row*14 + col
};

// Resamples to 14*gw x 14*gh (half-pixel bilinear, no antialiasing, f32 in the reference
// engine's operation order so the result is bit-identical) and normalises (v/255 - mean)/std.
PatchTensor makePatches(const RgbImage &img, int maxPatches, const std::array<float, 3> &mean,
                        const std::array<float, 3> &stdev);

} // namespace waste::image
