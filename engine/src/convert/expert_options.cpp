// The Convert page's choice of expert encoding: native, VQ3R and q4 planned side by side
// for one release (sizes from the converter's own plan), with the quality each costs (the
// figures the converter's tests measure) and the time each would take at this machine's
// measured speeds.
#include "convert/expert_quality.hpp"
#include "convert/fused_experts_source.hpp"
#include "convert/language_model_source.hpp"
#include "convert/hf_names.hpp"
#include "convert/int4_groups.hpp"
#include "convert/model_source.hpp"
#include "convert/native_experts.hpp"
#include "convert/output_file.hpp"
#include "convert/parallel.hpp"
#include "convert/random.hpp"
#include "convert/scaled_layouts.hpp"
#include "convert/vq.hpp"
#include "format/crc32.hpp"
#include "format/f16.hpp"
#include "format/native_record.hpp"
#include "io/disk_probe.hpp"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace waste {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Runs `fn` until at least `minSeconds` have passed; returns the calls made per second.
template <class Fn>
double callsPerSecond(double minSeconds, Fn fn) {
    const auto t0 = Clock::now();
    int calls = 0;
    double s = 0;
    do {
        fn();
        ++calls;
        s = secondsSince(t0);
    } while (s < minSeconds);
    return calls / s;
}

std::vector<float> gaussianVector(size_t n, uint64_t seed) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(convert::gaussian(seed, i));
    return v;
}

std::string percent(double x) {
    char b[16];
    std::snprintf(b, sizeof b, "%.0f %%", 100 * x);
    return b;
}

struct ExpertTotals {
    int64_t elements = 0;       // every routed expert weight
    int64_t matrixElements = 0; // one expert matrix
    int topK = 0;
    uint8_t ownFormat = 0;      // the release's native record format (0: none)
    std::string ownDtype;
    bool relaid = false; // the release's scales are re-laid into the record's (scaled_layouts.hpp)
    std::string firstTensor;
};

ExpertTotals expertTotals(const convert::ModelSource &src, const convert::Layout &layout) {
    ExpertTotals t;
    for (const convert::Unit &u : layout.units)
        for (const convert::ExpertNames &e : u.experts)
            for (const std::string &name : e.name) {
                const convert::SourceTensor info = src.info(name);
                t.elements += info.elements();
                if (t.firstTensor.empty()) {
                    t.firstTensor = name;
                    t.matrixElements = info.elements();
                    t.ownFormat = convert::nativeFormatOf(info);
                    t.ownDtype = convert::scaledLayoutText(info);
                    t.relaid = info.dtype == convert::DType::FP8Scaled || info.dtype == convert::DType::INT4Grouped;
                }
            }
    for (const char *key : {"num_experts_per_tok", "num_experts_per_token", "experts_per_token"})
        if (layout.config.contains(key) && layout.config[key].is_number_integer()) {
            t.topK = layout.config[key].get<int>();
            break;
        }
    return t;
}

// Seconds a conversion takes: the disk reads the source and writes the container, each at
// its own measured rate (one disk shares its time between the two; writes at the read
// rate when they were not measured), while the CPU does the encoding; the converter
// overlaps the two, so the slower one sets the time.
double estimateSeconds(const ExpertOption &o, const ConvertPlan &plan, const ExpertTotals &t, const ConvertOptions &opt,
                       const ConvertRates &r, int moeLayers) {
    if (r.diskReadBytesPerSecond <= 0) return -1;
    const double write = r.diskWriteBytesPerSecond > 0 ? r.diskWriteBytesPerSecond : r.diskReadBytesPerSecond;
    const double disk = double(plan.sourceBytes) / r.diskReadBytesPerSecond + double(plan.outputBytes) / write;
    double cpu = 0;
    if (o.encoding == ExpertEncoding::Native) {
        cpu = r.crcBytesPerSecond > 0 ? double(plan.outputBytes) / r.crcBytesPerSecond : 0;
    } else if (o.encoding == ExpertEncoding::Q4) {
        cpu = r.q4WeightsPerSecond > 0 ? double(t.elements) / r.q4WeightsPerSecond : 0;
    } else if (r.vqSearchesPerSecond > 0) {
        const convert::VqGeometry g;
        const double encode = double(t.elements) / g.dim * g.stages;
        // k-means per MoE layer and matrix kind: every iteration searches every sampled vector, per stage.
        const double sample = std::min<double>(opt.codebookVectors, double(opt.codebookExperts) * double(t.matrixElements) / g.dim);
        const double fit = double(moeLayers) * 3 * sample * opt.kmeansIterations * g.stages;
        cpu = (encode + fit) / r.vqSearchesPerSecond;
    }
    return std::max(disk, cpu);
}

} // namespace

