#include "format/codebooks.hpp"

#include "format/bytes.hpp"
#include "format/f16.hpp"
#include "format/file.hpp"
#include "waste/waste.hpp"

namespace waste::format {

void storeCodebookHeader(uint8_t *out, int id, uint8_t fmt, int vecDim, int entries)
{
    storeU32(out, kCodebookMagic);
    storeU16(out + 4, static_cast<uint16_t>(id));
    storeU8(out + 6, fmt);
    storeU8(out + 7, static_cast<uint8_t>(vecDim));
    storeU32(out + 8, static_cast<uint32_t>(entries));
    storeU32(out + 12, 0);
}

Codebooks::Codebooks(const std::string &path, const ExpertQuant &quant)
{
    File f(path);
    m_entries = quant.entries;
    m_paddedEntries = (m_entries + 15) / 16 * 16;
    const int64_t recordBytes = codebookRecordBytes(quant.entries, quant.vecDim);
    const int64_t n = f.size() / recordBytes;
    if (n > 65535 + 64)
        throw Error(ErrorCode::Format, path + ": too many codebooks (" + std::to_string(n) + ")");
    m_count = static_cast<int>(n);
    std::vector<uint8_t> raw(static_cast<size_t>(n * recordBytes));
    if (n > 0)
        f.readAt(raw.data(), n * recordBytes, 0);
    m_values.assign(static_cast<size_t>((n * m_entries + 256) * 8), 0.0f);
    m_transposed.assign(static_cast<size_t>(n * m_paddedEntries * 8), 0.0f);
    for (int64_t b = 0; b < n; ++b) {
        const uint8_t *rec = raw.data() + b * recordBytes + kCodebookHeaderBytes;
        for (int64_t c = 0; c < m_entries; ++c)
            for (int d = 0; d < 8; ++d) {
                const float v = f16ToFloatFlushSubnormal(loadU16(rec + (c * 8 + d) * 2));
                m_values[static_cast<size_t>((b * m_entries + c) * 8 + d)] = v;
                m_transposed[static_cast<size_t>(b * m_paddedEntries * 8 + (c / 16) * 128 + d * 16 + c % 16)] = v;
            }
    }
}

} // namespace waste::format
