// Decode speed and LUT matvec throughput.
//   bench_decode [CONTAINER] [--tokens N]
// 1. decode tok/s: greedy generation of N tokens (default 64) after a short prompt on
//    CONTAINER (default: the reference fixture r3.waste).
// 2. LUT matvec: VQ3R gate-shaped matrix (1024 x 2304, Kimi-Linear's), index bytes per
//    second, as a ratio to this machine's memory read bandwidth measured in the same run.
// Last line: the figures.
#include "format/codebooks.hpp"
#include "format/manifest.hpp"
#include "quant/lut.hpp"
#include "quant/simd.hpp"
#include "waste/waste.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Memory read bandwidth: sum a buffer far larger than the caches, best of 5.
double memoryReadGBs()
{
    const size_t n = size_t(512) << 20;
    std::vector<uint64_t> buf(n / 8);
    for (size_t i = 0; i < buf.size(); ++i)
        buf[i] = i;
    double best = 0;
    volatile uint64_t sink = 0;
    for (int rep = 0; rep < 5; ++rep) {
        const double t0 = now();
        uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (size_t i = 0; i < buf.size(); i += 4) {
            s0 += buf[i];
            s1 += buf[i + 1];
            s2 += buf[i + 2];
            s3 += buf[i + 3];
        }
        sink = sink + s0 + s1 + s2 + s3;
        best = std::max(best, double(n) / (now() - t0) / 1e9);
    }
    return best;
}

double lutMatvecGBs()
{
    const int M = 1024, N = 2304, S = 3, E = 256;
    const std::string path = "/tmp/bench_decode_codebooks.bin";
    {
        std::mt19937 rng(1);
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        for (int b = 0; b < S; ++b) {
            char hdr[16] = {};
            out.write(hdr, 16);
            for (int i = 0; i < E * 8; ++i) {
                const uint16_t h = static_cast<uint16_t>(0x3000 + (rng() & 0x7ff)); // small positive normals
                out.write(reinterpret_cast<const char *>(&h), 2);
            }
        }
    }
    waste::format::ExpertQuant q;
    waste::format::Codebooks books(path, q);
    std::mt19937 rng(2);
    std::vector<uint8_t> idx(size_t(M / 64) * (N / 8) * 64 * S);
    for (auto &b : idx)
        b = static_cast<uint8_t>(rng());
    std::vector<uint8_t> scales(size_t(M) * 2);
    for (int r = 0; r < M; ++r) {
        const uint16_t h = 0x3c00;
        std::memcpy(&scales[size_t(r) * 2], &h, 2);
    }
    std::vector<float> x(N), y(M);
    for (auto &v : x)
        v = float(rng() % 1000) / 1000.0f - 0.5f;
    waste::quant::Lut lut;
    waste::quant::buildLut(lut, x.data(), N, books, 0, S, false);
    int reps = 0;
    const double t0 = now();
    while (now() - t0 < 1.0 || reps < 3) {
        waste::quant::applyLut8(lut, idx.data(), scales.data(), M, y.data());
        ++reps;
    }
    const double secs = now() - t0;
    std::remove(path.c_str());
    return double(idx.size()) * reps / secs / 1e9;
}

} // namespace

int main(int argc, char **argv)
{
    std::string container = std::string(WASTE_FIXTURES_DIR) + "/reference-container/r3.waste";
    int tokens = 64;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--tokens") == 0 && i + 1 < argc)
            tokens = std::atoi(argv[++i]);
        else
            container = argv[i];
    }
    try {
        auto model = waste::Model::open(container);
        std::vector<int32_t> prompt = model->tokenize("The quick brown fox", true);
        waste::GenParams gp;
        gp.maxTokens = tokens;
        gp.stopTokens.clear();
        const double t0 = now();
        model->eval(prompt);
        const double t1 = now();
        int produced = 0;
        double firstTokenAt = 0;
        model->generate({}, gp, [&](const waste::TokenEvent &) {
            if (produced++ == 0)
                firstTokenAt = now();
            return true;
        });
        const double t2 = now();
        const double tokPerS = produced > 1 ? (produced - 1) / (t2 - firstTokenAt) : produced / (t2 - t1);
        std::printf("container      %s\n", container.c_str());
        std::printf("backend        %s\n", waste::quant::simdName(waste::quant::activeSimd()));
        std::printf("prefill        %zu tokens in %.3f s\n", prompt.size(), t1 - t0);
        std::printf("decode         %d tokens, %.2f tok/s\n", produced, tokPerS);
        const double lut = lutMatvecGBs();
        const double mem = memoryReadGBs();
        std::printf("LUT matvec     %.2f GB/s of VQ3R indices (1024x2304, one thread)\n", lut);
        std::printf("memory read    %.2f GB/s\n", mem);
        std::printf("decode %.2f tok/s | LUT matvec %.2f GB/s = %.3f x memory bandwidth (%.2f GB/s)\n", tokPerS, lut,
                    lut / mem, mem);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench_decode: %s\n", e.what());
        return 1;
    }
    return 0;
}
