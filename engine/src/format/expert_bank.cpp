#include "format/expert_bank.hpp"

#include "format/native_record.hpp"
#include "waste/waste.hpp"

namespace waste::format {

ExpertHeader checkBankRecord(const uint8_t *record, const RecordShape &shape, int expert, const std::string &file,
                             bool verifyCrc)
{
    if (shape.native)
        return checkNativeRecord(record, shape.native, shape, expert, file, verifyCrc);
    return checkExpertRecord(record, shape, expert, file, verifyCrc);
}

ExpertBank::ExpertBank(const std::string &dir, const BankEntry &entry, const RecordShape &shape)
    : m_file(dir + "/" + entry.file), m_shape(shape), m_experts(entry.experts)
{
    if (m_file.size() < entry.bytes)
        throw Error(ErrorCode::Format, m_file.path() + ": bank is " + std::to_string(m_file.size()) +
                                           " bytes, the manifest says " + std::to_string(entry.bytes) +
                                           "; the bank is truncated, re-download or re-convert it");
}

ExpertHeader ExpertBank::read(int expert, uint8_t *dst, bool verifyCrc) const
{
    if (expert < 0 || expert >= m_experts)
        throw Error(ErrorCode::Argument, m_file.path() + ": expert " + std::to_string(expert) + " out of range");
    m_file.readAt(dst, m_shape.recordBytes, int64_t(expert) * m_shape.recordBytes);
    return checkBankRecord(dst, m_shape, expert, m_file.path(), verifyCrc);
}

} // namespace waste::format
