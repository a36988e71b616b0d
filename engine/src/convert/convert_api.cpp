// The public converter entry points (waste/convert.hpp).
#include "convert/converter.hpp"
#include "convert/file_io.hpp"
#include "format/f16.hpp"
#include "convert/mxfp4.hpp"
#include "convert/native_experts.hpp"
#include "format/native_record.hpp"
#include "convert/parallel.hpp"
#include "convert/safetensors.hpp"
#include "convert/scaled_layouts.hpp"
#include "convert/tiny_model.hpp"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace waste {

using convert::HfDirectorySource;

namespace {

// The stored tensors of one logical tensor, in the order their bytes are appended: the
// quantised groups as their releases name them (model_source.hpp).
std::vector<convert::TensorSpec> storedSpecs(const convert::SourceTensor &t) {
    using convert::DType;
    const int64_t rows = t.rows(), cols = t.rowLength(), B = format::kFp8Block;
    if (t.dtype == DType::MXFP4 && t.shape.size() == 3) // gpt-oss's fused experts: [E, rows, cols/32] blocks of 16 bytes
        return {{t.name + "_blocks", DType::U8, {t.shape[0], t.shape[1], cols / 32, 16}},
                {t.name + "_scales", DType::U8, {t.shape[0], t.shape[1], cols / 32}}};
    if (t.dotScale) { // DeepSeek V4: the payload under the weight's name, F8_E8M0 `.scale` beside it
        const std::string scale = t.name.substr(0, t.name.size() - std::string(".weight").size()) + ".scale";
        if (t.dtype == DType::MXFP4)
            return {{t.name, DType::I8, {rows, cols / 2}}, {scale, DType::F8E8M0, {rows, cols / 32}}};
        return {{t.name, DType::F8E4M3, {rows, cols}}, {scale, DType::F8E8M0, {(rows + B - 1) / B, (cols + B - 1) / B}}};
    }
    switch (t.dtype) {
    case DType::I64: return {{t.name, DType::I64, t.shape}}; // DeepSeek V4's tid2eid
    case DType::MXFP4: // as compressed-tensors stores it: nibbles, then E8M0 scales
        return {{t.name + "_packed", DType::U8, {rows, cols / 2}}, {t.name + "_scale", DType::U8, {rows, cols / 32}}};
    case DType::FP8B128: // DeepSeek's: the weight under its own name, one f32 per 128x128 block
        return {{t.name, DType::F8E4M3, {rows, cols}}, {t.name + "_scale_inv", DType::F32, {(rows + B - 1) / B, (cols + B - 1) / B}}};
    case DType::INT4G32: // compressed-tensors pack-quantized
        return {{t.name + "_packed", DType::I32, {rows, cols / 8}},
                {t.name + "_scale", DType::BF16, {rows, cols / format::kInt4Group}},
                {t.name + "_shape", DType::I64, {2}}};
    case DType::INT4Grouped: // the same, groups of another size
        return {{t.name + "_packed", DType::I32, {rows, cols / 8}},
                {t.name + "_scale", DType::BF16, {rows, convert::blocksAlong(cols, t.blockCols)}},
                {t.name + "_shape", DType::I64, {2}}};
    case DType::FP8Scaled:
        if (t.blockRows < rows || t.blockCols < cols) { // per row or in blocks
            if (t.blockRows == 1 && t.blockCols >= cols) // compressed-tensors "channel"
                return {{t.name, DType::F8E4M3, {rows, cols}}, {t.name + "_scale", DType::F32, {rows, 1}}};
            return {{t.name, DType::F8E4M3, {rows, cols}},
                    {t.name + "_scale_inv", DType::F32, {convert::blocksAlong(rows, t.blockRows), convert::blocksAlong(cols, t.blockCols)}}};
        }
        return {{t.name, DType::F8E4M3, {rows, cols}}, {t.name + "_scale", DType::F32, {1}}}; // compressed-tensors "tensor"
    case DType::F32: return {{t.name, DType::F32, t.shape}};
    default: return {{t.name, DType::BF16, t.shape}};
    }
}

} // namespace

const char *expertEncodingName(ExpertEncoding e) {
    switch (e) {
    case ExpertEncoding::Auto: return "auto";
    case ExpertEncoding::Native: return "native";
    case ExpertEncoding::VQ3R: return "vq3r";
    case ExpertEncoding::Q4: return "q4";
    }
    return "?";
}

const char *tinyExpertsName(TinyExperts e) {
    switch (e) {
    case TinyExperts::Default: return "default";
    case TinyExperts::BF16: return "bf16";
    case TinyExperts::MXFP4: return "mxfp4";
    case TinyExperts::FP8B128: return "fp8b128";
    case TinyExperts::INT4G32: return "int4g32";
    case TinyExperts::FP8B64: return "fp8b64";
    case TinyExperts::FP8Channel: return "fp8-channel";
    case TinyExperts::FP8Tensor: return "fp8-tensor";
    case TinyExperts::INT4G128: return "int4g128";
    }
    return "?";
}

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
    for (const char *side : {"tiktoken.model", "tokenizer.json", "tokenizer_config.json", "preprocessor_config.json"})
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
            for (const TensorSpec &spec : storedSpecs(src.info(name))) {
                specs.push_back(spec);
                weightMap[spec.name] = file;
            }
        }
        SafetensorsWriter writer(joinPath(outDir, file), specs);
        for (const auto &name : shards[s]) {
            const SourceTensor t = src.info(name);
            if (t.dtype == DType::F32) { // small (a router's bias): its floats as they are
                std::vector<float> f(static_cast<size_t>(t.rows() * t.rowLength()));
                src.readRows(t, 0, t.rows(), f.data());
                writer.append(f.data(), static_cast<int64_t>(f.size()) * 4);
                continue;
            }
            if (t.dtype == DType::I64) { // an id table: its values as little-endian int64
                std::vector<float> f(static_cast<size_t>(t.rows() * t.rowLength()));
                src.readRows(t, 0, t.rows(), f.data());
                std::vector<int64_t> ids(f.begin(), f.end());
                writer.append(ids.data(), static_cast<int64_t>(ids.size()) * 8);
                continue;
            }
            if (t.dtype != DType::BF16) { // a quantised group: its tensors' bytes in spec order
                std::vector<uint8_t> payload, scales;
                src.releaseBytes(t, payload, scales);
                writer.append(payload.data(), static_cast<int64_t>(payload.size()));
                writer.append(scales.data(), static_cast<int64_t>(scales.size()));
                if (t.dtype == DType::INT4G32 || t.dtype == DType::INT4Grouped) { // weight_shape: I64 [rows, cols]
                    uint8_t shape[16];
                    for (int i = 0; i < 8; ++i) {
                        shape[i] = static_cast<uint8_t>(uint64_t(t.rows()) >> (8 * i));
                        shape[8 + i] = static_cast<uint8_t>(uint64_t(t.rowLength()) >> (8 * i));
                    }
                    writer.append(shape, 16);
                }
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
    co.experts = options.expertEncoding;
    convert::convertSource(src, outDir, co, progress, cancel, false);
}

} // namespace waste
