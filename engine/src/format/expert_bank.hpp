// One experts-L{n}.bin bank: fixed-stride records, expert e at e * recordBytes.
#pragma once

#include "format/expert_record.hpp"
#include "format/file.hpp"
#include "format/manifest.hpp"

#include <cstdint>
#include <string>

namespace waste::format {

// The check every record read passes before use: checkNativeRecord for a bank of native
// records (shape.native), checkExpertRecord for VQ records.
ExpertHeader checkBankRecord(const uint8_t *record, const RecordShape &shape, int expert, const std::string &file,
                             bool verifyCrc);

class ExpertBank {
public:
    ExpertBank(const std::string &dir, const BankEntry &entry, const RecordShape &shape);

    const RecordShape &shape() const { return m_shape; }
    const File &file() const { return m_file; }
    int64_t recordBytes() const { return m_shape.recordBytes; }
    int experts() const { return m_experts; }

    // Reads record `expert` into dst (recordBytes) with one pread and checks its header.
    ExpertHeader read(int expert, uint8_t *dst, bool verifyCrc) const;

private:
    File m_file;
    RecordShape m_shape;
    int m_experts = 0;
};

} // namespace waste::format
