// waste/prefix.hpp on top of the one Model implementation (ModelImpl owns the state and
// its ReadHistory).
#include "plan/plan_inputs.hpp"
#include "session/model_impl.hpp"
#include "waste/prefix.hpp"

#include <algorithm>

namespace waste {
namespace {

const session::ModelImpl &impl(const Model &model)
{
    const auto *m = dynamic_cast<const session::ModelImpl *>(&model);
    if (!m)
        throw Error(ErrorCode::Unsupported, "prefix reuse needs a model opened by waste::Model::open");
    return *m;
}

session::ModelImpl &impl(Model &model) { return const_cast<session::ModelImpl &>(impl(std::as_const(model))); }

} // namespace

void markCheckpoint(Model &model) { impl(model).markCheckpoint(); }

int reusablePrefix(const Model &model, std::span<const int32_t> prompt) { return impl(model).reusablePrefix(prompt); }

int reusePrefix(Model &model, std::span<const int32_t> prompt) { return impl(model).reusePrefix(prompt); }

std::vector<int32_t> readTokens(const Model &model) { return impl(model).readTokens(); }

int checkpointPosition(const Model &model) { return impl(model).checkpointPosition(); }

void saveState(const Model &model, const std::string &path, SavedParts parts) { impl(model).saveState(path, parts); }

int64_t checkpointBytes(const std::string &containerPath)
{
    // What session/read_history copies: per KDA layer the S matrices and three conv rings.
    const plan::PlanInputs in = plan::readPlanInputs(containerPath);
    const int64_t channels = in.kdaHeads * in.kdaDim;
    const int64_t perLayer = channels * in.kdaDim + 3 * std::max<int64_t>(in.convKernel - 1, 0) * channels;
    return (in.kdaLayers * perLayer + in.vocab) * 4;
}

} // namespace waste
