// Qwen3.5-MoE ships its text model inside a multimodal wrapper: `model.language_model.X`,
// the vision tower under `model.visual.`, the multi-token-prediction block under `mtp.`
// and the head at top level (docs/architectures/qwen3.5-moe.md). This view of such a
// source shows the text model under the names a text-only release uses (`model.X`,
// `lm_head.weight`) and reads past the tower and the MTP block, which the engine does not
// run, so the rest of the converter sees an ordinary text release. A source without
// `model.language_model.` tensors passes through unchanged.
#pragma once

#include "convert/model_source.hpp"

#include <map>

namespace waste::convert {

class LanguageModelSource : public ModelSource {
public:
    explicit LanguageModelSource(const ModelSource &inner);
    bool wrapped() const { return !m_inner.empty(); } // false: nothing renamed or read past
    int readPast() const { return m_readPast; }       // tensors of the tower and the MTP block

    std::string configText() const override { return m_in.configText(); }
    std::optional<std::string> sideFile(const std::string &name) const override { return m_in.sideFile(name); }
    std::vector<std::string> tensorNames() const override { return m_names; }
    SourceTensor info(const std::string &name) const override;
    void readRows(const SourceTensor &t, int64_t row0, int64_t rows, float *out) const override;
    void readStored(const SourceTensor &t, uint8_t *payload, uint8_t *scales) const override;
    std::optional<StoredRanges> storedRanges(const SourceTensor &t) const override;
    void readStoredRows(const SourceTensor &t, int64_t row0, int64_t rows, uint8_t *payload, uint8_t *scales) const override;
    std::string identity() const override { return m_in.identity(); }
    int64_t totalBytes() const override { return m_in.totalBytes(); }
    std::vector<std::string> shardsOf(const std::string &name) const override { return m_in.shardsOf(inner(name)); }
    std::string shardPath(const std::string &shard) const override { return m_in.shardPath(shard); }
    std::string directory() const override { return m_in.directory(); }

private:
    std::string inner(const std::string &name) const; // the release's name of a shown tensor
    SourceTensor innerTensor(const SourceTensor &t) const;
    const ModelSource &m_in;
    std::map<std::string, std::string> m_inner; // shown name -> release name, renamed ones only
    std::vector<std::string> m_names;
    int m_readPast = 0;
};

} // namespace waste::convert
