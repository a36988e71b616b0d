#include "convert/fused_experts_source.hpp"

#include "format/f16.hpp"
#include "format/native_record.hpp"
#include "format/release_config.hpp"

#include <nlohmann/json.hpp>

#include <waste/waste.hpp>

#include <algorithm>
#include <vector>

namespace waste::convert {

namespace {

constexpr const char *kGateUp = "mlp.experts.gate_up_proj", *kDown = "mlp.experts.down_proj";

// Whether the source's fused experts keep gate and up halves apart (Qwen3.5-MoE as released;
// any other family as transformers 5 holds and saves its experts, `gate_up_proj[e].chunk(2)`)
// rather than gpt-oss's interleaved rows. An unreadable config is left to buildLayout to refuse.
bool halvesApart(const ModelSource &src) {
    try {
        const auto cfg = nlohmann::ordered_json::parse(src.configText());
        return format::configArch(nlohmann::json(format::textModelConfig(cfg))) != "gpt-oss";
    } catch (const nlohmann::json::exception &) {
        return false;
    }
}

} // namespace

FusedExpertsSource::FusedExpertsSource(const ModelSource &inner) : m_in(inner) {
    bool halves = false, checked = false;
    for (const std::string &name : inner.tensorNames()) {
        const bool gateUp = name.ends_with(kGateUp), down = name.ends_with(kDown);
        if (!gateUp && !down) {
            m_names.push_back(name);
            continue;
        }
        if (!checked) {
            halves = halvesApart(inner);
            checked = true;
        }
        const SourceTensor t = inner.info(name);
        if (t.shape.size() != 3)
            throw Error(ErrorCode::Format, "'" + name + "' has " + std::to_string(t.shape.size()) +
                                               " dimensions; fused experts are [experts, rows, cols]");
        if (!halves && t.dtype != DType::MXFP4)
            throw Error(ErrorCode::Unsupported, "'" + name + "' is " + dtypeName(t.dtype) +
                                                    "; fused experts are read as the MXFP4 release ships them (use the original checkpoint)");
        if (halves && t.dtype != DType::BF16 && t.dtype != DType::F16 && t.dtype != DType::F32)
            throw Error(ErrorCode::Unsupported, "'" + name + "' is " + dtypeName(t.dtype) +
                                                    "; fused experts with gate and up halves apart are read as BF16, F16 or F32");
        const std::string base = name.substr(0, name.size() - (gateUp ? 24 : 21)) + "mlp.experts.";
        const int64_t E = t.shape[0], R = t.shape[1], C = t.shape[2];
        if (gateUp && R % 2 != 0)
            throw Error(ErrorCode::Format, "'" + name + "' has an odd number of rows; gate and up rows come in pairs");
        for (int64_t e = 0; e < E; ++e) {
            const std::string p = base + std::to_string(e) + ".";
            if (gateUp && halves) {
                m_parts[p + "gate_proj.weight"] = {name, e * R, 1, R / 2, C, t.dtype};
                m_parts[p + "up_proj.weight"] = {name, e * R + R / 2, 1, R / 2, C, t.dtype};
            } else if (gateUp) {
                m_parts[p + "gate_proj.weight"] = {name, e * R, 2, R / 2, C, t.dtype};
                m_parts[p + "up_proj.weight"] = {name, e * R + 1, 2, R / 2, C, t.dtype};
            } else {
                m_parts[p + "down_proj.weight"] = {name, e * R, 1, R, C, t.dtype};
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
    s.dtype = p->dtype;
    s.shape = {p->rows, p->cols};
    s.bytes = p->dtype == DType::MXFP4 ? p->rows * (p->cols / 2 + p->cols / 32)
                                       : p->rows * p->cols * (p->dtype == DType::F32 ? 4 : 2);
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
    if (p->dtype != DType::MXFP4) {
        if (p->dtype != DType::BF16)
            throw Error(ErrorCode::Unsupported, "'" + t.name + "' is " + dtypeName(p->dtype) +
                                                    "; native expert records keep MXFP4, FP8 blocks, INT4 groups or BF16");
        // BF16 rows decode to f32 exactly, so they encode back to the same bits.
        std::vector<float> rows(static_cast<size_t>(p->rows * p->cols));
        readRows(t, 0, p->rows, rows.data());
        auto *out = reinterpret_cast<uint16_t *>(payload);
        for (size_t i = 0; i < rows.size(); ++i) out[i] = format::floatToBf16(rows[i]);
        return;
    }
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
