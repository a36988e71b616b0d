// A thinking budget for replies that reason first (R1, K2-Thinking, Qwen3, gpt-oss's
// analysis channel, K3's think channel): at most N tokens of reasoning, then the answer.
// Its own header so that front ends that use it do not make every user of waste.hpp rebuild.
#pragma once

#include "waste/waste.hpp"

#include <cstdint>
#include <memory>
#include <span>

namespace waste {

// Where the reply to `prompt` reasons first (ModelInfo::chatFormat; the prompt decides
// whether it does), its reasoning gets at most `budgetTokens` tokens. At the cut the
// format's close markup (and harmony's final-channel header) is written for the model, so
// the rest of the reply is its answer; until the cut nothing is masked, so the tokens are
// the ones the model writes without a budget. Null when the reply does not reason: then
// generate without a constraint. Throws Error(Argument) for a negative budget.
std::shared_ptr<TokenConstraint> makeThinkingBudget(const Model &model, int budgetTokens,
                                                    std::span<const int32_t> prompt);

} // namespace waste
