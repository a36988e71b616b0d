// Session state on disk: the KDA states and conv rings, the filled MLA latent rows,
// the position and the last logits, behind a header of shapes that must match.
#pragma once

#include "format/manifest.hpp"
#include "model/state.hpp"

#include <string>

namespace waste::session {

void saveState(const std::string &path, const format::ModelConfig &c, const model::State &s);
// Reads into `s` only after the whole file validated; otherwise throws and leaves `s` untouched.
void loadState(const std::string &path, const format::ModelConfig &c, model::State &s);

} // namespace waste::session
