#include "model/vision_memory.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "image/image_decode.hpp"
#include "image/image_preprocess.hpp"
#include "model/vision_config.hpp"
#include "model/vision_placement.hpp"
#include "waste/waste.hpp"

namespace waste::vision {

VisionMemory visionMemory(const std::string &containerDir)
{
    namespace fs = std::filesystem;
    const fs::path path = fs::path(containerDir) / "manifest.json";
    std::ifstream in(path);
    if (!in) throw Error(ErrorCode::Io, path.string() + ": cannot open the container manifest");
    nlohmann::json m;
    try {
        m = nlohmann::json::parse(in);
    } catch (const std::exception &e) {
        throw Error(ErrorCode::Format, path.string() + ": not valid JSON (" + e.what() + ")");
    }
    VisionMemory out;
    // Only the manifest's own prefix string counts (a nested config's default is not applied).
    const std::string prefix = m.contains("tensor_prefix") && m["tensor_prefix"].is_string()
                                   ? m["tensor_prefix"].get<std::string>()
                                   : std::string();
    if (prefix.empty() || !m.contains("trunk") || !m["trunk"].is_array()) return out;
    for (const auto &e : m["trunk"]) {
        if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) continue;
        if (e["name"].get<std::string>().rfind(prefix, 0) == 0) continue;
        if (e.contains("bytes") && e["bytes"].is_number()) {
            const double b = e["bytes"].get<double>();
            if (std::isfinite(b) && b > 0 && b < 9.0e15) out.weightBytes += int64_t(b);
        }
    }
    if (out.weightBytes <= 0) return out;

    VisionConfig c;
    readVisionConfig(containerDir, c); // absent: the defaults
    int64_t T = c.textHidden;
    if (T == 0 && m.contains("config") && m["config"].is_object() && m["config"].contains("hidden_size") &&
        m["config"]["hidden_size"].is_number())
        T = int64_t(m["config"]["hidden_size"].get<double>());
    const bool inRange = T > 0 && c.hidden >= 1 && c.hidden <= (1 << 20) && c.qkv >= 1 && c.qkv <= (1 << 20) &&
                         c.intermediate >= 1 && c.intermediate <= (1 << 22) && c.posHeight >= 1 &&
                         c.posHeight <= (1 << 16) && c.posWidth >= 1 && c.posWidth <= (1 << 16) &&
                         c.maxPatches >= 4 && c.maxPatches <= (1 << 20);
    if (!inRange) return out;
    const int64_t Lp = c.maxPatches, D = c.hidden, Q = c.qkv, I = c.intermediate;
    const int64_t queue = int64_t(kMaxImagesPerPrompt) * ((Lp + 3) / 4) * T * 4;
    const int64_t pixels = Lp * image::kPatchValues * 4;
    const int64_t tower =
        4 * (3 * Lp * D + 3 * Lp * Q + Lp * Q + Lp * I + Lp + int64_t(c.posHeight) * c.posWidth * D + 2 * Lp * D);
    const int64_t decode = image::kDefaultMaxPixels * 3;
    out.workingBytes = 2 * queue + pixels + tower + decode;
    return out;
}

} // namespace waste::vision
