// An expert record of experts-L{n}.bin (waste-engine.md §2.4): the 48-byte header,
// the byte layout of its parts, the checks every read must pass before a byte of the
// payload is used, and the writer side the converter builds records with.
#pragma once

#include <cstdint>
#include <string>

namespace waste::format {

inline constexpr uint32_t kExpertMagic = 0x50584557u; // "WEXP"
inline constexpr int kRecordHeaderBytes = 48;
inline constexpr int kIndexBlockRows = 64;
inline constexpr int kVecDim = 8;           // weights per VQ vector
inline constexpr int kRecordPageBytes = 4096; // records are whole pages (rec_4k_blocks)

enum : uint8_t { kFmtVQ3R = 4, kFmtVQ2R = 5, kFmtVQ4P = 8 };

// VQ4P: a row's four 6-bit indices packed into 3 bytes, the first stage's in the low bits.
inline void unpackVq4p(const uint8_t *p, unsigned idx[4])
{
    idx[0] = p[0] & 63u;
    idx[1] = ((p[0] >> 6) | (unsigned(p[1]) << 2)) & 63u;
    idx[2] = ((p[1] >> 4) | (unsigned(p[2]) << 4)) & 63u;
    idx[3] = unsigned(p[2]) >> 2;
}

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
    uint8_t native = 0; // a native record format id (native_record.hpp); 0: VQ records
};

// Payload bytes of one matrix's indices ([M, N] blocked by 64 rows).
int64_t indexBytes(int64_t rows, int64_t cols, int stages, int indexBits);

// Bytes of the f16 row scales of gate, up and down (inter + inter + width rows).
inline int64_t rowScaleBytes(int64_t inter, int64_t width) { return 2 * (2 * inter + width); }

// Where each part of a record lies: [header][gate][up][down][scales][zero pad to a page].
struct RecordLayout {
    uint32_t gateOff = 0, upOff = 0, downOff = 0, scaleOff = 0;
    int64_t usedBytes = 0;   // header + indices + scales: the crc covers [header end, usedBytes)
    int64_t recordBytes = 0; // usedBytes rounded up to whole pages
};

// Throws Error(Unsupported) when a record would not fit the header's 32-bit fields.
RecordLayout recordLayout(int64_t inter, int64_t width, int stages, int indexBits);

// crc32 of the payload the header's crc field covers.
uint32_t recordPayloadCrc(const uint8_t *record, int64_t usedBytes);

// Writes the 48 header bytes (reserved bytes zero).
void storeExpertHeader(const ExpertHeader &h, uint8_t *record);

// Validates the header of the record of `expert` (read from `file`) and returns it.
// Throws Error(Format) with a one-line message naming the file and record.
ExpertHeader checkExpertRecord(const uint8_t *record, const RecordShape &shape, int expert, const std::string &file,
                               bool verifyCrc);

// What the record checks of every format share: the header, parsed, with its magic, layer,
// expert id and size checked against the bank; and the error a failed check throws
// (Error(Format) naming the file, the record and what to do).
ExpertHeader parseBankHeader(const uint8_t *record, const RecordShape &shape, int expert, const std::string &file);
[[noreturn]] void recordDamaged(const RecordShape &shape, int expert, const std::string &file, const std::string &what);

} // namespace waste::format
