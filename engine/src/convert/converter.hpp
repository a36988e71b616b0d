// The conversion pipeline over any ModelSource (a Hugging Face folder or the tiny-model
// generator): plan, resume check, per-unit trunk + codebooks + expert bank, finish.
// Units: 0 = tensors outside the layers (embeddings, final norm, head, vision tower),
// then one per model layer. Each finished unit is committed to a journal, so an
// interrupted run resumes at the first unfinished one and writes the same bytes.
#pragma once

#include "convert/model_source.hpp"

#include <waste/convert.hpp>

namespace waste::convert {

ConvertPlan planSource(const ModelSource &src, const std::string &outDir, const ConvertOptions &options);

ConvertResult convertSource(const ModelSource &src, const std::string &outDir, const ConvertOptions &options,
                            const ConvertProgressCallback &progress, const std::atomic<bool> *cancel,
                            bool allowReclaim);

} // namespace waste::convert
