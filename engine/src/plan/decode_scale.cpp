// waste::calibrateCompute: the kernels' timings, then the decode scale. The scale decodes a
// generated tiny model (the demo's shape, every expert cached) and divides its compute per
// token by what the kernel timings price that same model at. The kernel sum keeps the
// shape of a model's cost (which kernels, how large); the scale carries what a real token
// adds around them, measured on this machine rather than assumed.
#include "plan/compute_estimate.hpp"
#include "plan/plan_inputs.hpp"
#include "quant/kernel_calibration.hpp"

#include <waste/calibration.hpp>
#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <span>

namespace waste {

namespace {

constexpr int kWarmTokens = 16;   // decoded before timing: caches, pool threads, first allocations
constexpr int kTimedTokens = 96;  // about 50 ms on a 2-core laptop

// Seconds per decoded token of the tiny model in `dir`, every expert in the cache.
double tinyDecodeSeconds(const std::string &dir, int threads)
{
    const MemoryPlan plan = planMemory(dir);
    OpenOptions o;
    o.threads = threads;
    o.ramBudget = plan.recommended_bytes + plan.expert_bytes_total; // every record fits
    o.warmFromUsage = false;
    o.usagePath = (std::filesystem::path(dir) / "calibration-usage.waste").string();
    std::unique_ptr<Model> model = Model::open(dir, o);
    std::vector<int32_t> prompt = model->tokenize("The calibration decodes a few tokens of a tiny model.");
    std::vector<float> logits = model->eval(prompt);
    auto step = [&] {
        const int32_t next = topTokens(logits, 1).at(0).id;
        logits = model->eval(std::span<const int32_t>(&next, 1));
    };
    for (int i = 0; i < kWarmTokens; ++i)
        step();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kTimedTokens; ++i)
        step();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kTimedTokens;
}

} // namespace

double measureDecodeScale(const ComputeCalibration &kernels, int threads, std::string *why)
{
    namespace fs = std::filesystem;
    double scale = 1;
    std::string error;
    fs::path dir;
    try {
        dir = fs::temp_directory_path() / ("waste-calibration-model-" + std::to_string(std::random_device{}()));
        makeTinyContainer(dir.string());
        ComputeCalibration unscaled = kernels;
        unscaled.decodeScale = 1;
        const double estimated = estimateComputePerToken(dir.string(), unscaled).seconds;
        const double measured = tinyDecodeSeconds(dir.string(), threads);
        if (estimated > 0 && measured > 0)
            scale = std::clamp(measured / estimated, 1.0, kMaxDecodeScale);
        else
            error = "the tiny model's decode took no measurable time";
    } catch (const std::exception &e) {
        // No room in the temporary folder, say: the kernels alone still price a token, and
        // the caller is told, since that prices it too fast.
        scale = 1;
        error = std::string("could not decode a tiny model in the temporary folder (") +
                (dir.empty() ? std::string("none") : dir.parent_path().string()) + "): " + e.what();
    }
    if (!dir.empty()) {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    if (why)
        *why = error;
    return scale;
}

ComputeCalibration calibrateCompute(int threads)
{
    const auto start = std::chrono::steady_clock::now();
    ComputeCalibration c = calibrateKernels(threads);
    c.decodeScale = measureDecodeScale(c, threads, &c.decodeScaleError);
    c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return c;
}

} // namespace waste
