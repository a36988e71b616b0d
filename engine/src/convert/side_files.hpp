// The files a container carries beside the weights, taken from the source folder:
// tokenizer.model (tiktoken.model or tokenizer.model), tokenizer.json and
// tokenizer_config.json (a Hugging Face tokenizer, copied as they are), specials.json (the
// added tokens of tokenizer_config.json, by id), chat_template.jinja (the file, or the template in
// tokenizer_config.json) and vision.json (vision_config + preprocessor_config.json).
#pragma once

#include "convert/model_source.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace waste::convert {

// Writes them into `out` atomically. `config` is the config as the manifest stores it
// (a multimodal wrapper kept under "_outer").
void writeSideFiles(const ModelSource &src, const std::string &out, const nlohmann::ordered_json &config);

} // namespace waste::convert
