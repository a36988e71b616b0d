// The calibration run behind waste::calibrateCompute: the engine's own kernels on the
// engine's thread pool, timed at a few sizes each, so the planner can price a token from
// what it touches. Sizes span from a tiny model's matrices (where dispatch and cache
// effects dominate) to a large release's (where memory bandwidth does), because the time
// per byte differs by several times between the two ends.
#include "compute/thread_pool.hpp"
#include "format/codebooks.hpp"
#include "format/expert_record.hpp"
#include "format/f16.hpp"
#include "format/native_record.hpp"
#include "format/trunk.hpp"
#include "format/trunk_layout.hpp"
#include "quant/lut.hpp"
#include "quant/native_matvec.hpp"
#include "quant/panel_decode.hpp"
#include "quant/native_rows.hpp"
#include "quant/panel_gemm.hpp"
#include "quant/simd.hpp"
#include "quant/trunk_matvec.hpp"
#include "quant/kernel_calibration.hpp"
#include "quant/vq_expert_workload.hpp"

#include <waste/calibration.hpp>
#include <waste/waste.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

namespace waste {

namespace {

using Clock = std::chrono::steady_clock;

// A resident trunk matrix of the given format filled with arbitrary values (timing only).
format::TrunkTensor trunkMatrix(format::TrunkFormat f, int64_t rows, int64_t cols, std::mt19937 &rng)
{
    format::TrunkTensor w;
    w.name = "calibration";
    w.format = f;
    w.rows = rows;
    w.cols = cols;
    w.shape = {rows, cols};
    if (format::isGrouped(f)) {
        w.group = format::kTrunkGroup;
        w.groups = format::trunkGroups(cols, w.group);
        w.rowBytes = format::trunkRowBytes(f, cols, w.group);
        w.payload.resize(size_t(rows * w.rowBytes));
        for (auto &b : w.payload)
            b = uint8_t(rng());
        w.scales.assign(size_t(rows * w.groups), 0.01f);
    } else {
        w.f32.resize(size_t(rows * cols));
        for (auto &v : w.f32)
            v = float(int(rng() % 200) - 100) * 0.001f;
    }
    return w;
}

// `w`'s rows repeated `copies` times in one tensor (timing only: windows of it are w again).
format::TrunkTensor stackedCopies(format::TrunkTensor w, int64_t copies)
{
    auto repeat = [copies](auto &v) {
        const size_t n = v.size();
        v.resize(n * size_t(copies));
        for (int64_t k = 1; k < copies; ++k)
            std::copy(v.begin(), v.begin() + std::ptrdiff_t(n), v.begin() + std::ptrdiff_t(n * size_t(k)));
    };
    repeat(w.payload);
    repeat(w.scales);
    repeat(w.f32);
    w.rows *= copies;
    w.shape = {w.rows, w.cols};
    return w;
}

int64_t storedBytes(const format::TrunkTensor &w)
{
    return w.f32.empty() ? int64_t(w.payload.size()) + w.rows * w.groups * 2 : int64_t(w.f32.size()) * 4;
}

std::string cpuName()
{
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) {
                std::string s = line.substr(colon + 1);
                s.erase(0, s.find_first_not_of(' '));
                return s;
            }
        }
    return "unknown CPU";
}

} // namespace

// Seconds of one call of `fn`: the fastest of five windows' means. One mean over the whole
// time took whatever stall landed in it (another program's burst on a shared VM) into the
// kernel's price, and so into every forecast made from this calibration until the next:
// on a 2-core AMD EPYC VM six calibrations a minute apart priced the mid-size container's
// token from 10.2 to 12.1 ms. A stall now moves one window of five. What a real token pays
// around its kernels, stalls included, is the decode scale's to carry (plan/decode_scale).
double typicalSeconds(const std::function<void()> &fn, double target)
{
    constexpr int kWindows = 5;
    fn(); // warm caches and wake the pool's threads
    auto t0 = Clock::now();
    fn();
    const double once = std::max(1e-7, std::chrono::duration<double>(Clock::now() - t0).count());
    const int reps = std::clamp(int(target / (once * kWindows)), 1, 400);
    std::array<double, kWindows> windows{};
    for (double &w : windows) {
        t0 = Clock::now();
        for (int i = 0; i < reps; ++i)
            fn();
        w = std::chrono::duration<double>(Clock::now() - t0).count() / reps;
    }
    return *std::min_element(windows.begin(), windows.end());
}

