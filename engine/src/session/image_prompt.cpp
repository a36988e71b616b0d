// The one way every front end (CLI eval/run, chat, API server, GUI) builds a prompt with
// images: add the images in order, then the media blocks (markup) before the words. A front
// end that renders a conversation with a template names each image by its media block,
// read from the file's header (imageMediaBlock), the same block the encoded image gets.
#include "waste/waste.hpp"

#include "image/image_probe.hpp"
#include "model/vision_placement.hpp"

namespace waste {

std::vector<int32_t> promptWithImages(Model &model, const std::vector<std::string> &images, std::string_view text,
                                      bool textMarkup)
{
    model.clearImages();
    try {
        for (const std::string &path : images) model.addImage(path);
        std::vector<int32_t> ids = model.tokenize(model.pendingImageMarkup(), true);
        const std::vector<int32_t> words = model.tokenize(text, textMarkup);
        ids.insert(ids.end(), words.begin(), words.end());
        return ids;
    } catch (...) {
        model.clearImages(); // nothing half-added survives a refused image
        throw;
    }
}

std::string imageMediaBlock(const std::string &imagePath)
{
    const image::ImageHeader h = image::probeImageFile(imagePath);
    return vision::mediaBlockText(h.width, h.height);
}

} // namespace waste
