// The architectures the engine runs, named once: the engine's key for each ("kimi-k3", ...),
// the part of a release's class name ("KimiK3ForConditionalGeneration") and the model_type
// that say it, and whether it is one of the GQA families (format/gqa_config). Reading a
// config, refusing an unknown one and picking the GQA reader all go through this table, so
// a new family is one row here.
#pragma once

#include <string>

namespace waste::format {

// The engine's key for a release named by its class (the "architectures" entry) or, when it
// has none, its model_type; "" when neither names an architecture the engine runs.
std::string archNamed(const std::string &className, const std::string &modelType);

// Whether the engine runs that architecture (an engine key, as archNamed returns).
bool knownArch(const std::string &arch);

// Whether an engine key is one of the GQA families (Qwen3-MoE, Qwen3-Next, Qwen3.5-MoE,
// gpt-oss, GLM-4.5), whose keys format/gqa_config reads.
bool isGqaFamily(const std::string &arch);

// The families the engine runs, as a person reads them ("Kimi-Linear, Kimi K3, ...").
const std::string &knownArchList();

} // namespace waste::format
