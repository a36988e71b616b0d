// The tiny models' routed experts in the layouts releases ship them in (BF16, MXFP4,
// FP8 with 128x128 block scales, INT4 pack-quantized in groups of 32, and the scaled
// layouts of scaled_layouts.hpp: FP8 per 64x64 block, per row or per tensor, INT4 groups
// of 128): which stored
// bytes each layout has, the bytes themselves (generated, then encoded the way those
// releases were made), the values a reader decodes from them, and the
// "quantization_config" that describes them in config.json.
#include "convert/fp8_blocks.hpp"
#include "convert/int4_groups.hpp"
#include "convert/mxfp4.hpp"
#include "convert/native_experts.hpp"
#include "convert/scaled_layouts.hpp"
#include "convert/tiny_model.hpp"
#include "format/f16.hpp"
#include "format/native_record.hpp"

#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace waste::convert {

using ojson = nlohmann::ordered_json;


DType tinyExpertDType(TinyExperts e, DType byDefault) {
    switch (e) {
    case TinyExperts::Default: return byDefault;
    case TinyExperts::BF16: return DType::BF16;
    case TinyExperts::MXFP4: return DType::MXFP4;
    case TinyExperts::FP8B128: return DType::FP8B128;
    case TinyExperts::INT4G32: return DType::INT4G32;
    case TinyExperts::FP8B64:
    case TinyExperts::FP8Channel:
    case TinyExperts::FP8Tensor: return DType::FP8Scaled;
    case TinyExperts::INT4G128: return DType::INT4Grouped;
    }
    return byDefault;
}

void tinyExpertBlocks(TinyExperts e, int64_t rows, int64_t cols, int64_t &blockRows, int64_t &blockCols) {
    switch (e) {
    case TinyExperts::FP8B64: blockRows = blockCols = 64; return;
    case TinyExperts::FP8Channel: blockRows = 1, blockCols = cols; return;
    case TinyExperts::FP8Tensor: blockRows = rows, blockCols = cols; return;
    case TinyExperts::INT4G128: blockRows = 1, blockCols = 128; return;
    default: blockRows = blockCols = 0;
    }
}

double tinyExpertBytesPerWeight(DType dtype) {
    switch (dtype) {
    case DType::MXFP4:
    case DType::INT4G32: return 0.5; // about half a byte a weight
    case DType::INT4Grouped: return 0.5;
    case DType::FP8B128:
    case DType::FP8Scaled: return 1.0;
    default: return 2.0;
    }
}

int64_t tinyStoredBytes(const SourceTensor &t) {
    const int64_t rows = t.rows(), cols = t.rowLength();
    switch (t.dtype) {
    case DType::FP8Scaled: return rows * cols + blocksAlong(rows, t.blockRows) * blocksAlong(cols, t.blockCols) * 4;
    case DType::INT4Grouped: return rows * cols / 2 + rows * blocksAlong(cols, t.blockCols) * 2 + 16;
    case DType::MXFP4: return rows * ((cols + 1) / 2 + (cols + int64_t(kMxfp4Block) - 1) / int64_t(kMxfp4Block));
    case DType::FP8B128: return rows * cols + fp8BlockScaleBytes(rows, cols);
    case DType::INT4G32: return rows * cols / 2 + rows * (cols / format::kInt4Group) * 2 + 16; // + the I64 [2] shape
    case DType::F32: return rows * cols * 4;
    default: return rows * cols * 2;
    }
}

std::vector<float> TinySource::generated(const Tensor &t) const {
    std::vector<float> w(static_cast<size_t>(t.info.elements()));
    generate(t, 0, t.info.elements(), w.data());
    return w;
}