std::string calibrationMachineKey(int threads)
{
    const int hw = int(std::max(1u, std::thread::hardware_concurrency()));
    // The trailing version makes files from an older calibration (without the cold expert
    // timings, the decode scale, the panel product, the panel decoders, with the demo's
    // decode scale, timing linear attention before its convolutions ran a run at a time
    // and its delta rule eight column blocks at once, or without cold trunk rows, or with
    // each timing one mean that a stall could move and the decode scale kept at 1 or more,
    // or with the AVX2 and NEON panel product and decoders before they were vectorised, and
    // FP8 panels from the table) measure again.
    return cpuName() + ", " + std::to_string(hw) + " hardware threads, " +
           quant::simdName(quant::activeSimd()) + ", " + std::to_string(threads > 0 ? threads : hw) +
           " compute threads, calibration 11";
}

ComputeCalibration calibrateKernels(int threads)
{
    const auto start = Clock::now();
    compute::ThreadPool pool(threads);
    ComputeCalibration c;
    c.threads = threads;
    c.machine = calibrationMachineKey(threads);
    std::mt19937 rng(12345);
    std::vector<float> x(1 << 16), y(1 << 16);
    for (auto &v : x)
        v = float(int(rng() % 200) - 100) * 0.01f;

    // Trunk matvecs: inputs 1024 wide, rows for ~16 KiB to ~48 MiB of stored weights
    // (a tiny model's projections up to a large release's). Each size is timed warm, one
    // matrix over and over (a small model's trunk stays in the CPU's caches from one token to
    // the next), and cold (kColdSuffix): a window taken in turn from copies stacked past the
    // last-level cache, as a token whose trunk and experts together overflow the caches meets
    // each matrix again. On a 2-core AMD EPYC VM cold rows took 4x their warm time in F32,
    // 1.3x in Q8G and 1.1x in Q4G, whose unpacking, not the memory, bounds them.
    using format::TrunkFormat;
    for (TrunkFormat f : {TrunkFormat::F32, TrunkFormat::Q8G, TrunkFormat::Q4G, TrunkFormat::Q3G}) {
        const int64_t cols = 1024;
        const int64_t rowBytes = format::isGrouped(f) ? format::trunkRowBytes(f, cols, format::kTrunkGroup) +
                                                            format::trunkGroups(cols, format::kTrunkGroup) * 2
                                                      : cols * 4;
        const int64_t stackTarget = int64_t(4) << 20; // the largest size timed cold in windows
        const format::TrunkTensor stack =
            stackedCopies(trunkMatrix(f, stackTarget / rowBytes, cols, rng), quant::rotationCopies(stackTarget));
        for (int64_t target : {int64_t(16) << 10, int64_t(256) << 10, stackTarget, int64_t(48) << 20}) {
            if (f == TrunkFormat::Q3G && target > stackTarget)
                break; // no SIMD kernel: slow enough that 4 MiB already shows its bandwidth
            const int64_t rows = std::max<int64_t>(target / rowBytes, 8);
            const format::TrunkTensor w = trunkMatrix(f, rows, cols, rng);
            if (y.size() < size_t(rows))
                y.resize(size_t(rows));
            const double s = typicalSeconds([&] { quant::matvec(w, x.data(), y.data(), pool); });
            c.timings.push_back({format::trunkFormatName(f), storedBytes(w), s});
            // 48 MiB is past the caches already: the one matrix streams from memory each time.
            double cold = s;
            if (target <= stackTarget) {
                const int64_t windows = stack.rows / rows;
                int64_t turn = 0;
                cold = typicalSeconds(
                    [&] { quant::matvecWindow(stack, x.data(), y.data(), (turn++ % windows) * rows, rows, pool); });
            }
            c.timings.push_back({std::string(format::trunkFormatName(f)) + kColdSuffix, storedBytes(w), cold});
        }
    }

    // VQ3R: one table build (per input width), and a whole routed expert as decoding runs
    // it (gate and up applies split over the pool, the activation, the down table, the
    // down apply), by index bytes.
    const format::Codebooks books = quant::randomCodebooks(9, rng);
    const int stages = 3;
    for (int64_t width : {int64_t(256), int64_t(1024), int64_t(4096)}) {
        quant::Lut lut;
        const double s = typicalSeconds([&] { quant::buildLut(lut, x.data(), width, books, 0, stages, false, &pool); });
        c.timings.push_back({"LUT", width, s});
    }
    for (auto [inter, width] : {std::pair<int64_t, int64_t>{128, 256}, {512, 1024}, {2048, 4096}}) {
        quant::VqExpertWorkload expert(inter, width, books, x.data(), pool, rng);
        c.timings.push_back({"VQ-expert", expert.recordBytes(), typicalSeconds([&] { expert.runWarm(); })});
        c.timings.push_back(
            {std::string("VQ-expert") + kColdSuffix, expert.recordBytes(), typicalSeconds([&] { expert.runCold(); })});
    }

    // A prompt's pass: the panel product (quant/panel_gemm.hpp) of 16 panels of 1024 columns
    // by 64 and by 512 tokens, split over the pool as a pass splits its products. Units: FLOPs.
    {
        const quant::PanelGemm gemm = quant::panelGemm();
        const int64_t K = 1024, panels = 16, P = quant::kPanelRows;
        std::vector<float> panel(size_t(panels * K * P)), in(size_t(512 * K)), outs(size_t(512 * P * panels));
        for (size_t i = 0; i < panel.size(); ++i)
            panel[i] = float(int(rng() % 200) - 100) * 0.01f;
        for (size_t i = 0; i < in.size(); ++i)
            in[i] = x[i % x.size()];
        for (int64_t T : {int64_t(64), int64_t(512)}) {
            const double s = typicalSeconds([&] {
                pool.forRange(panels, 1, [&](int64_t p0, int64_t p1) {
                    for (int64_t p = p0; p < p1; ++p)
                        gemm(panel.data() + p * K * P, K, in.data(), K, T, outs.data() + p * P, P * panels, P);
                });
            });
            c.timings.push_back({"PANEL", 2 * K * P * T * panels, s});
        }
    }

    // A prompt's pass decodes each routed expert it uses into panels once, whatever number of
    // its tokens then multiply them (quant/panel_decode.hpp): a cost per pass, not per token.
    // Timed on whole records of two shapes, taken in turn from more than the caches hold as a
    // pass finds them in the expert cache, their panels split over the pool as a pass's
    // products split them (quant/panel_product.cpp). Units: weights ("VQ-panels",
    // "<native format>-panels").
    {
        // Every panel of the three matrices, decoded into a thread's own buffer.
        auto decodeRecord = [&](auto matrix, auto decode, int64_t inter, int64_t width) {
            const int64_t rows[3] = {inter, inter, width}, cols[3] = {width, width, inter};
            const int64_t gatePanels = (inter + quant::kPanelRows - 1) / quant::kPanelRows;
            const int64_t downPanels = (width + quant::kPanelRows - 1) / quant::kPanelRows;
            const int64_t blocks = 2 * gatePanels + downPanels;
            pool.forRange(blocks, 1, [&](int64_t b0, int64_t b1) {
                thread_local std::vector<float> panel;
                for (int64_t b = b0; b < b1; ++b) {
                    const int which = b < gatePanels ? 0 : b < 2 * gatePanels ? 1 : 2;
                    const int64_t r0 = (which == 2 ? b - 2 * gatePanels : b % gatePanels) * quant::kPanelRows;
                    panel.resize(size_t(cols[which] * quant::kPanelRows));
                    decode(matrix(which, rows[which], cols[which]), r0, panel.data());
                }
            });
        };
        // One block of random records for every format and shape (the first touch of fresh
        // memory is slow on some VMs, 0.3 GB/s): bytes & 0x77 are valid indices and keep the
        // native values' exponents small (no inf or nan on the way).
        const int64_t kShapes[2][2] = {{512, 1024}, {1024, 2048}};
        const int64_t blockBytes = (int64_t(64) << 20) + format::nativeRecordLayout(format::kFmtBF16, 1024, 2048).recordBytes;
        std::vector<uint8_t> block(static_cast<size_t>(blockBytes));
        std::mt19937_64 wide(rng());
        for (size_t i = 0; i + 8 <= block.size(); i += 8) {
            const uint64_t r = wide() & 0x7777777777777777ull;
            std::memcpy(block.data() + i, &r, 8);
        }
        // The records of `recBytes` in turn through the block, the next one each call.
        auto rotation = [&](int64_t recBytes) {
            return [&block, recBytes, copies = std::max<int64_t>(1, int64_t(block.size()) / recBytes), turn = int64_t(0)]() mutable {
                return block.data() + (turn++ % copies) * recBytes;
            };
        };
        std::vector<uint8_t> scales(size_t(2 * 2048), 0);
        for (size_t i = 1; i < scales.size(); i += 2)
            scales[i] = 0x3c; // f16 1.0
        // VQ3R's three stages of 8-bit indices, VQ2R's two and VQ4P's four packed 6-bit ones.
        struct VqForm {
            const char *name;
            int stages, bits;
        };
        const format::Codebooks books12 = quant::randomCodebooks(12, rng);
        for (const VqForm &form : {VqForm{"VQ-panels", 3, 8}, VqForm{"VQ2R-panels", 2, 8}, VqForm{"VQ4P-panels", 4, 6}}) {
            for (const auto &[inter, width] : kShapes) {
                const int64_t gateBytes = format::indexBytes(inter, width, form.stages, form.bits);
                auto next = rotation(2 * gateBytes + format::indexBytes(width, inter, form.stages, form.bits));
                const uint8_t *rec = nullptr;
                auto vq = [&](int which, int64_t rows, int64_t cols) {
                    quant::VqMatrix m;
                    m.indices = rec + which * gateBytes;
                    m.rowScalesF16 = scales.data();
                    m.books = &books12;
                    m.base = form.stages * which;
                    m.stages = form.stages;
                    m.packed6 = form.bits == 6;
                    m.rows = rows;
                    m.cols = cols;
                    return m;
                };
                c.timings.push_back({form.name, 3 * inter * width, typicalSeconds([&] {
                                         rec = next();
                                         decodeRecord(vq, quant::decodeVqPanel, inter, width);
                                     })});
            }
        }
        for (uint8_t fmt : {format::kFmtMXFP4, format::kFmtFP8B128, format::kFmtINT4G32, format::kFmtBF16}) {
            for (const auto &[inter, width] : kShapes) {
                const format::NativeLayout l = format::nativeRecordLayout(fmt, inter, width);
                auto next = rotation(l.recordBytes);
                const uint8_t *rec = nullptr;
                auto native = [&](int which, int64_t, int64_t) { return quant::nativeMatrix(fmt, rec, l, which, inter, width); };
                c.timings.push_back({std::string(format::nativeFmtName(fmt)) + "-panels", 3 * inter * width,
                                     typicalSeconds([&] {
                                         rec = next();
                                         decodeRecord(native, quant::decodeNativePanel, inter, width);
                                     })});
            }
        }
    }

    // Native records (a release's own encoding): gate, up and down as row dot products.
    const quant::NativeRowKernels &nk = quant::nativeRows();
    // Two sizes: these are row kernels whose time per byte is flat past the caches, and the
    // scalar ones among them would make a large size take seconds.
    for (uint8_t fmt : {format::kFmtMXFP4, format::kFmtFP8B128, format::kFmtINT4G32, format::kFmtBF16}) {
        for (auto [inter, width] : {std::pair<int64_t, int64_t>{128, 256}, {512, 1024}}) {
            const format::NativeLayout l = format::nativeRecordLayout(fmt, inter, width);
            const int copies = quant::rotationCopies(l.recordBytes);
            std::vector<uint8_t> recs(size_t(l.recordBytes * copies));
            for (int64_t i = 0; i < l.recordBytes; ++i)
                recs[size_t(i)] = uint8_t(rng() & 0x77); // small exponents: no inf/nan on the way
            for (int k = 1; k < copies; ++k)
                std::copy(recs.begin(), recs.begin() + l.recordBytes, recs.begin() + k * l.recordBytes);
            const uint8_t *rec = recs.data();
            std::vector<float> g(static_cast<size_t>(inter)), u(static_cast<size_t>(inter)), out(static_cast<size_t>(width));
            auto rows = [&](int part, int64_t nrows, int64_t n, const float *in, float *o) {
                const uint8_t *p = rec + l.payloadOff[part];
                const uint8_t *sc = rec + l.scaleOff[part];
                const int64_t rowPayload = l.payloadBytes[part] / nrows;
                pool.forRange(nrows, pool.grainFor(nrows, std::max<int64_t>(1, n / 4)), [&](int64_t r0, int64_t r1) {
                    for (int64_t r = r0; r < r1; ++r) {
                        const uint8_t *q = p + r * rowPayload;
                        switch (fmt) {
                        case format::kFmtMXFP4: o[r] = nk.mxfp4(q, sc + r * (n / 32), in, n); break;
                        case format::kFmtFP8B128: o[r] = nk.fp8b128(q, sc + (r / 128) * ((n + 127) / 128) * 4, in, n); break;
                        case format::kFmtINT4G32: o[r] = nk.int4g32(q, sc + r * (n / 32) * 2, in, n); break;
                        default: o[r] = nk.bf16(q, in, n); break;
                        }
                    }
                });
            };
            auto expert = [&] {
                rows(0, inter, width, x.data(), g.data());
                rows(1, inter, width, x.data(), u.data());
                for (int64_t i = 0; i < inter; ++i)
                    g[size_t(i)] = g[size_t(i)] / (1.0f + std::exp(-g[size_t(i)])) * u[size_t(i)];
                rows(2, width, inter, g.data(), out.data());
            };
            const int64_t units = l.payloadBytes[0] + l.payloadBytes[1] + l.payloadBytes[2] + l.scaleBytes[0] +
                                  l.scaleBytes[1] + l.scaleBytes[2];
            const std::string name = std::string(format::nativeFmtName(fmt)) + "-expert";
            c.timings.push_back({name, units, typicalSeconds(expert)});
            int turn = 0;
            c.timings.push_back({name + kColdSuffix, units, typicalSeconds([&] {
                                     rec = recs.data() + (turn++ % copies) * l.recordBytes;
                                     expert();
                                 })});
        }
    }
    c.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return c;
}

} // namespace waste
