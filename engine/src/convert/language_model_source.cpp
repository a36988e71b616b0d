#include "convert/language_model_source.hpp"

#include <algorithm>

namespace waste::convert {

namespace {

constexpr const char *kText = "model.language_model.", *kVisual = "model.visual.", *kMtp = "mtp.";

} // namespace

LanguageModelSource::LanguageModelSource(const ModelSource &inner) : m_in(inner) {
    const std::vector<std::string> all = inner.tensorNames();
    const bool wrapped = std::any_of(all.begin(), all.end(), [](const std::string &n) { return n.starts_with(kText); });
    if (!wrapped) {
        m_names = all;
        return;
    }
    for (const std::string &name : all) {
        if (name.starts_with(kVisual) || name.starts_with(kMtp)) {
            ++m_readPast;
            continue;
        }
        if (name.starts_with(kText)) {
            const std::string shown = "model." + name.substr(std::string(kText).size());
            m_inner[shown] = name;
            m_names.push_back(shown);
        } else {
            m_names.push_back(name); // lm_head.weight
        }
    }
    std::sort(m_names.begin(), m_names.end());
}

std::string LanguageModelSource::inner(const std::string &name) const {
    auto it = m_inner.find(name);
    return it == m_inner.end() ? name : it->second;
}

SourceTensor LanguageModelSource::innerTensor(const SourceTensor &t) const {
    SourceTensor s = t;
    s.name = inner(t.name);
    return s;
}

SourceTensor LanguageModelSource::info(const std::string &name) const {
    SourceTensor t = m_in.info(inner(name));
    t.name = name;
    return t;
}

void LanguageModelSource::readRows(const SourceTensor &t, int64_t row0, int64_t rows, float *out) const {
    m_in.readRows(innerTensor(t), row0, rows, out);
}

void LanguageModelSource::readStored(const SourceTensor &t, uint8_t *payload, uint8_t *scales) const {
    m_in.readStored(innerTensor(t), payload, scales);
}

std::optional<ModelSource::StoredRanges> LanguageModelSource::storedRanges(const SourceTensor &t) const {
    return m_in.storedRanges(innerTensor(t));
}

void LanguageModelSource::readStoredRows(const SourceTensor &t, int64_t row0, int64_t rows, uint8_t *payload,
                                         uint8_t *scales) const {
    m_in.readStoredRows(innerTensor(t), row0, rows, payload, scales);
}

} // namespace waste::convert