namespace {

// DeepSeek V4's FP8: per 128x128 block the power-of-two scale 2^ceil(log2(amax / 448))
// (ue8m0, one E8M0 byte), the values rounded to the nearest e4m3.
void encodeFp8Ue8m0(const float *w, int64_t rows, int64_t cols, uint8_t *q, uint8_t *scales) {
    const int64_t B = 128, gc = blocksAlong(cols, B);
    for (int64_t br = 0; br < blocksAlong(rows, B); ++br)
        for (int64_t bc = 0; bc < gc; ++bc) {
            float amax = 0.0f;
            for (int64_t r = br * B; r < std::min(rows, (br + 1) * B); ++r)
                for (int64_t c = bc * B; c < std::min(cols, (bc + 1) * B); ++c) amax = std::max(amax, std::fabs(w[r * cols + c]));
            const int e = std::clamp(int(std::ceil(std::log2(std::max(amax, 1e-4f) / kE4m3Max))), -127, 127);
            scales[br * gc + bc] = uint8_t(e + 127);
            const float s = std::ldexp(1.0f, e);
            for (int64_t r = br * B; r < std::min(rows, (br + 1) * B); ++r)
                for (int64_t c = bc * B; c < std::min(cols, (bc + 1) * B); ++c) q[r * cols + c] = encodeE4m3(w[r * cols + c] / s);
        }
}

void decodeFp8Ue8m0Rows(const uint8_t *q, const uint8_t *scales, int64_t cols, int64_t row0, int64_t n, float *out) {
    const int64_t B = 128, gc = blocksAlong(cols, B);
    for (int64_t r = row0; r < row0 + n; ++r)
        for (int64_t c = 0; c < cols; ++c)
            out[(r - row0) * cols + c] = format::e4m3Value(q[r * cols + c]) * format::e8m0Scale(scales[(r / B) * gc + c / B]);
}

} // namespace

void TinySource::releaseBytes(const SourceTensor &st, std::vector<uint8_t> &payload, std::vector<uint8_t> &scales) const {
    const int64_t rows = st.rows(), n = st.rowLength();
    if (st.dtype == DType::FP8Scaled && st.dotScale) {
        const std::vector<float> w = generated(m_tensors.at(st.name));
        payload.resize(static_cast<size_t>(rows * n));
        scales.resize(static_cast<size_t>(blocksAlong(rows, 128) * blocksAlong(n, 128)));
        encodeFp8Ue8m0(w.data(), rows, n, payload.data(), scales.data());
        return;
    }
    if (st.dtype == DType::FP8Scaled) {
        const std::vector<float> w = generated(m_tensors.at(st.name));
        payload.resize(static_cast<size_t>(rows * n));
        scales.resize(static_cast<size_t>(blocksAlong(rows, st.blockRows) * blocksAlong(n, st.blockCols) * 4));
        encodeFp8ScaledBlocks(w.data(), rows, n, st.blockRows, st.blockCols, payload.data(), scales.data());
        return;
    }
    if (st.dtype == DType::INT4Grouped) {
        const std::vector<float> w = generated(m_tensors.at(st.name));
        const int64_t sRow = blocksAlong(n, st.blockCols) * 2;
        payload.resize(static_cast<size_t>(rows * n / 2));
        scales.resize(static_cast<size_t>(rows * sRow));
        for (int64_t r = 0; r < rows; ++r)
            encodeInt4GroupedRow(w.data() + r * n, n, st.blockCols, payload.data() + r * n / 2, scales.data() + r * sRow);
        return;
    }
    const uint8_t fmt = nativeFormatOf(st.dtype);
    payload.resize(static_cast<size_t>(format::nativePayloadBytes(fmt, rows, n)));
    scales.resize(static_cast<size_t>(format::nativeScaleBytes(fmt, rows, n)));
    readStored(st, payload.data(), scales.data());
}

void TinySource::readStored(const SourceTensor &st, uint8_t *payload, uint8_t *scales) const {
    const Tensor &t = m_tensors.at(st.name);
    if (st.dtype == DType::FP8Scaled && st.dotScale)
        throw Error(ErrorCode::Unsupported, st.name + ": DeepSeek V4's FP8 trunk tensors are decoded, not kept as records");
    if (st.dtype == DType::FP8Scaled || st.dtype == DType::INT4Grouped) { // the release's, scales re-laid (or refused)
        std::vector<uint8_t> p, s;
        releaseBytes(st, p, s);
        if (st.dtype == DType::FP8Scaled) {
            std::vector<float> f(s.size() / 4);
            scalesToF32(DType::F32, s.data(), int64_t(f.size()), f.data());
            fp8ScalesToBlock128(st, f.data(), scales);
        } else {
            int4ScalesToGroup32(st, s.data(), scales);
        }
        std::copy(p.begin(), p.end(), payload);
        return;
    }
    const uint8_t fmt = nativeFormatOf(t.info.dtype);
    if (!fmt)
        throw Error(ErrorCode::Unsupported, st.name + " is " + dtypeName(t.info.dtype) +
                                                "; native expert records keep MXFP4, FP8 blocks, INT4 groups or BF16");
    const int64_t rows = st.rows(), n = st.rowLength();
    const std::vector<float> w = generated(t);
    switch (t.info.dtype) {
    case DType::MXFP4: {
        const int64_t pRow = (n + 1) / 2, sRow = (n + int64_t(kMxfp4Block) - 1) / int64_t(kMxfp4Block);
        for (int64_t r = 0; r < rows; ++r)
            encodeMxfp4Row({w.data() + r * n, static_cast<size_t>(n)}, {payload + r * pRow, static_cast<size_t>(pRow)},
                           {scales + r * sRow, static_cast<size_t>(sRow)});
        return;
    }
    case DType::FP8B128: encodeFp8Blocks(w.data(), rows, n, payload, scales); return;
    case DType::INT4G32:
        for (int64_t r = 0; r < rows; ++r)
            encodeInt4G32Row(w.data() + r * n, n, payload + r * n / 2, scales + r * (n / format::kInt4Group) * 2);
        return;
    default:
        for (int64_t i = 0; i < rows * n; ++i) {
            const uint16_t h = format::floatToBf16(w[static_cast<size_t>(i)]);
            payload[2 * i] = static_cast<uint8_t>(h);
            payload[2 * i + 1] = static_cast<uint8_t>(h >> 8);
        }
    }
}

