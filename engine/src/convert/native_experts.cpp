#include "convert/native_experts.hpp"

#include "convert/int4_groups.hpp"
#include "convert/parallel.hpp"
#include "convert/scaled_layouts.hpp"
#include "format/expert_record.hpp"
#include "format/native_record.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace waste::convert {

uint8_t nativeFormatOf(DType d) {
    switch (d) {
    case DType::MXFP4: return format::kFmtMXFP4;
    case DType::FP8B128: return format::kFmtFP8B128;
    case DType::INT4G32: return format::kFmtINT4G32;
    case DType::BF16: return format::kFmtBF16;
    default: return 0;
    }
}

uint8_t nativeFormatOf(const SourceTensor &t, std::string *why) {
    if (t.dtype == DType::FP8Scaled || t.dtype == DType::INT4Grouped) {
        std::string reason;
        const uint8_t fmt = exactNativeFormat(t, &reason);
        if (!fmt && why) *why = scaledLayoutText(t) + ": " + reason;
        return fmt;
    }
    const uint8_t fmt = nativeFormatOf(t.dtype);
    if (!fmt && why)
        *why = std::string(dtypeName(t.dtype)) + " (native records hold MXFP4, FP8 blocks, INT4 groups or BF16 as the release stores them)";
    return fmt;
}

bool ExpertChoice::native() const { return format::isNativeFmt(fmt); }

std::string ExpertChoice::name() const { return native() ? format::nativeFmtName(fmt) : "VQ3R"; }

ExpertChoice chooseExperts(const ModelSource &src, const Layout &layout, ExpertEncoding e) {
    const Unit *moe = nullptr;
    for (const Unit &u : layout.units)
        if (!u.experts.empty()) {
            moe = &u;
            break;
        }
    if (!moe) return {format::kFmtVQ3R, false};
    const SourceTensor t = src.info(moe->experts[0].name[0]);
    std::string why;
    const uint8_t own = nativeFormatOf(t, &why);
    switch (e) {
    case ExpertEncoding::VQ3R: return {format::kFmtVQ3R, false};
    case ExpertEncoding::Q4: return {format::kFmtINT4G32, true};
    case ExpertEncoding::Auto: return (own && own != format::kFmtBF16) ? ExpertChoice{own, false} : ExpertChoice{format::kFmtVQ3R, false};
    case ExpertEncoding::Native:
        if (!own)
            throw Error(ErrorCode::Unsupported, "--experts native keeps the release's expert values exactly, but '" + t.name + "' is " +
                                                    why + "; use --experts q4 or vq3r");
        return {own, false};
    }
    return {format::kFmtVQ3R, false};
}

namespace {

// Zeroes what no part of the record fills (the header's padding, the gaps that align each
// part, the tail to the page), so the parts are written once: a memset of the whole record
// first was a second pass over every byte of a repack.
void zeroGaps(const format::NativeLayout &l, uint8_t *rec) {
    std::vector<std::pair<int64_t, int64_t>> parts; // [begin, end) of every part, header first
    parts.emplace_back(0, 0);
    for (int k = 0; k < 3; ++k) {
        parts.emplace_back(l.payloadOff[k], l.payloadOff[k] + l.payloadBytes[k]);
        if (l.scaleBytes[k] > 0) parts.emplace_back(l.scaleOff[k], l.scaleOff[k] + l.scaleBytes[k]);
    }
    parts.emplace_back(l.recordBytes, l.recordBytes);
    std::sort(parts.begin(), parts.end());
    for (size_t i = 1; i < parts.size(); ++i)
        if (parts[i].first > parts[i - 1].second)
            std::memset(rec + parts[i - 1].second, 0, static_cast<size_t>(parts[i].first - parts[i - 1].second));
}

// The logical tensor of one part of an expert, checked to have the record's shape and, for
// a repack, the layer's format (a mixed release cannot share one bank's format).
SourceTensor expertPart(const ModelSource &src, const ExpertNames &names, const ExpertChoice &choice, const ExpertShape &s, int kind) {
    SourceTensor t = src.info(names.name[kind]);
    const int64_t rows = kind < 2 ? s.inter : s.hidden;
    const int64_t cols = kind < 2 ? s.hidden : s.inter;
    if (t.shape != std::vector<int64_t>{rows, cols}) throw Error(ErrorCode::Format, t.name + " has an unexpected shape");
    std::string why;
    if (!choice.encode && nativeFormatOf(t, &why) != choice.fmt)
        throw Error(ErrorCode::Format, t.name + " is " + (why.empty() ? scaledLayoutText(t) : why) + " but the layer's experts are " +
                                           format::nativeFmtName(choice.fmt) + "; use --experts q4 or vq3r");
    return t;
}

void sealRecord(const ExpertChoice &choice, const format::NativeLayout &l, int layer, int expert, uint8_t *rec) {
    format::ExpertHeader h = format::nativeHeader(choice.fmt, l, layer, expert);
    h.crc32 = format::recordPayloadCrc(rec, l.usedBytes);
    format::storeExpertHeader(h, rec);
}

} // namespace

