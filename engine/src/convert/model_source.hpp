// Where the converter's weights come from: a Hugging Face model folder (config.json +
// safetensors shards, optionally sharded through model.safetensors.index.json), or the
// tiny-model generator, which produces the same tensors without touching disk.
//
// Quantised weights come as groups of stored tensors that a source shows as one logical
// tensor `<name>` of shape [rows, cols]:
//   MXFP4 (Kimi K3, compressed-tensors' mxfp4-pack-quantized): U8 `<name>_packed`
//     [rows, cols/2] and U8 `<name>_scale` [rows, cols/32];
//   FP8B128 (DeepSeek-V3, Kimi K2): F8_E4M3 `<name>` [rows, cols] and F32
//     `<name>_scale_inv` [ceil(rows/128), ceil(cols/128)];
//   INT4G32 (compressed-tensors' pack-quantized: K2-Thinking, K2.5): I32 `<name>_packed`
//     [rows, cols/8], BF16 `<name>_scale` [rows, cols/32] and I64 `<name>_shape` [2];
//   FP8Scaled, INT4Grouped (scaled_layouts.hpp): the same elements with other scales:
//     F8_E4M3 `<name>` with `<name>_scale_inv` blocks of another size or `<name>_scale`
//     per tensor / per row (F32, BF16 or F16); INT4 `_packed` with groups other than 32.
// readRows decodes them to f32 (exactly, except FP8's one rounding of e4m3 * scale);
// readStored gives a native record's bytes of them: as stored for the first four, with
// the scales re-laid where scaled_layouts.hpp says the values fit exactly.
#pragma once

#include "convert/safetensors.hpp"
#include "convert/span_reader.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace waste::convert {

struct SourceTensor {
    std::string name;
    DType dtype = DType::BF16;
    std::vector<int64_t> shape;
    int64_t bytes = 0; // in the source
    // FP8Scaled and INT4Grouped: one scale per block of blockRows x blockCols weights
    // (INT4 groups: 1 x group), clipped at the matrix's edges; 0 for other dtypes.
    int64_t blockRows = 0, blockCols = 0;
    // DeepSeek V4's naming of a quantised tensor: the payload keeps the weight's name and its
    // F8_E8M0 scales sit beside it as `.scale` (FP8Scaled: power-of-two block scales; MXFP4:
    // I8 nibble pairs). Set by the tiny generator, which writes that layout.
    bool dotScale = false;
    int64_t elements() const {
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        return n;
    }
    int64_t rowLength() const { return shape.empty() ? 1 : shape.back(); }
    int64_t rows() const { return rowLength() ? elements() / rowLength() : 0; }
};

class ModelSource {
public:
    virtual ~ModelSource() = default;
    virtual std::string configText() const = 0;
    // Tokenizer and template side files by their Hugging Face names (tiktoken.model,
    // tokenizer_config.json, chat_template.jinja, preprocessor_config.json).
    virtual std::optional<std::string> sideFile(const std::string &name) const = 0;
    // Every tensor name the model has, sorted (including ones whose shard is gone).
    virtual std::vector<std::string> tensorNames() const = 0;
    virtual SourceTensor info(const std::string &name) const = 0;
    // Reads rows [row0, row0+rows) (a row = the last dimension) as f32. Thread-safe.
    virtual void readRows(const SourceTensor &t, int64_t row0, int64_t rows, float *out) const = 0;
    // The stored bytes of an MXFP4, FP8B128, INT4G32 or BF16 tensor, exactly as the release
    // holds them: payload (nibbles, e4m3 bytes, packed words, bf16 values) and scales
    // (e8m0 bytes, f32 block multipliers, bf16 group scales; none for BF16), of the sizes
    // format::nativePayloadBytes / nativeScaleBytes give. For FP8Scaled and INT4Grouped
    // the elements as stored and the scales re-laid as the record format that holds them
    // exactly keeps them (scaled_layouts.hpp). Throws Error(Unsupported) for other dtypes
    // and for scaled layouts no record holds exactly. Thread-safe.
    virtual void readStored(const SourceTensor &t, uint8_t *payload, uint8_t *scales) const = 0;
    // Where readStored's bytes lie in the shards (dst left null; scales.bytes 0 for BF16),
    // so a repack can read many tensors' bytes in a few large reads (span_reader.hpp).
    // nullopt where they are not one range each in a file: the tiny generator, fused experts.
    struct StoredRanges {
        ByteRange payload, scales;
    };
    virtual std::optional<StoredRanges> storedRanges(const SourceTensor &) const { return std::nullopt; }
    // The stored bytes of rows [row0, row0+rows) of an MXFP4 tensor (each row is encoded on
    // its own), for fused expert tensors read one expert's rows at a time
    // (fused_experts_source.hpp). Throws Error(Unsupported) for other dtypes.
    virtual void readStoredRows(const SourceTensor &t, int64_t row0, int64_t rows, uint8_t *payload, uint8_t *scales) const;
    // Text that changes whenever the source's content or layout does (resume check).
    virtual std::string identity() const = 0;
    // Total source bytes (for progress and throughput).
    virtual int64_t totalBytes() const = 0;
    // Shards holding a tensor (all of a quantised group's), for --reclaim. Empty when the
    // source has no files.
    virtual std::vector<std::string> shardsOf(const std::string &) const { return {}; }
    virtual std::string shardPath(const std::string &) const { return {}; }
    virtual std::string directory() const { return {}; }
};