void TinySource::readStoredRows(const SourceTensor &st, int64_t row0, int64_t rows, uint8_t *payload, uint8_t *scales) const {
    const Tensor &t = m_tensors.at(st.name);
    if (t.info.dtype != DType::MXFP4) ModelSource::readStoredRows(st, row0, rows, payload, scales);
    // Rows are encoded one by one, so a range is the slice of the whole encoding.
    const int64_t n = st.rowLength(), pRow = n / 2, sRow = n / int64_t(kMxfp4Block);
    std::vector<float> w(static_cast<size_t>(rows * n));
    generate(t, row0 * n, rows * n, w.data());
    for (int64_t r = 0; r < rows; ++r)
        encodeMxfp4Row({w.data() + r * n, static_cast<size_t>(n)}, {payload + r * pRow, static_cast<size_t>(pRow)},
                       {scales + r * sRow, static_cast<size_t>(sRow)});
}

void TinySource::readRows(const SourceTensor &st, int64_t row0, int64_t rows, float *out) const {
    const Tensor &t = m_tensors.at(st.name);
    const int64_t n = st.rowLength();
    if (t.info.dtype == DType::BF16 || t.info.dtype == DType::F32 || t.info.dtype == DType::I64) {
        generate(t, row0 * n, rows * n, out);
        return;
    }
    if (st.dtype == DType::FP8Scaled && st.dotScale) {
        std::vector<uint8_t> p, s;
        releaseBytes(st, p, s);
        decodeFp8Ue8m0Rows(p.data(), s.data(), n, row0, rows, out);
        return;
    }
    // What a reader of the quantised checkpoint decodes: generate, encode, decode.
    if (st.dtype == DType::FP8Scaled || st.dtype == DType::INT4Grouped) {
        std::vector<uint8_t> p, s;
        releaseBytes(st, p, s);
        if (st.dtype == DType::FP8Scaled) {
            std::vector<float> f(s.size() / 4);
            scalesToF32(DType::F32, s.data(), int64_t(f.size()), f.data());
            decodeFp8ScaledRows(st, p.data() + row0 * n, f.data(), row0, rows, out);
        } else {
            const int64_t sRow = blocksAlong(n, st.blockCols) * 2;
            for (int64_t r = 0; r < rows; ++r)
                decodeInt4GroupedRow(p.data() + (row0 + r) * n / 2, s.data() + (row0 + r) * sRow, n, st.blockCols, out + r * n);
        }
        return;
    }
    const uint8_t fmt = nativeFormatOf(t.info.dtype);
    std::vector<uint8_t> payload(static_cast<size_t>(format::nativePayloadBytes(fmt, st.rows(), n)));
    std::vector<uint8_t> scales(static_cast<size_t>(format::nativeScaleBytes(fmt, st.rows(), n)));
    readStored(st, payload.data(), scales.data());
    switch (t.info.dtype) {
    case DType::MXFP4: {
        const int64_t pRow = n / 2, sRow = n / int64_t(kMxfp4Block);
        decodeMxfp4Matrix(payload.data() + row0 * pRow, scales.data() + row0 * sRow, static_cast<size_t>(rows),
                          static_cast<size_t>(n), out, st.name);
        return;
    }
    case DType::FP8B128: decodeFp8Rows(payload.data() + row0 * n, scales.data(), n, row0, rows, out); return;
    default:
        for (int64_t r = 0; r < rows; ++r)
            decodeInt4G32Row(payload.data() + (row0 + r) * n / 2, scales.data() + (row0 + r) * (n / format::kInt4Group) * 2, n,
                             out + r * n);
    }
}

