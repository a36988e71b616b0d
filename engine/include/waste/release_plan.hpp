// Planning a release before it is downloaded: the RAM plan of the container `waste convert`
// would make from a Hugging Face release, from its config.json alone (a few KB).
//
// Supported: every architecture the engine runs (the config is read by the same reader as a
// container's manifest and the converter). The trunk is sized tensor by tensor with the
// converter's format rules; the experts as VQ3R records, and, where the release ships its
// experts quantized (MXFP4, FP8 with 128x128 blocks, INT4 in groups of 32), also as native
// records of that format, which is what `waste convert` keeps by default.
#pragma once

#include <waste/calibration.hpp>
#include <waste/waste.hpp>

#include <string>

namespace waste {

struct ReleasePlanOptions {
    int ctx = 4096;
    int trunkBits = 4;          // 4 or 8, as `waste convert --trunk-bits`
    int64_t ramBytes = 0;       // > 0: plan for a machine with this much RAM instead of this one
    const ComputeCalibration *calibration = nullptr; // set: price a token's compute
};

// One way of storing the release's experts.
struct ReleaseLayout {
    std::string expert_format;    // "VQ3R", "MXFP4", "FP8B128", "INT4G32"
    int64_t record_bytes = 0;     // one expert record (whole pages)
    int64_t container_bytes = 0;  // trunk + expert banks (+ codebooks): the disk the container takes
    MemoryPlan plan;              // floor, default, cliff on the chosen machine
    double compute_seconds = 0;   // per token (0 without a calibration)
    double compute_overlap_seconds = 0;
    double compute_routed_seconds = -1; // of that, the routed experts' (-1: not estimated)
};

struct ReleasePlan {
    std::string arch;             // "kimi-linear", "kimi-k3", "kimi-k2", "deepseek-v3", "qwen3-moe", ...
    int64_t total_params = 0;     // trunk + every expert
    int64_t active_params = 0;    // what one token touches
    ReleaseLayout vq;             // experts as VQ3R records (`waste convert --experts vq3r`)
    bool has_native = false;
    ReleaseLayout native;         // the release's own expert encoding, when it has one
    // What `waste convert` makes with its default encoding (--experts auto): the release's
    // own encoding where it ships its experts quantised, VQ3R otherwise.
    const ReleaseLayout &convertDefault() const { return has_native ? native : vq; }
};

// Throws Error(Format) when the text is not a config of a supported architecture.
ReleasePlan planRelease(const std::string &configJson, const ReleasePlanOptions &options = {});

// What other programs are assumed to hold on a machine that is not this one: a sixth of its
// RAM (the reference's 64 GB laptop held about 10 GiB beside the engine).
int64_t assumedOtherProcessBytes(int64_t physicalBytes);

} // namespace waste
