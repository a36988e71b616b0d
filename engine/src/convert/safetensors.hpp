// safetensors files: an 8-byte little-endian header length, a JSON header (treated as
// untrusted and validated), then the raw tensor bytes. Tensors are read by rows with
// pread, so a checkpoint of any size is streamed rather than loaded.
#pragma once

#include "convert/file_io.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace waste::convert {

// U8 holds MXFP4 payloads (`*_packed` nibbles, `*_scale` E8M0 exponents); F8_E4M3 the
// FP8 weights of block-quantised releases (with an F32 `*_scale_inv`); I32 the packed
// INT4 words of compressed-tensors' pack-quantized releases (with a BF16 `*_scale` and
// an I64 `*_shape`). MXFP4, FP8B128 and INT4G32 are never file dtypes: they name the
// logical tensor a source assembles from such a group (model_source.hpp). FP8Scaled and
// INT4Grouped are the same element encodings with scales laid out otherwise (FP8 per
// tensor, per row or in other blocks; INT4 groups of another size): scaled_layouts.hpp.
// I8 and F8E8M0 are DeepSeek V4's: FP4 experts as I8 nibble pairs under the weight's name
// with F8_E8M0 `.scale` beside them (MXFP4's arithmetic), FP8 weights with F8_E8M0 block scales.
enum class DType { F32, F16, BF16, U8, F8E4M3, I32, I64, MXFP4, FP8B128, INT4G32, FP8Scaled, INT4Grouped, I8, F8E8M0, Other };

const char *dtypeName(DType t);
int dtypeSize(DType t); // 0 for the logical MXFP4, FP8B128, INT4G32, FP8Scaled, INT4Grouped and for Other

struct TensorInfo {
    std::string name;
    DType dtype = DType::Other;
    std::string dtypeText; // as written in the header
    std::vector<int64_t> shape;
    int64_t offset = 0; // absolute file offset of the first byte
    int64_t bytes = 0;
    int64_t elements() const;
    int64_t rowLength() const { return shape.empty() ? 1 : shape.back(); }
    int64_t rows() const { return rowLength() ? elements() / rowLength() : 0; }
};

class SafetensorsFile {
public:
    explicit SafetensorsFile(const std::string &path);
    const std::vector<TensorInfo> &tensors() const { return m_tensors; }
    const TensorInfo *find(const std::string &name) const;
    // Reads `count` elements starting at element `first` as f32 (F32, F16, BF16 only).
    void readElements(const TensorInfo &t, int64_t first, int64_t count, float *out) const;
    // Reads `count` raw bytes starting at byte `first` of the tensor (any dtype).
    void readBytes(const TensorInfo &t, int64_t first, int64_t count, uint8_t *out) const;
    // The same past the page cache, for bytes read once (InputFile::readAtUncached).
    void readBytesUncached(const TensorInfo &t, int64_t first, int64_t count, uint8_t *out) const;
    const std::string &path() const { return m_file.path(); }
    int64_t size() const { return m_file.size(); }
    const InputFile &file() const { return m_file; } // for reads planned across tensors

private:
    InputFile m_file;
    std::vector<TensorInfo> m_tensors;
    std::map<std::string, size_t> m_byName;
};

// What a writer needs to know up front: the header is written before any data.
struct TensorSpec {
    std::string name;
    DType dtype = DType::BF16;
    std::vector<int64_t> shape;
};

// Writes tensors in the order given; data for each must be supplied in that order.
class SafetensorsWriter {
public:
    SafetensorsWriter(const std::string &path, const std::vector<TensorSpec> &specs);
    ~SafetensorsWriter();
    SafetensorsWriter(const SafetensorsWriter &) = delete;
    SafetensorsWriter &operator=(const SafetensorsWriter &) = delete;
    // Appends raw bytes of the current tensor (may be called several times per tensor).
    void append(const void *data, int64_t bytes);
    // Checks every tensor got exactly its bytes, fsyncs and renames into place.
    void finish();
    int64_t dataBytes() const { return m_total; }

private:
    void writeRaw(const void *data, size_t bytes);
    std::string m_path, m_tmp;
    int m_fd = -1;
    int64_t m_total = 0, m_written = 0;
};

} // namespace waste::convert
