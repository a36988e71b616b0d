// One experts-L{n}.bin bank: fixed-stride records, expert e at e * recordBytes.
#pragma once

#include "format/expert_record.hpp"
#include "format/file.hpp"
#include "format/manifest.hpp"
#include "format/native_record.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace waste::format {

class ExpertBank {
public:
    // Opens the bank; for native records (shape.native) it also fixes their layout here, once,
    // and refuses a stride that does not fit it.
    ExpertBank(const std::string &dir, const BankEntry &entry, const RecordShape &shape);

    const RecordShape &shape() const { return m_shape; }
    const File &file() const { return m_file; }
    int64_t recordBytes() const { return m_shape.recordBytes; }
    int experts() const { return m_experts; }

    // Reads record `expert` into dst (recordBytes) with one pread and checks its header.
    ExpertHeader read(int expert, uint8_t *dst, bool verifyCrc) const;

    // The check every record read passes before use: checkNativeRecord against the bank's
    // layout for native records, checkExpertRecord for VQ records.
    ExpertHeader check(const uint8_t *record, int expert, bool verifyCrc) const;

private:
    File m_file;
    RecordShape m_shape;
    std::optional<NativeLayout> m_native;
    int m_experts = 0;
};

} // namespace waste::format
