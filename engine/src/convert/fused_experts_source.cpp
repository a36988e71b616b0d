#include "convert/fused_experts_source.hpp"

#include "format/native_record.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <vector>

namespace waste::convert {

namespace {

constexpr const char *kGateUp = "mlp.experts.gate_up_proj", *kDown = "mlp.experts.down_proj";

} // namespace

FusedExpertsSource::FusedExpertsSource(const ModelSource &inner) : m_in(inner) {
    for (const std::string &name : inner.tensorNames()) {
        const bool gateUp = name.ends_with(kGateUp), down = name.ends_with(kDown);
        if (!gateUp && !down) {
            m_names.push_back(name);
            continue;
        }
        const SourceTensor t = inner.info(name);
        if (t.shape.size() != 3)
            throw Error(ErrorCode::Format, "'" + name + "' has " + std::to_string(t.shape.size()) +
                                               " dimensions; fused experts are [experts, rows, cols]");
        if (t.dtype != DType::MXFP4)
            throw Error(ErrorCode::Unsupported, "'" + name + "' is " + dtypeName(t.dtype) +
                                                    "; fused experts are read as the MXFP4 release ships them (use the original checkpoint)");
        const std::string base = name.substr(0, name.size() - (gateUp ? 24 : 21)) + "mlp.experts.";
        const int64_t E = t.shape[0], R = t.shape[1], C = t.shape[2];
        if (gateUp && R % 2 != 0)
            throw Error(ErrorCode::Format, "'" + name + "' has an odd number of rows; gate and up rows come in pairs");
        for (int64_t e = 0; e < E; ++e) {
            const std::string p = base + std::to_string(e) + ".";
            if (gateUp) {
                m_parts[p + "gate_proj.weight"] = {name, e * R, 2, R / 2, C};
                m_parts[p + "up_proj.weight"] = {name, e * R + 1, 2, R / 2, C};
            } else {
                m_parts[p + "down_proj.weight"] = {name, e * R, 1, R, C};
            }
        }
    }
    for (const auto &[n, p] : m_parts) m_names.push_back(n);
    std::sort(m_names.begin(), m_names.end());
}

const FusedExpertsSource::Part *FusedExpertsSource::part(const std::string &name) const {
    auto it = m_parts.find(name);
    return it == m_parts.end() ? nullptr : &it->second;
}

SourceTensor FusedExpertsSource::info(const std::string &name) const {
    const Part *p = part(name);
    if (!p) return m_in.info(name);
    SourceTensor s;
    s.name = name;
    s.dtype = DType::MXFP4;
    s.shape = {p->rows, p->cols};
    s.bytes = p->rows * (p->cols / 2 + p->cols / 32);
    return s;
}

void FusedExpertsSource::readRows(const SourceTensor &t, int64_t row0, int64_t rows, float *out) const {
    const Part *p = part(t.name);
    if (!p) return m_in.readRows(t, row0, rows, out);
    const SourceTensor f = m_in.info(p->fused);
    if (p->stride == 1) return m_in.readRows(f, p->first + row0, rows, out);
    // Interleaved rows: read the span that holds them in one go, keep every stride-th.
    const int64_t span = (rows - 1) * p->stride + 1;
    std::vector<float> all(static_cast<size_t>(span * p->cols));
    m_in.readRows(f, p->first + row0 * p->stride, span, all.data());
    for (int64_t r = 0; r < rows; ++r)
        std::copy_n(all.data() + r * p->stride * p->cols, p->cols, out + r * p->cols);
}

void FusedExpertsSource::readStored(const SourceTensor &t, uint8_t *payload, uint8_t *scales) const {
    const Part *p = part(t.name);
    if (!p) return m_in.readStored(t, payload, scales);
    const SourceTensor f = m_in.info(p->fused);
    const int64_t pRow = p->cols / 2, sRow = p->cols / 32;
    if (p->stride == 1) return m_in.readStoredRows(f, p->first, p->rows, payload, scales);
    const int64_t span = (p->rows - 1) * p->stride + 1;
    std::vector<uint8_t> pay(static_cast<size_t>(span * pRow)), sc(static_cast<size_t>(span * sRow));
    m_in.readStoredRows(f, p->first, span, pay.data(), sc.data());
    for (int64_t r = 0; r < p->rows; ++r) {
        std::copy_n(pay.data() + r * p->stride * pRow, pRow, payload + r * pRow);
        std::copy_n(sc.data() + r * p->stride * sRow, sRow, scales + r * sRow);
    }
}

std::vector<std::string> FusedExpertsSource::shardsOf(const std::string &name) const {
    const Part *p = part(name);
    return m_in.shardsOf(p ? p->fused : name);
}

} // namespace waste::convert
