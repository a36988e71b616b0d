// The keys of manifest.json, named once for the parser (manifest.cpp) and the writer
// (manifest_writer.cpp), so a key cannot be spelled two ways.
#pragma once

namespace waste::format::key {

// Top level.
inline constexpr const char *kFormatVersion = "format_version";
inline constexpr const char *kArch = "arch";
inline constexpr const char *kTensorPrefix = "tensor_prefix";
inline constexpr const char *kConfig = "config";
inline constexpr const char *kTextConfig = "text_config";
inline constexpr const char *kExpertQuant = "expert_quant";
inline constexpr const char *kLayers = "layers";
inline constexpr const char *kTrunk = "trunk";
inline constexpr const char *kConverter = "converter";

// expert_quant.
inline constexpr const char *kFmt = "fmt"; // also a trunk entry's format id
inline constexpr const char *kStages = "stages";
inline constexpr const char *kVecDim = "vec_dim";
inline constexpr const char *kEntries = "entries";
inline constexpr const char *kIndexBlock = "index_block";
inline constexpr const char *kIndexBits = "index_bits";
inline constexpr const char *kBitsPerWeight = "bits_per_weight";

// A bank under "layers".
inline constexpr const char *kFile = "file";
inline constexpr const char *kExperts = "experts";
inline constexpr const char *kBytes = "bytes"; // also a trunk entry's payload + scale bytes
inline constexpr const char *kCodebookBase = "codebook_base";

// A trunk entry.
inline constexpr const char *kName = "name";
inline constexpr const char *kOff = "off";
inline constexpr const char *kShape = "shape";
inline constexpr const char *kGroup = "group";
inline constexpr const char *kScaleOff = "scale_off";
inline constexpr const char *kEncoding = "encoding";

} // namespace waste::format::key
