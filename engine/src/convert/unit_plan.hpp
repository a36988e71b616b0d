// What the converter will write for each unit, decided before a byte is written: the
// stored format and shape of every trunk tensor (the reference's rules: small and 1-D
// tensors F32, embeddings, head and vision tower Q8G, the rest Q4G or Q8G; or, at 16
// bits, every tensor in its source precision), the expert record size (VQ3R or a native
// format), and the output and source bytes the plan and progress report.
#pragma once

#include "convert/expert_encoder.hpp"
#include "convert/hf_names.hpp"
#include "convert/native_experts.hpp"
#include "format/trunk_layout.hpp"

#include <waste/convert.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace waste::convert {

struct TrunkPlan {
    std::string name;
    format::TrunkFormat fmt = format::TrunkFormat::F32;
    std::vector<int64_t> shape; // as stored (vision conv kernels flattened to 2-D)
    int64_t rows = 0, n = 0;
    int64_t payload = 0, scales = 0;
    int64_t bytes() const { return payload + scales; }
};

// Everything the plan needs for units not yet done.
struct UnitPlan {
    std::vector<TrunkPlan> trunk;
    ExpertShape expert;
    int64_t recordBytes = 0;
    int64_t outputBytes = 0;
    int64_t sourceBytes = 0;
};

UnitPlan planUnit(const ModelSource &src, const Unit &u, const ConvertOptions &o, const ExpertChoice &experts);

// Source bytes of one expert (bf16, or MXFP4 packed + scales), taken from expert 0.
int64_t expertSourceBytes(const ModelSource &src, const Unit &u);

} // namespace waste::convert