ConvertRates measureConvertRates(const std::string &sourceDir, int jobs, const std::string &outDir) {
    ConvertRates r;
    r.jobs = convert::resolveThreads(jobs);

    // The disk: direct reads of the largest shard (at most 256 MiB of it).
    std::string largest;
    std::uintmax_t largestBytes = 0;
    std::error_code ec;
    for (const auto &e : std::filesystem::directory_iterator(sourceDir, ec))
        if (e.path().extension() == ".safetensors" && e.file_size(ec) > largestBytes) {
            largestBytes = e.file_size(ec);
            largest = e.path().string();
        }
    if (largestBytes >= 4096) {
        // 8 MiB reads, or an eighth of a small shard (a tiny model's), in whole pages.
        const int64_t chunk = std::clamp<int64_t>(int64_t(largestBytes / 8) & ~int64_t(4095), 4096, 8ll << 20);
        try {
            const io::DiskSpeed d = io::probeSequential(largest, 256ll << 20, chunk);
            r.diskReadBytesPerSecond = d.gbPerSecond * 1e9;
            r.diskDirect = d.directIo;
        } catch (const Error &) {
            r.diskReadBytesPerSecond = 0; // not measurable here: the estimates say so (-1)
        }
    }

    if (!outDir.empty()) r.diskWriteBytesPerSecond = convert::directWriteBytesPerSecond(outDir, 64ll << 20);

    // VQ3R's inner loop: nearest-entry searches against a 256-entry codebook per stage.
    const convert::VqGeometry g;
    std::vector<convert::Codebook> books(static_cast<size_t>(g.stages));
    for (int s = 0; s < g.stages; ++s) {
        const std::vector<float> v = gaussianVector(size_t(g.entries) * g.dim, 11 + uint64_t(s));
        books[size_t(s)].value = v;
        for (float x : v) books[size_t(s)].half.push_back(format::floatToF16(x));
    }
    const int64_t rows = 64, cols = 1024;
    const std::vector<float> w = gaussianVector(size_t(rows * cols), 7);
    std::vector<uint8_t> idx(static_cast<size_t>(format::indexBytes(rows, cols, g.stages, g.indexBits)));
    std::vector<uint16_t> scales(static_cast<size_t>(rows));
    const double matrices = callsPerSecond(0.15, [&] { convert::vqEncodeMatrix(w.data(), rows, cols, books, g, idx.data(), scales.data()); });
    r.vqSearchesPerSecond = matrices * double(rows * cols) / g.dim * g.stages * r.jobs;

    // q4: INT4 groups of 32 from f32 weights.
    std::vector<uint8_t> packed(static_cast<size_t>(cols / 2)), q4scales(static_cast<size_t>(cols / 16));
    const double q4rows = callsPerSecond(0.05, [&] {
        for (int64_t row = 0; row < rows; ++row)
            convert::encodeInt4G32Row(w.data() + row * cols, cols, packed.data(), q4scales.data());
    });
    r.q4WeightsPerSecond = q4rows * double(rows * cols) * r.jobs;

    // A repack's CPU work: the records' checksums.
    const std::vector<uint8_t> bytes(8u << 20, 0x5a);
    r.crcBytesPerSecond = callsPerSecond(0.05, [&] { (void)format::crc32(bytes.data(), bytes.size()); }) * double(bytes.size());
    return r;
}

