#include "convert/unit_plan.hpp"

#include "format/codebooks.hpp"
#include "format/native_record.hpp"

#include <waste/waste.hpp>

namespace waste::convert {

namespace {

TrunkPlan planTrunkTensor(const SourceTensor &t, int trunkBits) {
    TrunkPlan p;
    p.name = t.name;
    p.shape = t.shape;
    const int64_t numel = t.elements();
    const bool vision = t.name.starts_with("vision_tower.") || t.name.starts_with("mm_projector.");
    p.fmt = format::storedTrunkFormat(t.name, numel, t.shape.size(), trunkBits);
    if (trunkBits == 16 && p.fmt != format::TrunkFormat::F32) {
        // The source's precision, so that the trunk is lossless; quantised trunk tensors
        // (FP8 releases) are kept as their decoded F32 values.
        p.fmt = t.dtype == DType::BF16 ? format::TrunkFormat::BF16
                : t.dtype == DType::F16 ? format::TrunkFormat::F16
                                        : format::TrunkFormat::F32;
    }
    if (p.fmt != format::TrunkFormat::F32 && vision && t.shape.size() > 2) {
        // Readers take the last stored dimension as the input width: conv kernels become
        // [out, in*kh*kw], grids [h*w, d].
        if (t.shape.size() == 4) p.shape = {t.shape[0], numel / t.shape[0]};
        else p.shape = {numel / t.shape.back(), t.shape.back()};
    }
    p.n = p.shape.empty() ? 1 : p.shape.back();
    p.rows = p.n ? numel / p.n : 0;
    if (p.fmt == format::TrunkFormat::F32) {
        p.payload = numel * 4;
    } else if (!format::isGrouped(p.fmt)) {
        p.payload = numel * 2;
    } else {
        p.payload = p.rows * format::trunkRowBytes(p.fmt, p.n, format::kTrunkGroup);
        p.scales = format::trunkScaleBytes(p.rows, p.n, format::kTrunkGroup);
    }
    return p;
}

ExpertShape expertShapeOf(const ModelSource &src, const Unit &u, bool vq) {
    const SourceTensor g = src.info(u.experts[0].name[0]);
    const SourceTensor d = src.info(u.experts[0].name[2]);
    if (g.shape.size() != 2 || d.shape.size() != 2 || d.shape[0] != g.shape[1] || d.shape[1] != g.shape[0])
        throw Error(ErrorCode::Format, "layer " + std::to_string(u.layer) + ": expert gate/down shapes do not fit together");
    ExpertShape s;
    s.inter = g.shape[0];
    s.hidden = g.shape[1];
    const VqGeometry geom;
    if (vq && (s.hidden % geom.dim || s.inter % geom.dim))
        throw Error(ErrorCode::Unsupported, "layer " + std::to_string(u.layer) + ": VQ3R codes need expert widths that are multiples of " +
                                                std::to_string(geom.dim) + " (these are " + std::to_string(s.hidden) + " and " +
                                                std::to_string(s.inter) + "); convert with --experts native");
    return s;
}

} // namespace

int64_t expertSourceBytes(const ModelSource &src, const Unit &u) {
    int64_t b = 0;
    for (const auto &n : u.experts[0].name) b += src.info(n).bytes;
    return b;
}

UnitPlan planUnit(const ModelSource &src, const Unit &u, const ConvertOptions &o, const ExpertChoice &experts) {
    UnitPlan p;
    for (const auto &name : u.trunk) {
        const SourceTensor t = src.info(name);
        p.trunk.push_back(planTrunkTensor(t, o.trunkBits));
        p.outputBytes += p.trunk.back().bytes();
        p.sourceBytes += t.bytes;
    }
    if (!u.experts.empty() && experts.native()) { // no codebooks: the records carry their own scales
        p.expert = expertShapeOf(src, u, false);
        p.recordBytes = format::nativeRecordLayout(experts.fmt, p.expert.inter, p.expert.hidden).recordBytes;
        p.outputBytes += p.recordBytes * static_cast<int64_t>(u.experts.size());
        p.sourceBytes += expertSourceBytes(src, u) * static_cast<int64_t>(u.experts.size());
    } else if (!u.experts.empty()) {
        const VqGeometry geom;
        p.expert = expertShapeOf(src, u, true);
        p.recordBytes = expertLayout(p.expert, geom).recordBytes;
        p.outputBytes += p.recordBytes * static_cast<int64_t>(u.experts.size()) + 3 * geom.stages * format::codebookRecordBytes(geom.entries, geom.dim);
        p.sourceBytes += expertSourceBytes(src, u) * static_cast<int64_t>(u.experts.size());
    }
    return p;
}

} // namespace waste::convert
