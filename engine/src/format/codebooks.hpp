// codebooks.bin: fixed-size records (16-byte header, then entries x vec_dim f16).
// The codebook number is the record's position; readers ignore the header, the
// converter writes it. Values are decoded with subnormals flushed to zero. A zero pad
// of 256 entries follows the last book so that an index byte >= entries (never
// checked by WASTE) stays inside this array.
#pragma once

#include "format/manifest.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace waste::format {

inline constexpr uint32_t kCodebookMagic = 0x4B424357u; // "WCBK"
inline constexpr int kCodebookHeaderBytes = 16;

inline int64_t codebookRecordBytes(int entries, int vecDim) { return kCodebookHeaderBytes + int64_t(entries) * vecDim * 2; }

// The 16-byte header: u32 magic, u16 id, u8 fmt, u8 vec_dim, u32 entries, u32 reserved (0).
void storeCodebookHeader(uint8_t *out, int id, uint8_t fmt, int vecDim, int entries);

class Codebooks {
public:
    Codebooks() = default;
    Codebooks(const std::string &path, const ExpertQuant &quant);

    int count() const { return m_count; }
    int entries() const { return m_entries; }
    // Entry c of book b: vec_dim (8) floats, entry-major.
    const float *entry(int64_t book, int64_t c) const { return m_values.data() + (book * m_entries + c) * 8; }
    // Book b transposed in blocks of 16 entries: [c/16][d][16] (zero-padded), for SIMD table builds.
    const float *transposed(int64_t book) const { return m_transposed.data() + book * m_paddedEntries * 8; }
    int paddedEntries() const { return m_paddedEntries; }
    int64_t bytes() const { return static_cast<int64_t>((m_values.size() + m_transposed.size()) * 4); }

private:
    int m_count = 0;
    int m_entries = 0;
    int m_paddedEntries = 0;
    std::vector<float> m_values;
    std::vector<float> m_transposed;
};

} // namespace waste::format
