// The config keys of the DeepSeek-V3 family (DeepSeek-V3/R1/V3.1, Kimi K2), read on top
// of the Kimi-Linear keys parseConfig already knows: DeepSeek's spellings of the expert
// counts, norm_topk_prob, group-limited routing, RoPE with YaRN and the `mlp.` names
// of its MoE blocks. docs/architectures/deepseek-v3.md lists them.
#pragma once

#include "format/manifest.hpp"

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace waste::format {

// True for the architecture names archName gives this family.
bool isDeepseekFamily(const std::string &arch);

// Fills c's DeepSeek fields from cfg; throws Error(Format/Unsupported) naming the key
// when a value is out of range or asks for something this engine does not compute.
void readDeepseekConfig(const nlohmann::json &cfg, ModelConfig &c, const std::string &where);

// The group-limited sigmoid routing (noaux_tc) that DeepSeek-V3 and GLM-4.5 share: n_group and
// topk_group into c.groups / c.topkGroups, checked against c.experts and c.topK (read
// before), and scoring_func / topk_method, refused (Unsupported, naming `family`) unless
// absent or sigmoid / noaux_tc. Absent keys take the family's transformers defaults:
// `groups` for n_group, `keptGroups` for topk_group (at most n_group).
void readNoauxRouting(const nlohmann::json &cfg, ModelConfig &c, const std::string &where, const std::string &family,
                      int groups, int keptGroups);

} // namespace waste::format
