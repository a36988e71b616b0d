// Conversion throughput: a Kimi-Linear-shaped model (mktiny --size, default 256M of bf16
// weights) is written in the Hugging Face layout, then converted with --jobs 2.
// Usage: bench_convert [SIZE] [WORK_DIR] [JOBS]. Last line: MB of source per second.
// Before it: the CPU time the conversion took (the figure to compare on a loaded
// machine) and the VQ3R reconstruction error of the experts against the source.
#include "vq3r_error.hpp"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <sys/resource.h>

namespace {

double processCpuSeconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

} // namespace

int main(int argc, char **argv) {
    const int64_t size = argc > 1 ? waste::parseSize(argv[1]) : (256ll << 20);
    const std::string work = argc > 2 ? argv[2] : (std::filesystem::temp_directory_path() / "waste-bench-convert").string();
    const int jobs = argc > 3 ? std::stoi(argv[3]) : 2;
    std::filesystem::remove_all(work);
    const std::string hf = work + "/hf", out = work + "/out";
    waste::TinyModelOptions t;
    t.targetBytes = size;
    t.jobs = jobs;
    auto t0 = std::chrono::steady_clock::now();
    waste::makeTinyHf(hf, t);
    const double genSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto plan = waste::planConversion(hf, out);
    std::fprintf(stderr, "source %.1f MB (%d MoE layers x %d experts, record %lld B), generated in %.1f s\n",
                 plan.sourceBytes / 1e6, plan.moeLayers, plan.experts, static_cast<long long>(plan.recordBytes), genSeconds);
    waste::ConvertOptions o;
    o.jobs = jobs;
    t0 = std::chrono::steady_clock::now();
    const double cpu0 = processCpuSeconds();
    const auto r = waste::convertModel(hf, out, o);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = processCpuSeconds() - cpu0;
    std::fprintf(stderr, "container %.1f MB in %.1f s, %.1f s of CPU (%.1f MB of source per CPU second)\n", plan.outputBytes / 1e6, s,
                 cpu, r.sourceBytesRead / 1e6 / cpu);
    std::fprintf(stderr, "VQ3R relative reconstruction error of the experts: %.2f %%\n", 100 * bench::vq3rRelativeError(hf, out));
    std::filesystem::remove_all(work);
    std::printf("convert throughput (%d jobs): %.1f MB of source per second\n", jobs, r.sourceBytesRead / 1e6 / s);
    return 0;
}
