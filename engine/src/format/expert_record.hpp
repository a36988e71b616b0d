// The 48-byte header of an expert record in experts-L{n}.bin, and the checks every
// read must pass before a byte of the payload is used.
#pragma once

#include <cstdint>
#include <string>

namespace waste::format {

inline constexpr uint32_t kExpertMagic = 0x50584557u; // "WEXP"
inline constexpr int kRecordHeaderBytes = 48;
inline constexpr int kIndexBlockRows = 64;

enum : uint8_t { kFmtVQ3R = 4, kFmtVQ2R = 5, kFmtVQ4P = 8 };

struct ExpertHeader {
    uint32_t magic = 0;
    uint16_t layer = 0, expertId = 0;
    uint8_t fmt = 0, flags = 0;
    uint16_t codebookId = 0, lowrankId = 0;
    uint32_t rec4kBlocks = 0;
    uint32_t gateOff = 0, upOff = 0, downOff = 0, scaleOff = 0;
    uint32_t crc32 = 0;
};

ExpertHeader parseExpertHeader(const uint8_t *record);

// What a record of one bank must look like.
struct RecordShape {
    int layer = 0;
    int64_t recordBytes = 0;
    int inter = 0;   // Im: rows of gate/up, inputs of down
    int width = 0;   // Hd (or the latent width): inputs of gate/up, rows of down
    int stages = 3;
    int indexBits = 8;
    int codebooks = 0; // number of codebooks in codebooks.bin
};

// Payload bytes of one matrix's indices ([M, N] blocked by 64 rows).
int64_t indexBytes(int64_t rows, int64_t cols, int stages, int indexBits);

// Validates the header of the record of `expert` (read from `file`) and returns it.
// Throws Error(Format) with a one-line message naming the file and record.
ExpertHeader checkExpertRecord(const uint8_t *record, const RecordShape &shape, int expert, const std::string &file,
                               bool verifyCrc);

} // namespace waste::format
