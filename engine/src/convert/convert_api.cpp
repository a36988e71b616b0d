// The public converter entry points (waste/convert.hpp).
#include "convert/converter.hpp"
#include "convert/file_io.hpp"
#include "format/f16.hpp"
#include "convert/mxfp4.hpp"
#include "convert/parallel.hpp"
#include "convert/safetensors.hpp"
#include "convert/tiny_model.hpp"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace waste {

using convert::HfDirectorySource;

ConvertPlan planConversion(const std::string &sourceDir, const std::string &outDir, const ConvertOptions &options) {
    HfDirectorySource src(sourceDir);
    return convert::planSource(src, outDir, options);
}

ConvertResult convertModel(const std::string &sourceDir, const std::string &outDir, const ConvertOptions &options,
                           const ConvertProgressCallback &progress, const std::atomic<bool> *cancel) {
    std::error_code ec;
    if (options.reclaim && std::filesystem::exists(outDir, ec) &&
        std::filesystem::equivalent(sourceDir, outDir, ec))
        throw Error(ErrorCode::Argument, "--reclaim with the output folder equal to the source folder would delete the result's neighbours; use another output folder");
    HfDirectorySource src(sourceDir);
    return convert::convertSource(src, outDir, options, progress, cancel, true);
}

void makeTinyHf(const std::string &outDir, const TinyModelOptions &options) {
    using namespace convert;
    const TinySource src(options);
    makeDirectories(outDir);
    writeFileAtomic(joinPath(outDir, "config.json"), src.configText());
    for (const char *side : {"tiktoken.model", "tokenizer_config.json", "preprocessor_config.json"})
        if (auto text = src.sideFile(side)) writeFileAtomic(joinPath(outDir, side), *text);

    // Shards in checkpoint order, about a third of the model each (512 MiB when large).
    const int64_t total = src.totalBytes();
    const int64_t target = total <= (1536ll << 20) ? total / 3 + 1 : (512ll << 20);
    std::vector<std::vector<std::string>> shards(1);
    int64_t current = 0;
    for (const auto &name : src.order()) {
        const int64_t b = src.info(name).bytes;
        if (current > 0 && current + b > target) {
            shards.emplace_back();
            current = 0;
        }
        shards.back().push_back(name);
        current += b;
    }
    const int threads = resolveThreads(options.jobs);
    nlohmann::json weightMap = nlohmann::json::object();
    for (size_t s = 0; s < shards.size(); ++s) {
        char file[64];
        std::snprintf(file, sizeof file, "model-%05zu-of-%05zu.safetensors", s + 1, shards.size());
        std::vector<TensorSpec> specs;
        for (const auto &name : shards[s]) {
            const SourceTensor t = src.info(name);
            if (t.dtype == DType::MXFP4) { // as compressed-tensors stores it: nibbles, then E8M0 scales
                const int64_t cols = t.rowLength();
                specs.push_back({name + "_packed", DType::U8, {t.rows(), (cols + 1) / 2}});
                specs.push_back({name + "_scale", DType::U8, {t.rows(), (cols + int64_t(kMxfp4Block) - 1) / int64_t(kMxfp4Block)}});
                weightMap[name + "_packed"] = file;
                weightMap[name + "_scale"] = file;
                continue;
            }
            specs.push_back({name, DType::BF16, t.shape});
            weightMap[name] = file;
        }
        SafetensorsWriter writer(joinPath(outDir, file), specs);
        for (const auto &name : shards[s]) {
            const SourceTensor t = src.info(name);
            if (t.dtype == DType::MXFP4) {
                const int64_t cols = t.rowLength();
                std::vector<uint8_t> packed(static_cast<size_t>(t.rows() * ((cols + 1) / 2)));
                std::vector<uint8_t> scales(static_cast<size_t>(t.rows() * ((cols + int64_t(kMxfp4Block) - 1) / int64_t(kMxfp4Block))));
                src.readMxfp4(t, packed.data(), scales.data());
                writer.append(packed.data(), static_cast<int64_t>(packed.size()));
                writer.append(scales.data(), static_cast<int64_t>(scales.size()));
                continue;
            }
            const int64_t rowsPerChunk = std::max<int64_t>(1, (1 << 20) / std::max<int64_t>(1, t.rowLength()));
            const int64_t chunks = (t.rows() + rowsPerChunk - 1) / rowsPerChunk;
            // Generate a batch of chunks in parallel, append them in order.
            for (int64_t c0 = 0; c0 < chunks; c0 += threads) {
                const int64_t n = std::min<int64_t>(threads, chunks - c0);
                std::vector<std::vector<uint16_t>> out(static_cast<size_t>(n));
                parallelFor(static_cast<size_t>(n), threads, [&](size_t i) {
                    const int64_t r0 = (c0 + static_cast<int64_t>(i)) * rowsPerChunk;
                    const int64_t rows = std::min(rowsPerChunk, t.rows() - r0);
                    std::vector<float> f(static_cast<size_t>(rows * t.rowLength()));
                    src.readRows(t, r0, rows, f.data());
                    out[i].resize(f.size());
                    for (size_t k = 0; k < f.size(); ++k) out[i][k] = format::floatToBf16(f[k]);
                });
                for (const auto &o : out) writer.append(o.data(), static_cast<int64_t>(o.size()) * 2);
            }
        }
        writer.finish();
    }
    nlohmann::json index;
    index["metadata"] = {{"total_size", total}};
    index["weight_map"] = weightMap;
    writeFileAtomic(joinPath(outDir, "model.safetensors.index.json"), index.dump(2) + "\n");
}

void makeTinyContainer(const std::string &outDir, const TinyModelOptions &options, const ConvertProgressCallback &progress,
                       const std::atomic<bool> *cancel) {
    const convert::TinySource src(options);
    ConvertOptions co;
    co.jobs = options.jobs;
    co.trunkBits = options.trunkBits;
    convert::convertSource(src, outDir, co, progress, cancel, false);
}

} // namespace waste