std::vector<ExpertOption> expertOptions(const std::string &sourceDir, const ConvertOptions &options, const ConvertRates *rates) {
    const convert::HfDirectorySource hf(sourceDir);
    const convert::LanguageModelSource text(hf);
    const convert::FusedExpertsSource fused(text);
    const convert::ModelSource &src = fused.fused() ? static_cast<const convert::ModelSource &>(fused) : text;
    const convert::Layout layout = convert::buildLayout(src);
    if (layout.moeLayers == 0 || layout.experts == 0)
        throw Error(ErrorCode::Unsupported, sourceDir + " has no routed experts: there is no expert encoding to choose");
    const ExpertTotals t = expertTotals(src, layout);
    const convert::ExpertChoice auto_ = convert::chooseExperts(src, layout, ExpertEncoding::Auto);
    const bool ownQuantised = t.ownFormat != 0 && t.ownFormat != format::kFmtBF16;
    const std::string own = t.ownFormat ? format::nativeFmtName(t.ownFormat) : t.ownDtype;

    // Planned where no container is, so an existing one (of another encoding) does not count.
    const std::string scratch = (std::filesystem::temp_directory_path() / "waste-expert-options-never-written").string();
    std::vector<ExpertOption> out;
    for (ExpertEncoding e : {ExpertEncoding::Native, ExpertEncoding::VQ3R, ExpertEncoding::Q4}) {
        ExpertOption o;
        o.encoding = e;
        o.topK = t.topK;
        ConvertOptions opt = options;
        opt.experts = e;
        ConvertPlan plan;
        try {
            plan = planConversion(sourceDir, scratch, opt);
        } catch (const Error &err) {
            o.available = false;
            o.advice = err.what();
            out.push_back(o);
            continue;
        }
        o.expertFormat = plan.expertFormat;
        o.recordBytes = plan.recordBytes;
        o.outputBytes = plan.outputBytes;
        o.bytesPerToken = plan.recordBytes * t.topK * layout.moeLayers;
        o.isDefault = e == ExpertEncoding::Native ? auto_.native() && !auto_.encode : e == ExpertEncoding::VQ3R && !auto_.native();
        switch (e) {
        case ExpertEncoding::Native:
            o.exact = true;
            o.quality = t.relaid ? "exact: the release's own values, its scales re-laid" : "exact: the release's own bytes";
            o.advice = ownQuantised ? "The release's " + own + " experts as they are: no second quantisation, converted at the disk's speed."
                                    : "The release's BF16 experts as they are: exact, but the largest container and the most bytes read per token.";
            break;
        case ExpertEncoding::VQ3R:
            o.weightError = ownQuantised ? convert::quality::kVq3rOnMxfp4 : convert::quality::kVq3rOnBf16;
            o.quality = "re-encoded: about " + percent(o.weightError) + " relative weight error (measured on the tiny " +
                        (ownQuantised ? std::string("K3's MXFP4") : std::string("Kimi-Linear's bf16")) + " experts)";
            o.advice = ownQuantised ? "The smallest records, but it quantises the release's " + own +
                                          " experts a second time; k-means makes it the slowest conversion."
                                    : "The smallest records (the reference engine's format); k-means makes it the slowest conversion.";
            break;
        case ExpertEncoding::Q4:
            o.weightError = convert::quality::kQ4OnBf16;
            o.quality = "re-encoded: about " + percent(o.weightError) + " relative weight error (measured on the tiny K3's bf16 experts)";
            if (t.ownFormat == format::kFmtMXFP4 || t.ownFormat == format::kFmtINT4G32) {
                o.discouraged = true;
                o.advice = "Not advised: the release's experts are already 4-bit (" + own +
                           "); q4 moves them onto another 4-bit grid, about the same size as native, only less exact. Choose native.";
            } else if (t.ownFormat == format::kFmtFP8B128) {
                o.advice = "Half of native's bytes per token, at the cost of re-encoding the FP8 weights in 4 bits; no k-means.";
            } else {
                o.advice = "A quarter of BF16's bytes, more exact than VQ3R, and no k-means: it converts near the disk's speed.";
            }
            break;
        case ExpertEncoding::Auto: break;
        }
        if (rates) o.estimatedSeconds = estimateSeconds(o, plan, t, options, *rates, layout.moeLayers);
        out.push_back(o);
    }
    return out;
}

} // namespace waste
