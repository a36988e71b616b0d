// Trunk tensors (trunk.bin): F32, Q8G, Q4G, Q3G (and our optional F16/BF16), either
// resident in RAM or, for a quantized embedding table, read one row per token from disk.
#pragma once

#include "format/file.hpp"
#include "format/manifest.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace waste::format {

class TrunkTensor {
public:
    std::string name;
    TrunkFormat format = TrunkFormat::F32;
    int64_t rows = 0, cols = 0;
    int64_t group = 128, groups = 1; // grouped formats: group size g and ng = ceil(N/g)
    int64_t rowBytes = 0;            // grouped formats: payload bytes per row
    std::vector<int64_t> shape;

    // Resident storage: f32 values (F32/F16/BF16) or the integer payload + decoded scales.
    std::vector<float> f32;
    std::vector<uint8_t> payload;
    std::vector<float> scales; // rows * groups, row-major

    bool onDisk = false; // rows are read on demand (quantized embedding)
    bool isGrouped() const { return format::isGrouped(format); }
    int64_t residentBytes() const { return static_cast<int64_t>(f32.size() * 4 + payload.size() + scales.size() * 4); }

    // Row r as f32 values (dequantized as q*scale in f32). Works resident or on disk.
    void readRow(int64_t r, float *out) const;

private:
    friend class Trunk;
    const File *m_file = nullptr;
    int64_t m_off = 0, m_scaleOff = 0;
};

// Opens trunk.bin, checks every manifest entry against the file, loads tensors by name.
class Trunk {
public:
    Trunk(const std::string &path, const Manifest &manifest);

    const File &file() const { return m_file; }
    // Loads a tensor (prefix added); nullptr when absent. `resident=false` keeps a
    // quantized tensor on disk (rows read on demand); F32 tensors are always loaded.
    std::shared_ptr<TrunkTensor> load(const std::string &nameWithoutPrefix, bool resident = true) const;

    static int64_t payloadBytes(const TrunkEntry &e);
    static int64_t rowBytesOf(const TrunkEntry &e);

private:
    File m_file;
    const Manifest &m_manifest;
};

} // namespace waste::format
