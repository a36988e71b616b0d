// waste::calibrateCompute: the kernels' timings, then the decode scale. The scale decodes a
// generated model (every expert cached) and divides its compute per token by what the kernel
// timings price that same model at. The kernel sum keeps the shape of a model's cost (which
// kernels, how large); the scale carries what a real token adds around them, measured on this
// machine rather than assumed.
//
// The model is the benchmarks' smallest shape (hidden 512, 8 layers, 8 experts: a 25 MB
// container, made in about 3 s on two cores), not the demo's (hidden 256, 4 layers). The
// demo's token is mostly fixed costs around tiny matrices, and its scale did not carry to
// real widths: on an AMD EPYC VM it measured 2.8, where a hidden-512 model measured 1.27, an
// 86 MB one 1.16 and a hidden-1024 one 1.41, so `waste plan` forecast the hidden-1024
// container at 0.57-0.63x the speed `waste bench` measured (docs/benchmarks.md).
#include "plan/compute_estimate.hpp"
#include "plan/pass_calibration.hpp"
#include "plan/plan_inputs.hpp"
#include "quant/kernel_calibration.hpp"

#include <waste/calibration.hpp>
#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <span>

namespace waste {

namespace {

constexpr int kWarmTokens = 16;   // decoded before timing: caches, pool threads, first allocations
constexpr int kSegments = 6;      // timed runs of tokens, the fastest kept
constexpr int kSegmentTokens = 16; // 96 tokens in all: about 0.2 s on a 2-core VM
constexpr int64_t kScaleModelBytes = int64_t(16) << 20; // source bytes asked of the benchmarks' shape

// Seconds per decoded token of the tiny model in `dir`, every expert in the cache: the
// fastest of six runs of 16 tokens (the kernels' timings keep their fastest windows too). One mean over all 96 let a stall of a few tens of
// milliseconds into the scale, and every forecast after it: on a 2-core AMD EPYC VM the
// hidden-512 model's token measured 2.03 to 2.52 ms in six calibrations a minute apart.
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
    std::array<double, kSegments> segments{};
    for (double &s : segments) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kSegmentTokens; ++i)
            step();
        s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kSegmentTokens;
    }
    return *std::min_element(segments.begin(), segments.end());
}

// A generated model of `shape` decoded: its kernels' sum (unscaled) and its measured token.
struct DecodePoint {
    double kernels = 0, measured = 0;
};
DecodePoint decodePoint(const ComputeCalibration &kernels, const TinyModelOptions &shape, int threads)
{
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("waste-calibration-model-" + std::to_string(std::random_device{}()));
    struct Removed {
        fs::path dir;
        ~Removed()
        {
            std::error_code ec;
            fs::remove_all(dir, ec);
        }
    } removed{dir};
    makeTinyContainer(dir.string(), shape);
    ComputeCalibration unscaled = kernels;
    unscaled.decodeScale = 1;
    unscaled.smallKernelSeconds = unscaled.smallTokenSeconds = unscaled.scaleKernelSeconds = 0;
    return {estimateComputePerToken(dir.string(), unscaled).seconds, tinyDecodeSeconds(dir.string(), threads)};
}

TinyModelOptions scaleModelShape()
{
    TinyModelOptions shape;
    shape.targetBytes = kScaleModelBytes; // the least: 8 experts a layer
    return shape;
}

double measureScale(const ComputeCalibration &kernels, int threads, std::string *why, double *scaleKernels)
{
    double scale = 1;
    std::string error;
    try {
        const DecodePoint p = decodePoint(kernels, scaleModelShape(), threads);
        if (p.kernels > 0 && p.measured > 0) {
            scale = std::clamp(p.measured / p.kernels, kMinDecodeScale, kMaxDecodeScale);
            if (scaleKernels)
                *scaleKernels = p.kernels;
        } else {
            error = "the tiny model's decode took no measurable time";
        }
    } catch (const std::exception &e) {
        // No room in the temporary folder, say: the kernels alone still price a token, and
        // the caller is told, since that prices it too fast.
        scale = 1;
        std::error_code ec;
        const std::string tmp = std::filesystem::temp_directory_path(ec).string();
        error = std::string("could not decode a tiny model in the temporary folder (") + (tmp.empty() ? "none" : tmp) +
                "): " + e.what();
    }
    if (why)
        *why = error;
    return scale;
}

} // namespace

double measureDecodeScale(const ComputeCalibration &kernels, int threads, std::string *why)
{
    return measureScale(kernels, threads, why, nullptr);
}

void measureDecode(ComputeCalibration &c, int threads)
{
    double scaleKernels = 0;
    c.decodeScale = measureScale(c, threads, &c.decodeScaleError, &scaleKernels);
    c.smallKernelSeconds = c.smallTokenSeconds = c.scaleKernelSeconds = 0;
    if (!c.decodeScaleError.empty())
        return;
    // The demo's shape too, for the line small models are priced on (ComputeCalibration).
    // Without it the scale alone prices them, a few times too fast.
    try {
        const DecodePoint small = decodePoint(c, TinyModelOptions{}, threads);
        if (small.kernels > 0 && small.measured > 0 && small.kernels < scaleKernels) {
            c.smallKernelSeconds = small.kernels;
            c.smallTokenSeconds = small.measured;
            c.scaleKernelSeconds = scaleKernels;
        }
    } catch (const std::exception &) {
    }
}

ComputeCalibration calibrateCompute(int threads)
{
    const auto start = std::chrono::steady_clock::now();
    ComputeCalibration c = calibrateKernels(threads);
    plan::timePassParts(c, threads);
    measureDecode(c, threads);
    c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return c;
}

double ComputeCalibration::scaleFor(double kernelSeconds) const
{
    if (!(smallKernelSeconds > 0 && smallTokenSeconds > 0 && scaleKernelSeconds > smallKernelSeconds) ||
        kernelSeconds >= scaleKernelSeconds || kernelSeconds <= 0)
        return decodeScale;
    if (kernelSeconds <= smallKernelSeconds)
        return std::clamp(smallTokenSeconds / smallKernelSeconds, kMinDecodeScale, kMaxDecodeScale);
    const double at = (kernelSeconds - smallKernelSeconds) / (scaleKernelSeconds - smallKernelSeconds);
    const double token = smallTokenSeconds + at * (scaleKernelSeconds * decodeScale - smallTokenSeconds);
    return std::clamp(token / kernelSeconds, kMinDecodeScale, kMaxDecodeScale);
}

} // namespace waste