void TinySource::putQuantizationConfig(ojson &c) const {
    const TinyDims &d = m_dims;
    if (d.arch == "gpt-oss") { // the release's own description: everything but the experts stays BF16
        c["quantization_config"] = {{"modules_to_not_convert", {"model.layers.*.self_attn", "model.layers.*.mlp.router",
                                                                "model.embed_tokens", "lm_head"}},
                                    {"quant_method", "mxfp4"}};
        return;
    }
    if (d.expertDType == DType::MXFP4) {
        // compressed-tensors' description of the MXFP4 experts (the converter goes by the
        // `_packed`/`_scale` tensor names; this is for other readers of the checkpoint).
        c["quantization_config"] = {
            {"quant_method", "compressed-tensors"},
            {"format", "mxfp4-pack-quantized"},
            {"config_groups",
             {{"group_0",
               {{"targets", {"re:.*block_sparse_moe\\.experts\\..*"}},
                {"weights",
                 {{"num_bits", 4}, {"type", "float"}, {"strategy", "group"}, {"group_size", 32}, {"symmetric", true},
                  {"scale_dtype", "uint8"}}}}}}},
            {"ignore", {"lm_head", "re:.*vision_tower.*", "re:.*mm_projector.*"}}};
    } else if (d.expertDType == DType::FP8B128 || m_options.experts == TinyExperts::FP8B64) {
        // DeepSeek-V3's and Kimi K2's description: e4m3 weights, one f32 per 128x128 block
        // (or per 64x64 block: the same description with another block size).
        const int b = d.expertDType == DType::FP8B128 ? 128 : 64;
        c["quantization_config"] = {{"activation_scheme", "dynamic"},
                                    {"fmt", "e4m3"},
                                    {"quant_method", "fp8"},
                                    {"weight_block_size", {b, b}}};
    } else if (d.expertDType == DType::FP8Scaled) {
        // compressed-tensors' float-quantized FP8 (the FP8-dynamic releases): static
        // weight scales per row ("channel") or per tensor, activations per token at run time.
        const char *strategy = m_options.experts == TinyExperts::FP8Channel ? "channel" : "tensor";
        c["quantization_config"] = {
            {"config_groups",
             {{"group_0",
               {{"input_activations",
                 {{"dynamic", true}, {"num_bits", 8}, {"strategy", "token"}, {"symmetric", true}, {"type", "float"}}},
                {"targets", {"re:.*block_sparse_moe\\.experts\\..*"}},
                {"weights",
                 {{"dynamic", false}, {"num_bits", 8}, {"observer", "minmax"}, {"strategy", strategy}, {"symmetric", true},
                  {"type", "float"}}}}}}},
            {"format", "float-quantized"},
            {"ignore", {"lm_head"}},
            {"quant_method", "compressed-tensors"},
            {"quantization_status", "compressed"}};
    } else if (d.expertDType == DType::INT4G32 || d.expertDType == DType::INT4Grouped) {
        // K2-Thinking's: compressed-tensors pack-quantized, symmetric int4 in groups of 32,
        // on the routed experts only.
        c["quantization_config"] = {
            {"config_groups",
             {{"group_0",
               {{"input_activations", nullptr},
                {"output_activations", nullptr},
                {"targets", {"re:.*block_sparse_moe\\.experts\\..*"}},
                {"weights",
                 {{"actorder", nullptr}, {"block_structure", nullptr}, {"dynamic", false},
                  {"group_size", d.expertDType == DType::INT4G32 ? 32 : 128},
                  {"num_bits", 4}, {"observer", "minmax"}, {"observer_kwargs", ojson::object()}, {"strategy", "group"},
                  {"symmetric", true}, {"type", "int"}}}}}}},
            {"format", "pack-quantized"},
            {"ignore", {"lm_head", "re:.*vision_tower.*", "re:.*mm_projector.*"}},
            {"kv_cache_scheme", nullptr},
            {"quant_method", "compressed-tensors"},
            {"quantization_status", "compressed"}};
    }
}

} // namespace waste::convert
