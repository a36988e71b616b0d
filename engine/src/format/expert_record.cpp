#include "format/expert_record.hpp"

#include "format/crc32.hpp"
#include "format/bytes.hpp"
#include "waste/waste.hpp"

#include <cstring>
#include <limits>

namespace waste::format {

ExpertHeader parseExpertHeader(const uint8_t *p)
{
    ExpertHeader h;
    h.magic = loadU32(p);
    h.layer = loadU16(p + 4);
    h.expertId = loadU16(p + 6);
    h.fmt = p[8];
    h.flags = p[9];
    h.codebookId = loadU16(p + 10);
    h.lowrankId = loadU16(p + 12);
    h.rec4kBlocks = loadU32(p + 16);
    h.gateOff = loadU32(p + 20);
    h.upOff = loadU32(p + 24);
    h.downOff = loadU32(p + 28);
    h.scaleOff = loadU32(p + 32);
    h.crc32 = loadU32(p + 36);
    return h;
}

int64_t indexBytes(int64_t rows, int64_t cols, int stages, int indexBits)
{
    const int64_t blocks = (rows + kIndexBlockRows - 1) / kIndexBlockRows;
    const int64_t perRow = indexBits == 6 ? 3 : stages; // VQ4P packs four 6-bit indices in 3 bytes
    return blocks * (cols / kVecDim) * kIndexBlockRows * perRow;
}

RecordLayout recordLayout(int64_t inter, int64_t width, int stages, int indexBits)
{
    const int64_t gateBytes = indexBytes(inter, width, stages, indexBits);
    const int64_t downBytes = indexBytes(width, inter, stages, indexBits);
    RecordLayout l;
    const int64_t scaleOff = kRecordHeaderBytes + 2 * gateBytes + downBytes;
    l.usedBytes = scaleOff + rowScaleBytes(inter, width);
    l.recordBytes = (l.usedBytes + kRecordPageBytes - 1) / kRecordPageBytes * kRecordPageBytes;
    if (l.recordBytes > std::numeric_limits<uint32_t>::max() / 2)
        throw Error(ErrorCode::Unsupported, "expert record of " + std::to_string(l.recordBytes) + " bytes is too large for format v0");
    l.gateOff = kRecordHeaderBytes;
    l.upOff = static_cast<uint32_t>(kRecordHeaderBytes + gateBytes);
    l.downOff = static_cast<uint32_t>(kRecordHeaderBytes + 2 * gateBytes);
    l.scaleOff = static_cast<uint32_t>(scaleOff);
    return l;
}

uint32_t recordPayloadCrc(const uint8_t *record, int64_t usedBytes)
{
    return crc32(record + kRecordHeaderBytes, static_cast<size_t>(usedBytes - kRecordHeaderBytes));
}

void storeExpertHeader(const ExpertHeader &h, uint8_t *p)
{
    std::memset(p, 0, kRecordHeaderBytes);
    storeU32(p, h.magic);
    storeU16(p + 4, h.layer);
    storeU16(p + 6, h.expertId);
    storeU8(p + 8, h.fmt);
    storeU8(p + 9, h.flags);
    storeU16(p + 10, h.codebookId);
    storeU16(p + 12, h.lowrankId);
    storeU32(p + 16, h.rec4kBlocks);
    storeU32(p + 20, h.gateOff);
    storeU32(p + 24, h.upOff);
    storeU32(p + 28, h.downOff);
    storeU32(p + 32, h.scaleOff);
    storeU32(p + 36, h.crc32);
}

void recordDamaged(const RecordShape &s, int expert, const std::string &file, const std::string &what)
{
    throw Error(ErrorCode::Format, file + ": record of expert " + std::to_string(expert) + " (layer " + std::to_string(s.layer) +
                                       "): " + what + "; the bank is damaged, re-convert or re-download it");
}

ExpertHeader parseBankHeader(const uint8_t *record, const RecordShape &s, int expert, const std::string &file)
{
    const ExpertHeader h = parseExpertHeader(record);
    auto bad = [&](const std::string &what) { recordDamaged(s, expert, file, what); };
    if (h.magic != kExpertMagic)
        bad("bad magic");
    if (h.layer != s.layer)
        bad("header says layer " + std::to_string(h.layer));
    if (h.expertId != expert)
        bad("header says expert " + std::to_string(h.expertId));
    if (int64_t(h.rec4kBlocks) * kRecordPageBytes != s.recordBytes)
        bad("record size " + std::to_string(int64_t(h.rec4kBlocks) * kRecordPageBytes) + " differs from the bank stride " +
            std::to_string(s.recordBytes));
    return h;
}

ExpertHeader checkExpertRecord(const uint8_t *record, const RecordShape &s, int expert, const std::string &file,
                               bool verifyCrc)
{
    const ExpertHeader h = parseBankHeader(record, s, expert, file);
    auto bad = [&](const std::string &what) { recordDamaged(s, expert, file, what); };
    const bool fmtOk = s.indexBits == 6 ? h.fmt == kFmtVQ4P : (h.fmt == kFmtVQ3R || h.fmt == kFmtVQ2R);
    if (!fmtOk)
        bad("format id " + std::to_string(h.fmt) + " disagrees with the manifest's index_bits " + std::to_string(s.indexBits));
    if (h.lowrankId != 0)
        bad("lowrank_id must be 0");
    if (int64_t(h.codebookId) + 3 * int64_t(s.stages) > s.codebooks)
        bad("codebook range " + std::to_string(h.codebookId) + "+" + std::to_string(3 * s.stages) + " exceeds the " +
            std::to_string(s.codebooks) + " codebooks");
    if (h.gateOff != kRecordHeaderBytes || !(h.upOff > h.gateOff) || !(h.downOff > h.upOff) || !(h.scaleOff > h.downOff))
        bad("matrix offsets are out of order");
    const int64_t scaleEnd = int64_t(h.scaleOff) + rowScaleBytes(s.inter, s.width);
    if (scaleEnd > s.recordBytes)
        bad("row scales run past the record end");
    // Memory safety beyond WASTE's checks: every index payload must fit before the next part.
    if (int64_t(h.gateOff) + indexBytes(s.inter, s.width, s.stages, s.indexBits) > h.upOff ||
        int64_t(h.upOff) + indexBytes(s.inter, s.width, s.stages, s.indexBits) > h.downOff ||
        int64_t(h.downOff) + indexBytes(s.width, s.inter, s.stages, s.indexBits) > h.scaleOff)
        bad("an index payload overlaps the next matrix");
    if (verifyCrc) {
        if (recordPayloadCrc(record, scaleEnd) != h.crc32)
            bad("checksum mismatch");
    }
    return h;
}

} // namespace waste::format
