// The benches' mid-size containers: Kimi-Linear-shaped containers made by the converter's
// tiny-model tool (`waste mktiny --container --size SIZE`) into CACHE/mid-SIZE, made once
// and reused when its manifest exists (the converter writes manifest.json last), resumed
// per layer when an earlier run was interrupted.
// The native variants (`mktiny --container --experts-layout bf16|mxfp4 --experts native
// --size SIZE`, into CACHE/mid-native-LAYOUT-SIZE) keep the experts in the release's own
// encoding: more bytes per expert than VQ3R (BF16 5.3x, MXFP4 1.4x) for a fraction of its
// compute, so a decode at a small budget waits on the disk rather than on the tables.
#pragma once

#include "waste/convert.hpp"
#include "waste/waste.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

// nativeLayout: empty for VQ3R experts, else "bf16" or "mxfp4" (kept native).
inline std::string midContainer(const std::string &cacheDir, const std::string &sizeText,
                                const std::string &nativeLayout = {})
{
    const bool native = !nativeLayout.empty();
    if (native && nativeLayout != "bf16" && nativeLayout != "mxfp4")
        throw waste::Error(waste::ErrorCode::Argument, "native layout must be bf16 or mxfp4, not '" + nativeLayout + "'");
    const std::string dir = cacheDir + (native ? "/mid-native-" + nativeLayout + "-" : "/mid-") + sizeText;
    if (std::filesystem::exists(dir + "/manifest.json"))
        return dir;
    std::filesystem::create_directories(cacheDir);
    waste::TinyModelOptions t;
    t.targetBytes = waste::parseSize(sizeText);
    t.jobs = 0;
    if (native) {
        t.experts = nativeLayout == "bf16" ? waste::TinyExperts::BF16 : waste::TinyExperts::MXFP4;
        t.expertEncoding = waste::ExpertEncoding::Native;
    }
    std::fprintf(stderr, "making the mid-size container %s once (waste mktiny --container --size %s%s)...\n", dir.c_str(),
                 sizeText.c_str(), native ? (" --experts-layout " + nativeLayout + " --experts native").c_str() : "");
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
