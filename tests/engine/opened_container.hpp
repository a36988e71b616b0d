// A container's engine pieces opened the way a session opens them (manifest, trunk, codebooks
// where the experts are VQ, expert banks, weights, Forward), so the component tests can call
// Forward's layers directly against their float64 references; and the measures and inputs
// those tests share.
#pragma once

#include "compute/thread_pool.hpp"
#include "format/codebooks.hpp"
#include "format/expert_banks.hpp"
#include "format/manifest.hpp"
#include "format/trunk.hpp"
#include "model/expert_source.hpp"
#include "model/forward.hpp"
#include "model/weights.hpp"

#include "test_files.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace enginetest {

struct OpenedContainer {
    std::string dir;
    waste::format::Manifest manifest;
    std::unique_ptr<waste::format::Trunk> trunk;
    waste::format::Codebooks books; // none where the experts are native records
    waste::model::Weights weights;
    std::unique_ptr<waste::model::PreadExpertSource> experts;
    std::unique_ptr<waste::compute::ThreadPool> pool; // none: Forward runs on the calling thread
    std::unique_ptr<waste::model::Forward> forward;

    // threads > 0: Forward gets a pool of that many threads.
    explicit OpenedContainer(const std::string &d, int threads = 0) : dir(d)
    {
        using namespace waste::format;
        manifest = parseManifest(slurp(dir + "/manifest.json"), dir + "/manifest.json");
        trunk = std::make_unique<Trunk>(dir + "/trunk.bin", manifest);
        if (!manifest.quant.isNative())
            books = Codebooks(dir + "/codebooks.bin", manifest.quant);
        auto banks = openExpertBanks(dir, manifest, books, dir + "/manifest.json");
        weights = waste::model::loadWeights(manifest, *trunk);
        experts = std::make_unique<waste::model::PreadExpertSource>(std::move(banks), true);
        if (threads > 0)
            pool = std::make_unique<waste::compute::ThreadPool>(threads);
        forward = std::make_unique<waste::model::Forward>(manifest, weights, books, pool.get());
    }
};

// max |got − want| / max |want|.
inline double relErr(const float *got, const std::vector<double> &want)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        num = std::max(num, std::fabs(double(got[i]) - want[i]));
        den = std::max(den, std::fabs(want[i]));
    }
    return num / den;
}
inline double relErr(const std::vector<float> &got, const std::vector<double> &want)
{
    return relErr(got.data(), want);
}

// Unit-RMS Gaussian vectors, exactly representable in f32: both sides see the same input.
inline std::vector<std::vector<double>> inputs(int n, int64_t width, unsigned seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<double> g(0.0, 1.0);
    std::vector<std::vector<double>> v(static_cast<size_t>(n), std::vector<double>(static_cast<size_t>(width)));
    for (auto &x : v)
        for (auto &e : x)
            e = float(g(rng));
    return v;
}

} // namespace enginetest
