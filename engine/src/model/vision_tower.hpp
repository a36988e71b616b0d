// The vision tower (ViT with 2D rotary attention), the 2x2 merge and the projector into the
// language model's hidden size (k3-vision-math §6-§7). All arithmetic f32.
#pragma once

#include <vector>

#include "image/image_preprocess.hpp"
#include "model/vision_weights.hpp"

namespace waste::vision {

// Intermediate states for checking a stage at a time; each [patches][D].
struct TowerTrace {
    std::vector<float> embed;                // after patch + position embedding
    std::vector<std::vector<float>> blocks;  // after each encoder block
    std::vector<float> encoder;              // after the final norm
};

struct ImageRows {
    image::PatchGrid grid;
    int positions = 0;       // N = (gh/2)*(gw/2)
    std::vector<float> rows; // [N][T]: the prompt rows, merged-grid row-major
};

// Runs the tower on one image's patches. `threads` <= 0: one per hardware thread.
ImageRows encodeImage(const VisionWeights &w, const image::PatchTensor &patches, TowerTrace *trace = nullptr,
                      int threads = 0);

// Bytes of working memory encodeImage needs for `patches` patches (activations and buffers).
int64_t towerWorkingBytes(const VisionConfig &cfg, int patches);

} // namespace waste::vision