bool repackNativeBatch(const ModelSource &src, const std::vector<ExpertNames> &experts, const ExpertChoice &choice,
                       const ExpertShape &s, int layer, int first, int count, uint8_t *records, SpanReader &reader, int threads) {
    const format::NativeLayout l = format::nativeRecordLayout(choice.fmt, s.inter, s.hidden);
    std::vector<ByteRange> ranges;
    ranges.reserve(size_t(count) * 6);
    for (int i = 0; i < count; ++i) {
        uint8_t *rec = records + int64_t(i) * l.recordBytes;
        for (int kind = 0; kind < 3; ++kind) {
            const SourceTensor t = expertPart(src, experts[size_t(first + i)], choice, s, kind);
            const auto stored = src.storedRanges(t);
            if (!stored || stored->payload.bytes != l.payloadBytes[kind] || stored->scales.bytes != l.scaleBytes[kind]) return false;
            ranges.push_back({stored->payload.file, stored->payload.offset, stored->payload.bytes, rec + l.payloadOff[kind]});
            if (l.scaleBytes[kind] > 0)
                ranges.push_back({stored->scales.file, stored->scales.offset, stored->scales.bytes, rec + l.scaleOff[kind]});
        }
    }
    reader.read(std::move(ranges));
    parallelFor(size_t(count), threads, [&](size_t i) {
        uint8_t *rec = records + int64_t(i) * l.recordBytes;
        zeroGaps(l, rec);
        sealRecord(choice, l, layer, first + int(i), rec);
    });
    return true;
}

void buildNativeRecord(const ModelSource &src, const ExpertNames &names, const ExpertChoice &choice,
                       const ExpertShape &s, int layer, int expert, uint8_t *rec) {
    const format::NativeLayout l = format::nativeRecordLayout(choice.fmt, s.inter, s.hidden);
    zeroGaps(l, rec);
    for (int kind = 0; kind < 3; ++kind) {
        const SourceTensor t = expertPart(src, names, choice, s, kind);
        const int64_t rows = t.shape[0], cols = t.shape[1];
        uint8_t *payload = rec + l.payloadOff[kind], *scales = rec + l.scaleOff[kind];
        if (!choice.encode) { // a repack: the record holds the shard's bytes
            src.readStored(t, payload, scales);
            continue;
        }
        std::vector<float> w(static_cast<size_t>(rows * cols));
        src.readRows(t, 0, rows, w.data());
        const int64_t sRow = cols / format::kInt4Group * 2;
        for (int64_t r = 0; r < rows; ++r)
            encodeInt4G32Row(w.data() + r * cols, cols, payload + r * cols / 2, scales + r * sRow);
    }
    sealRecord(choice, l, layer, expert, rec);
}

} // namespace waste::convert
