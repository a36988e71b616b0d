// Where the converter's weights come from: a Hugging Face model folder (config.json +
// safetensors shards, optionally sharded through model.safetensors.index.json), or the
// tiny-model generator, which produces the same tensors without touching disk.
//
// MXFP4 weights (Kimi K3's routed experts, compressed-tensors' mxfp4-pack-quantized
// layout) come as two U8 tensors, `<name>_packed` [rows, cols/2] and `<name>_scale`
// [rows, cols/32]. A source shows the pair as one logical tensor `<name>` of dtype
// MXFP4 and shape [rows, cols], and readRows decodes it exactly to f32.
#pragma once

#include "convert/safetensors.hpp"

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
    // Text that changes whenever the source's content or layout does (resume check).
    virtual std::string identity() const = 0;
    // Total source bytes (for progress and throughput).
    virtual int64_t totalBytes() const = 0;
    // Shards holding a tensor (two for an MXFP4 pair), for --reclaim. Empty when the
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
    std::string identity() const override { return m_identity; }
    int64_t totalBytes() const override { return m_totalBytes; }
    std::vector<std::string> shardsOf(const std::string &name) const override;
    std::string shardPath(const std::string &shard) const override;
    std::string directory() const override { return m_dir; }

private:
    struct Mxfp4Pair {
        std::string packed, scale; // tensor names in the shards
    };
    const SafetensorsFile &shard(const std::string &file) const;
    const TensorInfo &stored(const std::string &name) const; // a tensor as the shards hold it
    void pairMxfp4();
    std::string m_dir, m_config, m_identity;
    std::map<std::string, std::string> m_weightMap; // stored tensor -> shard file name
    std::map<std::string, Mxfp4Pair> m_mxfp4;      // logical name -> its pair
    int64_t m_totalBytes = 0, m_tensorBytes = 0;
    mutable std::mutex m_mutex;
    mutable std::map<std::string, std::unique_ptr<SafetensorsFile>> m_open;
};

} // namespace waste::convert
