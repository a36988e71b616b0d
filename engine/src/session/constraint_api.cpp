// waste::makeJsonConstraint, waste::makeToolCallConstraint (waste.hpp) and
// waste::makeThinkingBudget (thinking_budget.hpp) on top of the one Model implementation:
// the model's tokenizer and chat format pick the reply frame (text/reply_frame.hpp) the
// constraint follows.
#include "session/model_impl.hpp"
#include "text/constraint_factory.hpp"
#include "waste/thinking_budget.hpp"

namespace waste {
namespace {

const session::ModelImpl &impl(const Model &model)
{
    const auto *m = dynamic_cast<const session::ModelImpl *>(&model);
    if (!m)
        throw Error(ErrorCode::Unsupported, "constrained decoding needs a model opened by waste::Model::open");
    return *m;
}

} // namespace

std::shared_ptr<TokenConstraint> makeJsonConstraint(const Model &model, std::string_view schemaJson, int maxTokens,
                                                    std::span<const int32_t> prompt)
{
    const session::ModelImpl &m = impl(model);
    return text::makeAnswerConstraint(m.info().chatFormat, m.tokenizer(), prompt, schemaJson, maxTokens);
}

std::shared_ptr<TokenConstraint> makeToolCallConstraint(const Model &model, std::string_view toolsJson,
                                                        std::string_view functionName, int maxTokens,
                                                        std::span<const int32_t> prompt)
{
    const session::ModelImpl &m = impl(model);
    return text::makeCallConstraint(m.info().chatFormat, m.tokenizer(), prompt, toolsJson, functionName, maxTokens);
}

std::shared_ptr<TokenConstraint> makeThinkingBudget(const Model &model, int budgetTokens, std::span<const int32_t> prompt)
{
    const session::ModelImpl &m = impl(model);
    return text::makeThinkingBudget(m.info().chatFormat, m.tokenizer(), prompt, budgetTokens);
}

} // namespace waste
