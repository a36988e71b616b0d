// The image path of one open model: loads the tower on the first image (never before), turns
// files into prompt rows, and holds them until the forward pass places them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "image/image_decode.hpp"
#include "model/vision_config.hpp"
#include "model/vision_placement.hpp"
#include "model/vision_weights.hpp"

namespace waste::vision {

struct AddedImage {
    std::string path;
    int width = 0;     // as decoded (after EXIF orientation); written into the media block
    int height = 0;
    int positions = 0; // prompt positions the image takes
};

class VisionRuntime {
public:
    // Reads vision.json and checks it against the text model. A container without vision.json
    // or without the patch-embedding tensor has no tower (available() is false).
    VisionRuntime(const std::string &containerDir, int textHidden, int vocabSize, int threads = 0);
    // The same over tensors the caller already indexed (an open model's manifest and trunk).
    explicit VisionRuntime(std::unique_ptr<TensorSource> source, int threads = 0);

    bool available() const { return m_available; }
    const VisionConfig &config() const { return m_cfg; }

    // Decodes, preprocesses and encodes `path` now; returns its number of prompt positions.
    int addImage(const std::string &path);
    void clearImages();

    // The images added since the last clear, in order.
    const std::vector<AddedImage> &images() const { return m_images; }
    // Their media blocks, concatenated (markup text, to be tokenized in markup mode).
    std::string markup() const;
    // Expands the media tokens of `tokens` for the images added (see expandMediaTokens).
    std::vector<int32_t> expand(std::span<const int32_t> tokens) const;

    MediaRowQueue &rows() { return m_rows; }
    int64_t residentBytes() const { return m_weights ? m_weights->residentBytes() : 0; }
    bool loaded() const { return m_weights != nullptr; }
    image::DecodeOptions &decodeOptions() { return m_decode; }

private:
    void init(int textHidden, int vocabSize);

    std::string m_dir;
    bool m_available = false;
    VisionConfig m_cfg;
    int m_threads = 0;
    std::unique_ptr<TensorSource> m_source;
    std::unique_ptr<VisionWeights> m_weights;
    std::vector<AddedImage> m_images;
    MediaRowQueue m_rows;
    image::DecodeOptions m_decode;
};

} // namespace waste::vision
