// waste/prefix.hpp on top of the one Model implementation (ModelImpl owns the state and
// its ReadHistory).
#include "plan/checkpoint.hpp"
#include "plan/plan_inputs.hpp"
#include "session/model_impl.hpp"
#include "waste/prefix.hpp"

#include <utility>


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

int64_t checkpointBytes(const std::string &containerPath, int ctxTokens)
{
    return plan::checkpointBytes(plan::readPlanInputs(containerPath), ctxTokens);
}

} // namespace waste
