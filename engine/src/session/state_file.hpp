// Session state on disk: the KDA and Gated DeltaNet states and conv rings, the filled MLA
// latent rows and GQA key/value rows (a sliding layer's ring whole), the position and the
// last logits, behind a header of shapes that must match (a mismatch is refused, naming
// the shape); then the tokens read and the checkpoints (read_history.hpp), so a reopened
// chat continues.
#pragma once

#include "format/manifest.hpp"
#include "model/state.hpp"
#include "session/read_history.hpp"
#include "waste/prefix.hpp"

#include <string>

namespace waste::session {

void saveState(const std::string &path, const format::ModelConfig &c, const model::State &s, const ReadHistory &h,
               SavedParts parts = SavedParts::Everything);
// Reads into `s` and `h` only after the whole file validated; otherwise throws and leaves
// both untouched.
void loadState(const std::string &path, const format::ModelConfig &c, model::State &s, ReadHistory &h);

} // namespace waste::session
