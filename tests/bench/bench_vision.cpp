// Vision tower time for one 896x896 image: preprocessing plus tower and projector, with the
// tiny tower of tests/fixtures/vision-container (D 32, 2 layers) at the K3 patch budget of
// 1024 patches (32x32 grid -> 256 positions). Last line: the median tower time.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "image/image_preprocess.hpp"
#include "model/vision_config.hpp"
#include "model/vision_tower.hpp"
#include "model/vision_weights.hpp"

using namespace waste;

int main(int argc, char **argv)
{
    const std::string dir = argc > 1 ? argv[1] : std::string(WASTE_FIXTURES_DIR) + "/vision-container/v1.waste";
    const int threads = argc > 2 ? std::atoi(argv[2]) : int(std::max(1u, std::thread::hardware_concurrency()));
    auto src = vision::openContainerTensors(dir);
    vision::VisionConfig cfg;
    vision::readVisionConfig(dir, cfg);
    vision::validateVisionConfig(cfg, src->textHidden(), src->vocabSize(), dir);
    cfg.maxPatches = 1024; // K3's budget, whatever the container says
    const auto w = vision::loadVisionWeights(*src, cfg);

    image::RgbImage img;
    img.width = img.height = 896;
    img.rgb.resize(size_t(896) * 896 * 3);
    for (size_t i = 0; i < img.rgb.size(); ++i) img.rgb[i] = uint8_t((i * 2654435761u) >> 24);

    using clock = std::chrono::steady_clock;
    std::vector<double> pre, tower;
    int positions = 0;
    for (int rep = 0; rep < 7; ++rep) {
        const auto t0 = clock::now();
        const auto p = image::makePatches(img, cfg.maxPatches, cfg.mean, cfg.stdev);
        const auto t1 = clock::now();
        const auto rows = vision::encodeImage(*w, p, nullptr, threads);
        const auto t2 = clock::now();
        positions = rows.positions;
        pre.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        tower.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    }
    std::sort(pre.begin(), pre.end());
    std::sort(tower.begin(), tower.end());
    std::printf("tower D=%d layers=%d heads=%d, 896x896 -> 1024 patches -> %d positions, %d threads\n", cfg.hidden,
                cfg.layers, cfg.heads, positions, threads);
    std::printf("preprocess median %.2f ms\n", pre[pre.size() / 2]);
    std::printf("vision tower 896x896 (tiny): median %.2f ms\n", tower[tower.size() / 2]);
    return 0;
}
