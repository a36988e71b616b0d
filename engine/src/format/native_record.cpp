#include "format/native_record.hpp"

#include "format/crc32.hpp"
#include "waste/waste.hpp"

#include <limits>

namespace waste::format {
namespace {

int64_t alignUp(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

void needCols(uint8_t fmt, int64_t cols, int64_t multiple)
{
    if (cols <= 0 || cols % multiple != 0)
        throw Error(ErrorCode::Unsupported, std::string(nativeFmtName(fmt)) + " experts need a multiple of " +
                                                std::to_string(multiple) + " inputs per row; this matrix has " +
                                                std::to_string(cols));
}

} // namespace

bool isNativeFmt(uint8_t fmt) { return fmt >= kFmtMXFP4 && fmt <= kFmtBF16; }

const char *nativeFmtName(uint8_t fmt)
{
    switch (fmt) {
    case kFmtMXFP4: return "MXFP4";
    case kFmtFP8B128: return "FP8B128";
    case kFmtINT4G32: return "INT4G32";
    case kFmtBF16: return "BF16";
    }
    return "unknown";
}

std::optional<uint8_t> nativeFmtFromName(std::string_view name)
{
    for (uint8_t f = kFmtMXFP4; f <= kFmtBF16; ++f)
        if (name == nativeFmtName(f))
            return f;
    return std::nullopt;
}

int64_t nativePayloadBytes(uint8_t fmt, int64_t rows, int64_t cols)
{
    switch (fmt) {
    case kFmtMXFP4: needCols(fmt, cols, kMxfp4Group); return rows * cols / 2;
    case kFmtINT4G32: needCols(fmt, cols, kInt4Group); return rows * cols / 2;
    case kFmtFP8B128: needCols(fmt, cols, 2); return rows * cols;
    case kFmtBF16: needCols(fmt, cols, 2); return rows * cols * 2;
    }
    throw Error(ErrorCode::Unsupported, "expert format id " + std::to_string(fmt) + " is not a native format");
}

int64_t nativeScaleBytes(uint8_t fmt, int64_t rows, int64_t cols)
{
    switch (fmt) {
    case kFmtMXFP4: return rows * (cols / kMxfp4Group);
    case kFmtINT4G32: return rows * (cols / kInt4Group) * 2;
    case kFmtFP8B128: return ((rows + kFp8Block - 1) / kFp8Block) * ((cols + kFp8Block - 1) / kFp8Block) * 4;
    case kFmtBF16: return 0;
    }
    throw Error(ErrorCode::Unsupported, "expert format id " + std::to_string(fmt) + " is not a native format");
}

double nativeBitsPerWeight(uint8_t fmt, int64_t rows, int64_t cols)
{
    const double bytes = double(nativePayloadBytes(fmt, rows, cols) + nativeScaleBytes(fmt, rows, cols));
    return 8.0 * bytes / (double(rows) * double(cols));
}

NativeLayout nativeRecordLayout(uint8_t fmt, int64_t inter, int64_t width)
{
    NativeLayout l;
    const int64_t rows[3] = {inter, inter, width};
    const int64_t cols[3] = {width, width, inter};
    int64_t at = alignUp(kRecordHeaderBytes, kNativePartAlign);
    int64_t off[6];
    for (int k = 0; k < 3; ++k) {
        l.payloadBytes[k] = nativePayloadBytes(fmt, rows[k], cols[k]);
        l.scaleBytes[k] = nativeScaleBytes(fmt, rows[k], cols[k]);
    }
    for (int k = 0; k < 3; ++k) {
        off[k] = at;
        at = alignUp(at + l.payloadBytes[k], kNativePartAlign);
    }
    int64_t end = at;
    for (int k = 0; k < 3; ++k) {
        off[3 + k] = at;
        end = at + l.scaleBytes[k];
        at = alignUp(end, kNativePartAlign);
    }
    l.usedBytes = end;
    l.recordBytes = alignUp(l.usedBytes, kRecordPageBytes);
    if (l.recordBytes > std::numeric_limits<uint32_t>::max() / 2)
        throw Error(ErrorCode::Unsupported,
                    "expert record of " + std::to_string(l.recordBytes) + " bytes is too large for the container format");
    for (int k = 0; k < 3; ++k) {
        l.payloadOff[k] = static_cast<uint32_t>(off[k]);
        l.scaleOff[k] = static_cast<uint32_t>(off[3 + k]);
    }
    return l;
}

ExpertHeader nativeHeader(uint8_t fmt, const NativeLayout &l, int layer, int expert)
{
    ExpertHeader h;
    h.magic = kExpertMagic;
    h.layer = static_cast<uint16_t>(layer);
    h.expertId = static_cast<uint16_t>(expert);
    h.fmt = fmt;
    h.rec4kBlocks = static_cast<uint32_t>(l.recordBytes / kRecordPageBytes);
    h.gateOff = l.payloadOff[0];
    h.upOff = l.payloadOff[1];
    h.downOff = l.payloadOff[2];
    h.scaleOff = l.scaleOff[0];
    return h;
}

NativeLayout nativeBankLayout(const RecordShape &s, const std::string &file)
{
    // The manifest's shape decides the layout; every record header must restate it exactly.
    const NativeLayout l = nativeRecordLayout(s.native, s.inter, s.width);
    if (l.recordBytes != s.recordBytes)
        throw Error(ErrorCode::Format, file + ": the manifest gives layer " + std::to_string(s.layer) + " records of " +
                                           std::to_string(s.recordBytes) + " bytes, but " + nativeFmtName(s.native) +
                                           " experts of " + std::to_string(s.inter) + "x" + std::to_string(s.width) +
                                           " take " + std::to_string(l.recordBytes) +
                                           "; the container is damaged, re-convert or re-download it");
    return l;
}

ExpertHeader checkNativeRecord(const uint8_t *record, const NativeLayout &l, const RecordShape &s, int expert,
                               const std::string &file, bool verifyCrc)
{
    const uint8_t fmt = s.native;
    const ExpertHeader h = parseBankHeader(record, s, expert, file);
    auto bad = [&](const std::string &what) { recordDamaged(s, expert, file, what); };
    if (h.fmt != fmt)
        bad("format id " + std::to_string(h.fmt) + " disagrees with the manifest's " + nativeFmtName(fmt));
    if (h.lowrankId != 0 || h.codebookId != 0)
        bad("codebook_id and lowrank_id must be 0 in a native record");
    if (h.gateOff != l.payloadOff[0] || h.upOff != l.payloadOff[1] || h.downOff != l.payloadOff[2] ||
        h.scaleOff != l.scaleOff[0])
        bad("matrix offsets disagree with the " + std::string(nativeFmtName(fmt)) + " layout");
    if (verifyCrc && recordPayloadCrc(record, l.usedBytes) != h.crc32)
        bad("checksum mismatch");
    return h;
}

} // namespace waste::format
