// The one reader of a release's config.json: what architecture it is, its dimensions, and
// the expert format `waste convert` keeps by default. The container manifest (which stores
// the release's config), the release planner (plan/release_plan) and the converter
// (convert/hf_names) all read configs through here, so a config means the same thing to
// each: "kimi_k2" is Kimi K2 everywhere, an FP8 release plans as the FP8 container convert
// makes, and the same keys and limits apply.
#pragma once

#include "format/manifest.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace waste::format {

// The text model's config: a multimodal wrapper's text_config, with the wrapper itself (less
// text_config) kept under "_outer", which is how the converter stores it in a manifest; any
// other config as it is.
nlohmann::ordered_json textModelConfig(const nlohmann::ordered_json &root);

// The engine's name of a config's architecture (format/arch_names: "kimi-linear", "kimi-k3",
// ...), read from "architectures" (the wrapper's first) or else model_type; an unknown one is
// returned as written ("unknown" when it says none).
std::string configArch(const nlohmann::json &cfg);

// Every dimension and switch of a text model's config (textModelConfig's result, or a
// manifest's config), with the limits the engine holds any config to. Throws Error(Format)
// naming `where` and the key at fault.
ModelConfig readModelConfig(const nlohmann::json &cfg, const std::string &where);

// A release's config.json read whole: readModelConfig of its text model, with errors that
// name config.json (not a damaged container). Throws Error(Format).
ModelConfig readReleaseConfig(const nlohmann::json &root);

// A release's quantization_config (its own, else its text model's), read once for the
// planner and the converter alike.
struct ReleaseQuant {
    // The encoding the release ships its experts in: MXFP4, FP8B128 (FP8 in blocks),
    // INT4G32 (compressed-tensors INT4 in groups of 32); none for BF16 releases and layouts
    // it does not describe.
    std::optional<uint8_t> expertFormat;
    int64_t fp8BlockRows = 0, fp8BlockCols = 0; // weight_block_size (0: not said)
    int64_t int4Group = 0; // the INT4 groups' size when config_groups agree (0: not said, or they differ)
};
ReleaseQuant readReleaseQuant(const nlohmann::json &root);

// readReleaseQuant(root).expertFormat.
std::optional<uint8_t> releaseExpertFormat(const nlohmann::json &root);

// The expert format `waste convert` writes with its default encoding (auto): the release's own
// where it ships experts quantised, VQ3R otherwise (kFmtVQ3R).
uint8_t defaultExpertFormat(const nlohmann::json &root);

} // namespace waste::format
