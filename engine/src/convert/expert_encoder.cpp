#include "convert/expert_encoder.hpp"

#include "format/codebooks.hpp"

#include <cstring>

namespace waste::convert {

format::RecordLayout expertLayout(const ExpertShape &s, const VqGeometry &g) {
    return format::recordLayout(s.inter, s.hidden, g.stages, g.indexBits);
}

void buildExpertRecord(int layer, int expertId, int codebookBase, const ExpertShape &s, const VqGeometry &g,
                       const float *gate, const float *up, const float *down,
                       const std::vector<std::vector<Codebook>> &books, uint8_t *rec, VqScratch *scratch) {
    const format::RecordLayout l = expertLayout(s, g);
    std::memset(rec, 0, static_cast<size_t>(l.recordBytes));
    auto *scales = reinterpret_cast<uint16_t *>(rec + l.scaleOff); // scaleOff is even: 48 + index bytes (multiples of 64)
    vqEncodeMatrix(gate, s.inter, s.hidden, books[0], g, rec + l.gateOff, scales, scratch);
    vqEncodeMatrix(up, s.inter, s.hidden, books[1], g, rec + l.upOff, scales + s.inter, scratch);
    vqEncodeMatrix(down, s.hidden, s.inter, books[2], g, rec + l.downOff, scales + 2 * s.inter, scratch);
    format::ExpertHeader h;
    h.magic = format::kExpertMagic;
    h.layer = static_cast<uint16_t>(layer);
    h.expertId = static_cast<uint16_t>(expertId);
    h.fmt = format::kFmtVQ3R;
    h.codebookId = static_cast<uint16_t>(codebookBase);
    h.rec4kBlocks = static_cast<uint32_t>(l.recordBytes / format::kRecordPageBytes);
    h.gateOff = l.gateOff;
    h.upOff = l.upOff;
    h.downOff = l.downOff;
    h.scaleOff = l.scaleOff;
    h.crc32 = format::recordPayloadCrc(rec, l.usedBytes);
    format::storeExpertHeader(h, rec);
}

void writeCodebookRecord(int id, const Codebook &book, const VqGeometry &g, uint8_t *out) {
    format::storeCodebookHeader(out, id, format::kFmtVQ3R, g.dim, g.entries);
    std::memcpy(out + format::kCodebookHeaderBytes, book.half.data(), book.half.size() * 2);
}

} // namespace waste::convert
