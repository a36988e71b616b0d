#include "model/vision_config.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "waste/waste.hpp"

namespace waste::vision {
namespace {

// Integer field: a JSON number truncated toward zero; anything else keeps the default.
template <typename T> void intField(const nlohmann::json &j, const char *key, T &v)
{
    auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return;
    const double d = it->get<double>();
    if (!std::isfinite(d) || std::fabs(d) > 9.0e15) v = T(-1); // fails the range check below
    else v = T(std::trunc(d));
}

void channelField(const nlohmann::json &j, const char *key, std::array<float, 3> &v)
{
    auto it = j.find(key);
    if (it == j.end() || !it->is_array()) return;
    for (size_t c = 0; c < 3; ++c)
        v[c] = c < it->size() && (*it)[c].is_number() ? float((*it)[c].get<double>()) : 0.5f;
}

} // namespace

bool readVisionConfig(const std::string &containerDir, VisionConfig &out)
{
    const std::filesystem::path path = std::filesystem::path(containerDir) / "vision.json";
    std::ifstream in(path);
    if (!in) return false;
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const std::exception &e) {
        throw Error(ErrorCode::Format, path.string() + ": not valid JSON (" + e.what() + ")");
    }
    if (!j.is_object()) throw Error(ErrorCode::Format, path.string() + ": expected a JSON object");
    VisionConfig c;
    intField(j, "vt_hidden_size", c.hidden);
    intField(j, "vt_num_attention_heads", c.heads);
    intField(j, "qkv_hidden_size", c.qkv);
    intField(j, "vt_intermediate_size", c.intermediate);
    intField(j, "vt_num_hidden_layers", c.layers);
    intField(j, "init_pos_emb_height", c.posHeight);
    intField(j, "init_pos_emb_width", c.posWidth);
    intField(j, "text_hidden_size", c.textHidden);
    intField(j, "patch_size", c.patchSize);
    intField(j, "media_placeholder_token_id", c.mediaTokenId);
    intField(j, "max_patches", c.maxPatches);
    channelField(j, "image_mean", c.mean);
    channelField(j, "image_std", c.stdev);
    out = c;
    return true;
}

void validateVisionConfig(VisionConfig &c, int textHidden, int vocabSize, const std::string &containerDir)
{
    auto bad = [&](const std::string &what) {
        throw Error(ErrorCode::Format, containerDir + "/vision.json: geometry is unsupported or out of range (" +
                                           what + ")");
    };
    auto range = [&](int64_t v, int64_t lo, int64_t hi, const char *key) {
        if (v < lo || v > hi) bad(std::string(key) + " = " + std::to_string(v) + ", allowed " + std::to_string(lo) +
                                  " .. " + std::to_string(hi));
    };
    range(c.hidden, 1, 1 << 20, "vt_hidden_size");
    range(c.heads, 1, 1 << 16, "vt_num_attention_heads");
    range(c.qkv, 1, 1 << 20, "qkv_hidden_size");
    range(c.intermediate, 1, 1 << 22, "vt_intermediate_size");
    range(c.layers, 1, 256, "vt_num_hidden_layers");
    range(c.posHeight, 1, 1 << 16, "init_pos_emb_height");
    range(c.posWidth, 1, 1 << 16, "init_pos_emb_width");
    range(c.maxPatches, 4, 1 << 20, "max_patches");
    if (c.qkv % c.heads != 0) bad("qkv_hidden_size must be a multiple of vt_num_attention_heads");
    // The 2D rotary pairs up head elements and splits the pairs between two axes.
    if (c.headDim() % 2 != 0) bad("head dimension must be even");
    if (c.patchSize != 14) bad("patch_size must be 14");
    if (c.textHidden == 0) c.textHidden = textHidden;
    if (c.textHidden != textHidden)
        bad("text_hidden_size " + std::to_string(c.textHidden) + " differs from the text model's hidden size " +
            std::to_string(textHidden));
    if (c.mediaTokenId < 0 || c.mediaTokenId >= vocabSize)
        bad("media_placeholder_token_id must name a token of the vocabulary");
    for (size_t k = 0; k < 3; ++k) {
        if (!std::isfinite(c.mean[k]) || !std::isfinite(c.stdev[k]) || !(c.stdev[k] > 0.0f))
            bad("image_mean / image_std must be finite with every std > 0");
    }
}

} // namespace waste::vision
