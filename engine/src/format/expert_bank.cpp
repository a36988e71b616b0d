#include "format/expert_bank.hpp"

#include "waste/waste.hpp"

namespace waste::format {

ExpertBank::ExpertBank(const std::string &dir, const BankEntry &entry, const RecordShape &shape)
    : m_file(dir + "/" + entry.file), m_shape(shape), m_experts(entry.experts)
{
    if (m_file.size() < entry.bytes)
        throw Error(ErrorCode::Format, m_file.path() + ": bank is " + std::to_string(m_file.size()) +
                                           " bytes, the manifest says " + std::to_string(entry.bytes) +
                                           "; the bank is truncated, re-download or re-convert it");
    if (m_shape.native)
        m_native = nativeBankLayout(m_shape, m_file.path());
}

ExpertHeader ExpertBank::check(const uint8_t *record, int expert, bool verifyCrc) const
{
    if (m_native)
        return checkNativeRecord(record, *m_native, m_shape, expert, m_file.path(), verifyCrc);
    return checkExpertRecord(record, m_shape, expert, m_file.path(), verifyCrc);
}

ExpertHeader ExpertBank::read(int expert, uint8_t *dst, bool verifyCrc) const
{
    if (expert < 0 || expert >= m_experts)
        throw Error(ErrorCode::Argument, m_file.path() + ": expert " + std::to_string(expert) + " out of range");
    m_file.readAt(dst, m_shape.recordBytes, int64_t(expert) * m_shape.recordBytes);
    return check(dst, expert, verifyCrc);
}

} // namespace waste::format
