// One routed expert as stored in experts-L{n}.bin (waste-engine.md §2.4): a 48-byte
// header, the blocked VQ indices of gate, up and down, their f16 row scales, zero
// padding to a whole number of 4 KiB pages. crc32 covers [48, end of scales).
#pragma once

#include "convert/vq.hpp"

#include <cstdint>
#include <vector>

namespace waste::convert {

inline constexpr uint32_t kExpertMagic = 0x50584557u;   // "WEXP"
inline constexpr uint32_t kCodebookMagic = 0x4B424357u; // "WCBK"
inline constexpr int kExpertHeaderBytes = 48;
inline constexpr int64_t kPage = 4096;
inline constexpr uint8_t kFmtVQ3R = 4;

struct ExpertShape {
    int64_t inter = 0;  // moe_intermediate_size: rows of gate/up, columns of down
    int64_t hidden = 0; // expert input width: columns of gate/up, rows of down
};

struct ExpertLayout {
    uint32_t gateOff = 0, upOff = 0, downOff = 0, scaleOff = 0;
    int64_t usedBytes = 0;   // header + indices + scales
    int64_t recordBytes = 0; // rounded up to 4 KiB
};

ExpertLayout expertLayout(const ExpertShape &shape, const VqGeometry &geom);

// books: 3 kinds (gate, up, down) x stages. gate/up are [inter, hidden], down [hidden, inter].
void buildExpertRecord(int layer, int expertId, int codebookBase, const ExpertShape &shape, const VqGeometry &geom,
                       const float *gate, const float *up, const float *down,
                       const std::vector<std::vector<Codebook>> &books, uint8_t *record);

// 16-byte header + entries*dim f16, as in codebooks.bin.
int64_t codebookRecordBytes(const VqGeometry &geom);
void writeCodebookRecord(int id, const Codebook &book, const VqGeometry &geom, uint8_t *out);

} // namespace waste::convert