// The resume fingerprint's view of a source: config text, total tensor bytes, names.
// A Hugging Face folder and the tiny generator of the same model give the same text.
std::string sourceIdentity(const std::string &config, int64_t tensorBytes, const std::vector<std::string> &names);

class HfDirectorySource : public ModelSource {
public:
    explicit HfDirectorySource(const std::string &dir);
    std::string configText() const override { return m_config; }
    std::optional<std::string> sideFile(const std::string &name) const override;
    std::vector<std::string> tensorNames() const override;
    SourceTensor info(const std::string &name) const override;
    void readRows(const SourceTensor &t, int64_t row0, int64_t rows, float *out) const override;
    void readStored(const SourceTensor &t, uint8_t *payload, uint8_t *scales) const override;
    std::optional<StoredRanges> storedRanges(const SourceTensor &t) const override;
    void readStoredRows(const SourceTensor &t, int64_t row0, int64_t rows, uint8_t *payload, uint8_t *scales) const override;
    std::string identity() const override { return m_identity; }
    int64_t totalBytes() const override { return m_totalBytes; }
    std::vector<std::string> shardsOf(const std::string &name) const override;
    std::string shardPath(const std::string &shard) const override;
    std::string directory() const override { return m_dir; }

private:
    // The stored tensors of a quantised logical tensor; which format they are is read
    // from their dtypes when asked (info), so names alone group them (shards may be gone).
    struct Group {
        std::string payload, scale, shape; // shape: INT4's `_shape`, empty when absent
        bool fp8 = false;                  // e4m3 under the weight's own name
        bool dotScale = false;             // DeepSeek V4: `.scale` beside `.weight` (FP8 or FP4 by dtype)
    };
    SourceTensor fp8Info(const std::string &name, const Group &g) const;
    SourceTensor int4Info(const std::string &name, const Group &g) const;
    // The scales of a FP8Scaled tensor as f32, all of them (small: one per block).
    std::vector<float> fp8Scales(const SourceTensor &t, const Group &g) const;
    const SafetensorsFile &shard(const std::string &file) const;
    const TensorInfo &stored(const std::string &name) const; // a tensor as the shards hold it
    // uncached: past the page cache, for the bytes a native repack reads once.
    void readWhole(const std::string &name, uint8_t *out, bool uncached = false) const;
    void groupQuantised();
    std::string m_dir, m_config, m_identity;
    std::map<std::string, std::string> m_weightMap; // stored tensor -> shard file name
    std::map<std::string, Group> m_groups;         // logical name -> its stored tensors
    // What config.json's quantization_config says of the scale layout, where it says it
    // (0: not said): FP8 `weight_block_size`, INT4 `group_size`.
    int64_t m_fp8BlockRows = 0, m_fp8BlockCols = 0, m_int4Group = 0;
    int64_t m_totalBytes = 0, m_tensorBytes = 0;
    mutable std::mutex m_mutex;
    mutable std::map<std::string, std::unique_ptr<SafetensorsFile>> m_open;
};

} // namespace waste::convert
