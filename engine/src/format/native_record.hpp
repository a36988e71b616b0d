// Expert records that keep a release's own encoding ("native" experts): MXFP4 (K3,
// gpt-oss), FP8 e4m3 with 128x128 block scales (DeepSeek-V3, Kimi K2), INT4 with one bf16
// scale per 32 (compressed-tensors pack-quantized: K2-Thinking, K2.5) and plain BF16.
//
// A native record keeps the 48-byte header of a VQ record (expert_record.hpp) and WASTE's
// one-record-one-read invariant, but its body holds each matrix's tensors exactly as the
// release stores them, so a record can be compared with the source shard byte for byte:
//
//   [header 48][zero to 64][gate payload][up payload][down payload][gate scales][up scales]
//   [down scales][zero to a whole 4 KiB page]      (every part starts on a 64-byte boundary)
//
// gate/up are [inter, width], down is [width, inter] (rows = outputs, like the release).
// The header's gate_off/up_off/down_off point at the payloads, scale_off at the gate
// scales; the other scale offsets follow from the layout, and the reader checks every
// offset against it. codebook_id is 0 (no codebooks). The format ids start at 32, far from
// the reference engine's 0..8, so its record check refuses these records instead of
// reading them as VQ indices; its loader also fails first on the missing codebooks.bin.
#pragma once

#include "format/expert_record.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace waste::format {

enum : uint8_t {
    kFmtMXFP4 = 32,   // e2m1 nibbles (low nibble first) + one e8m0 scale byte per 32 inputs
    kFmtFP8B128 = 33, // e4m3 bytes + one f32 multiplier per 128x128 block ("weight_scale_inv")
    kFmtINT4G32 = 34, // int4 as (v+8) nibbles packed 8 per little-endian u32, lowest first + one bf16 scale per 32
    kFmtBF16 = 35,    // bf16, no scales
};

inline constexpr int kNativePartAlign = 64;
inline constexpr int kMxfp4Group = 32;
inline constexpr int kInt4Group = 32;
inline constexpr int kFp8Block = 128;

bool isNativeFmt(uint8_t fmt);
// "MXFP4", "FP8B128", "INT4G32", "BF16" (the manifest's expert_quant.fmt and `waste info`).
const char *nativeFmtName(uint8_t fmt);
std::optional<uint8_t> nativeFmtFromName(std::string_view name);

// Bytes of one [rows, cols] matrix's payload and of its scales, as the release stores them.
// Throws Error(Unsupported) when cols does not suit the format (a multiple of 32 for MXFP4
// and INT4G32, even for the others).
int64_t nativePayloadBytes(uint8_t fmt, int64_t rows, int64_t cols);
int64_t nativeScaleBytes(uint8_t fmt, int64_t rows, int64_t cols);
// Payload + scale bits per weight of one matrix (for the manifest and the planner).
double nativeBitsPerWeight(uint8_t fmt, int64_t rows, int64_t cols);

// Where each part lies. Index 0 gate, 1 up, 2 down.
struct NativeLayout {
    uint32_t payloadOff[3] = {};
    uint32_t scaleOff[3] = {};
    int64_t payloadBytes[3] = {};
    int64_t scaleBytes[3] = {};
    int64_t usedBytes = 0;   // the crc covers [header end, usedBytes)
    int64_t recordBytes = 0; // usedBytes rounded up to whole pages
};

NativeLayout nativeRecordLayout(uint8_t fmt, int64_t inter, int64_t width);

// The header a writer stores for this layout (crc left 0: compute it over the filled body).
ExpertHeader nativeHeader(uint8_t fmt, const NativeLayout &l, int layer, int expert);

// The layout of a bank's records (shape.native experts of shape.inter x shape.width),
// computed once where the bank opens; throws Error(Format) naming `file` when the bank's
// stride does not fit it.
NativeLayout nativeBankLayout(const RecordShape &shape, const std::string &file);

// Validates a native record's header against the bank's shape and its layout `l`
// (nativeBankLayout); throws Error(Format) naming the file and the record, like
// checkExpertRecord.
ExpertHeader checkNativeRecord(const uint8_t *record, const NativeLayout &l, const RecordShape &shape, int expert,
                               const std::string &file, bool verifyCrc);

} // namespace waste::format
