#include "convert/expert_record.hpp"

#include "convert/crc32.hpp"

#include <waste/waste.hpp>

#include <cstring>
#include <limits>

namespace waste::convert {

namespace {
template <typename T> void put(uint8_t *p, size_t off, T v) { std::memcpy(p + off, &v, sizeof(T)); } // little-endian host
} // namespace

ExpertLayout expertLayout(const ExpertShape &s, const VqGeometry &g) {
    ExpertLayout l;
    const int64_t gateBytes = vqIndexBytes(s.inter, s.hidden, g);
    const int64_t downBytes = vqIndexBytes(s.hidden, s.inter, g);
    const int64_t scaleOff = kExpertHeaderBytes + 2 * gateBytes + downBytes;
    l.usedBytes = scaleOff + 2 * (2 * s.inter + s.hidden);
    l.recordBytes = (l.usedBytes + kPage - 1) / kPage * kPage;
    if (l.recordBytes > std::numeric_limits<uint32_t>::max() / 2)
        throw Error(ErrorCode::Unsupported, "expert record of " + std::to_string(l.recordBytes) + " bytes is too large for format v0");
    l.gateOff = kExpertHeaderBytes;
    l.upOff = static_cast<uint32_t>(kExpertHeaderBytes + gateBytes);
    l.downOff = static_cast<uint32_t>(kExpertHeaderBytes + 2 * gateBytes);
    l.scaleOff = static_cast<uint32_t>(scaleOff);
    return l;
}

void buildExpertRecord(int layer, int expertId, int codebookBase, const ExpertShape &s, const VqGeometry &g,
                       const float *gate, const float *up, const float *down,
                       const std::vector<std::vector<Codebook>> &books, uint8_t *rec) {
    const ExpertLayout l = expertLayout(s, g);
    std::memset(rec, 0, static_cast<size_t>(l.recordBytes));
    auto *scales = reinterpret_cast<uint16_t *>(rec + l.scaleOff); // scaleOff is even: 48 + index bytes (multiples of 64)
    vqEncodeMatrix(gate, s.inter, s.hidden, books[0], g, rec + l.gateOff, scales);
    vqEncodeMatrix(up, s.inter, s.hidden, books[1], g, rec + l.upOff, scales + s.inter);
    vqEncodeMatrix(down, s.hidden, s.inter, books[2], g, rec + l.downOff, scales + 2 * s.inter);
    put<uint32_t>(rec, 0, kExpertMagic);
    put<uint16_t>(rec, 4, static_cast<uint16_t>(layer));
    put<uint16_t>(rec, 6, static_cast<uint16_t>(expertId));
    put<uint8_t>(rec, 8, kFmtVQ3R);
    put<uint8_t>(rec, 9, 0);
    put<uint16_t>(rec, 10, static_cast<uint16_t>(codebookBase));
    put<uint16_t>(rec, 12, 0); // lowrank_id
    put<uint16_t>(rec, 14, 0);
    put<uint32_t>(rec, 16, static_cast<uint32_t>(l.recordBytes / kPage));
    put<uint32_t>(rec, 20, l.gateOff);
    put<uint32_t>(rec, 24, l.upOff);
    put<uint32_t>(rec, 28, l.downOff);
    put<uint32_t>(rec, 32, l.scaleOff);
    put<uint32_t>(rec, 36, crc32(rec + kExpertHeaderBytes, static_cast<size_t>(l.usedBytes - kExpertHeaderBytes)));
}

int64_t codebookRecordBytes(const VqGeometry &g) { return 16 + static_cast<int64_t>(g.entries) * g.dim * 2; }

void writeCodebookRecord(int id, const Codebook &book, const VqGeometry &g, uint8_t *out) {
    std::memset(out, 0, 16);
    put<uint32_t>(out, 0, kCodebookMagic);
    put<uint16_t>(out, 4, static_cast<uint16_t>(id));
    put<uint8_t>(out, 6, kFmtVQ3R);
    put<uint8_t>(out, 7, static_cast<uint8_t>(g.dim));
    put<uint32_t>(out, 8, static_cast<uint32_t>(g.entries));
    std::memcpy(out + 16, book.half.data(), book.half.size() * 2);
}

} // namespace waste::convert
