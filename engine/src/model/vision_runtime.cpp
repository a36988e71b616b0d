#include "model/vision_runtime.hpp"

#include "image/image_preprocess.hpp"
#include "model/vision_tower.hpp"
#include "waste/waste.hpp"

namespace waste::vision {

VisionRuntime::VisionRuntime(const std::string &containerDir, int textHidden, int vocabSize, int threads)
    : m_dir(containerDir), m_threads(threads)
{
    if (!readVisionConfig(containerDir, m_cfg)) return;
    m_source = openContainerTensors(containerDir);
    init(textHidden, vocabSize);
}

VisionRuntime::VisionRuntime(std::unique_ptr<TensorSource> source, int threads)
    : m_dir(source->containerDir()), m_threads(threads), m_source(std::move(source))
{
    if (!readVisionConfig(m_dir, m_cfg)) return;
    init(m_source->textHidden(), m_source->vocabSize());
}

void VisionRuntime::init(int textHidden, int vocabSize)
{
    // No patch embedding: the container carries no usable tower, whatever vision.json says.
    if (!m_source->find("vision_tower.patch_embed.proj.weight")) return;
    validateVisionConfig(m_cfg, textHidden, vocabSize, m_dir);
    m_available = true;
    m_rows.reset(int32_t(m_cfg.mediaTokenId), m_cfg.textHidden);
}

int VisionRuntime::addImage(const std::string &path)
{
    if (!m_available) throw Error(ErrorCode::Unsupported, m_dir + ": this container has no vision tower");
    if (int(m_images.size()) >= kMaxImagesPerPrompt)
        throw Error(ErrorCode::Argument, path + ": at most " + std::to_string(kMaxImagesPerPrompt) +
                                             " images per prompt");
    const image::RgbImage img = image::decodeImageFile(path, m_decode);
    if (!m_weights) m_weights = loadVisionWeights(*m_source, m_cfg); // first image: load the tower
    const image::PatchTensor patches = image::makePatches(img, m_cfg.maxPatches, m_cfg.mean, m_cfg.stdev);
    const ImageRows rows = encodeImage(*m_weights, patches, nullptr, m_threads);
    m_rows.append(rows.rows);
    m_images.push_back(AddedImage{path, img.width, img.height, rows.positions});
    return rows.positions;
}

void VisionRuntime::clearImages()
{
    m_images.clear();
    m_rows.clear();
}

std::string VisionRuntime::markup() const
{
    std::string s;
    for (const auto &im : m_images) s += mediaBlockText(im.width, im.height);
    return s;
}

std::vector<int32_t> VisionRuntime::expand(std::span<const int32_t> tokens) const
{
    std::vector<int> n;
    for (const auto &im : m_images) n.push_back(im.positions);
    return expandMediaTokens(tokens, int32_t(m_cfg.mediaTokenId), n);
}

} // namespace waste::vision
