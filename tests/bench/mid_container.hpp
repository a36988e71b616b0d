// The benches' mid-size container: a Kimi-Linear-shaped container made by the converter's
// tiny-model tool (`waste mktiny --container --size SIZE`) into CACHE/mid-SIZE, made once
// and reused when its manifest exists (the converter writes manifest.json last), resumed
// per layer when an earlier run was interrupted.
#pragma once

#include "waste/convert.hpp"
#include "waste/waste.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

inline std::string midContainer(const std::string &cacheDir, const std::string &sizeText)
{
    const std::string dir = cacheDir + "/mid-" + sizeText;
    if (std::filesystem::exists(dir + "/manifest.json"))
        return dir;
    std::filesystem::create_directories(cacheDir);
    waste::TinyModelOptions t;
    t.targetBytes = waste::parseSize(sizeText);
    t.jobs = 0;
    std::fprintf(stderr, "making the mid-size container %s once (waste mktiny --container --size %s)...\n", dir.c_str(),
                 sizeText.c_str());
    const auto t0 = std::chrono::steady_clock::now();
    int lastUnit = -1;
    waste::makeTinyContainer(dir, t, [&](const waste::ConvertProgress &p) {
        if (p.unit != lastUnit) {
            lastUnit = p.unit;
            std::fprintf(stderr, "  unit %d/%d, %.0f s, eta %.0f s\n", p.unit, p.units, p.elapsedSeconds, p.etaSeconds);
        }
    });
    std::fprintf(stderr, "made in %.0f s\n",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    return dir;
}
