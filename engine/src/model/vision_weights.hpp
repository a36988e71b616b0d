// The vision tower's and projector's weights, read from the container's trunk.
// Matrices stay in their stored encoding (F32, Q8G, Q4G, Q3G) and are dequantized one row at a
// time when used, so the resident size is the file size.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/vision_config.hpp"

namespace waste::vision {

// One trunk entry as the manifest describes it (offsets absolute in trunk.bin).
struct TensorInfo {
    std::string name;
    int fmt = 0;                 // 0 F32, 2 Q8G, 3 Q4G, 7 Q3G; other nonzero values read as Q8G
    int halfEncoding = 0;        // fmt 1 with the manifest's "encoding": 1 = f16, 2 = bf16 values
    std::vector<int64_t> shape;
    int64_t group = 128;
    int64_t off = 0;
    int64_t scaleOff = 0;
    int64_t bytes = 0;           // the manifest's `bytes` (planner only)

    int64_t elements() const;
};

// Where the tower's tensors come from: the container's trunk index and trunk.bin.
class TensorSource {
public:
    virtual ~TensorSource() = default;
    virtual const TensorInfo *find(const std::string &name) const = 0;
    // Reads `size` bytes at `offset` of trunk.bin; throws Error(Format) when out of the file.
    virtual void read(int64_t offset, int64_t size, void *dst) const = 0;
    virtual int64_t trunkBytes() const = 0; // bounds a tensor before memory is allocated for it
    virtual int textHidden() const = 0;
    virtual int vocabSize() const = 0;
    virtual const std::string &containerDir() const = 0;
};

// Reads manifest.json's trunk index (names, formats, shapes, offsets) and opens trunk.bin.
std::unique_ptr<TensorSource> openContainerTensors(const std::string &containerDir);

} // namespace waste::vision

namespace waste::format {
struct Manifest;
class File;
} // namespace waste::format

namespace waste::vision {

// The same over an open container's parsed manifest and trunk file (both must outlive it).
std::unique_ptr<TensorSource> manifestTensors(const format::Manifest &manifest, const format::File &trunk,
                                              const std::string &containerDir);

// IEEE binary16 as the container stores scales: subnormals honoured, exponent 31 an ordinary
// exponent (never inf/NaN).
float f16ToF32(uint16_t h);

class WeightMatrix {
public:
    int rows = 0, cols = 0;

    // A [rows, cols] matrix; F32 may have any shape with rows*cols elements when anyShapeF32.
    static WeightMatrix load(const TensorSource &src, const std::string &name, int rows, int cols,
                             bool anyShapeF32 = false);
    // A length-n vector that must be stored F32 (norm weights).
    static std::vector<float> loadF32Vector(const TensorSource &src, const std::string &name, int n);

    // Row r as f32 (q * scale as one f32 product for grouped formats).
    void row(int r, float *out) const;
    int64_t residentBytes() const { return int64_t(m_f32.size() * 4 + m_q.size() + m_scales.size() * 2); }

private:
    int m_fmt = 0;
    int m_group = 128;
    int64_t m_rowBytes = 0;
    int m_groupsPerRow = 0;
    std::vector<float> m_f32;
    std::vector<uint8_t> m_q;
    std::vector<uint16_t> m_scales;
};

struct VisionBlockWeights {
    std::vector<float> norm0, norm1;
    WeightMatrix wqkv, wo, fc0, fc1;
};

struct VisionWeights {
    VisionConfig cfg;
    WeightMatrix patchEmbed;        // [D, 588]
    std::vector<float> posGrid;     // [PH][PW][D], f32
    std::vector<VisionBlockWeights> blocks;
    std::vector<float> finalNorm;   // [D]
    WeightMatrix proj0;             // [4D, 4D]
    WeightMatrix proj2;             // [T, 4D]
    std::vector<float> postNorm;    // [T]

    int64_t residentBytes() const;
};

// Loads and checks every tower tensor (names, shapes, formats); throws Error(Format) naming
// the tensor at fault.
std::unique_ptr<VisionWeights> loadVisionWeights(const TensorSource &src, const VisionConfig &cfg);

} // namespace waste::vision
