// gpt-oss ships each layer's routed experts as two fused MXFP4 tensors,
// `mlp.experts.gate_up_proj` [E, 2 Im, Hd] (gate row i at 2i, up row i at 2i + 1) and
// `mlp.experts.down_proj` [E, Hd, Im]. Qwen3.5-MoE fuses them the same way in BF16 but
// with the halves apart: gate rows [0, Im), up rows [Im, 2 Im) of each expert
// (transformers' `gate_up_proj[e].chunk(2)`; docs/architectures/qwen3.5-moe.md), as
// transformers 5 also holds the experts of the other MoE families (Qwen3-MoE, GLM-4.5,
// DeepSeek-V3), so a checkpoint it saved that way reads too; which layout applies is the
// config's architecture's. This view of a source shows them as the
// per-expert tensors the converter handles, `mlp.experts.E.{gate,up,down}_proj.weight` of
// [Im, Hd] and [Hd, Im], each row read (decoded, or as stored) from its fused row. Every
// other tensor passes through unchanged, so a release without fused experts looks the same.
#pragma once

#include "convert/model_source.hpp"

#include <map>

namespace waste::convert {

class FusedExpertsSource : public ModelSource {
public:
    explicit FusedExpertsSource(const ModelSource &inner);
    bool fused() const { return !m_parts.empty(); } // false: the source has no fused experts

    std::string configText() const override { return m_in.configText(); }
    std::optional<std::string> sideFile(const std::string &name) const override { return m_in.sideFile(name); }
    std::vector<std::string> tensorNames() const override { return m_names; }
    SourceTensor info(const std::string &name) const override;
    void readRows(const SourceTensor &t, int64_t row0, int64_t rows, float *out) const override;
    void readStored(const SourceTensor &t, uint8_t *payload, uint8_t *scales) const override;
    std::string identity() const override { return m_in.identity(); }
    int64_t totalBytes() const override { return m_in.totalBytes(); }
    std::vector<std::string> shardsOf(const std::string &name) const override;
    std::string shardPath(const std::string &shard) const override { return m_in.shardPath(shard); }
    std::string directory() const override { return m_in.directory(); }

private:
    // One per-expert matrix: rows first, first + stride, ... of the fused tensor.
    struct Part {
        std::string fused;
        int64_t first = 0, stride = 1, rows = 0, cols = 0;
        DType dtype = DType::MXFP4;
    };
    const Part *part(const std::string &name) const;
    const ModelSource &m_in;
    std::map<std::string, Part> m_parts;
    std::vector<std::string> m_names;
};

} // namespace waste::convert
