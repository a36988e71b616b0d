// A thinking budget: the model reasons in at most `budget` tokens, then answers. Reasoning
// is free text; when the budget is spent and the model has not closed its reasoning itself,
// the close markup is written for it, followed by the lead into the answer where the format
// has one (harmony's final channel header), exactly as the format's reply parser reads a
// reply. Before the cut and after the answer starts nothing is masked, so the model writes
// the same tokens as without the budget up to the cut. It never ends generation itself
// (complete() stays false): the reply ends at the model's end of turn or at max_tokens.
#pragma once

#include "text/framed_json_constraint.hpp"

#include <vector>

namespace waste::text {

class ThinkingBudget : public TokenConstraint {
public:
    // `reasoning` as a reply frame gives it (reasoning.allowed must be true); `lead` the
    // tokens that start the answer after the close (may be empty); budget >= 0.
    ThinkingBudget(FramedJsonConstraint::Reasoning reasoning, std::vector<int32_t> lead, int budget);

    void allowed(std::vector<bool> &mask) override;
    void accept(int32_t token) override;
    bool complete() const override { return false; }

    // Reasoning tokens written so far (the open and close markup not counted).
    int thought() const { return m_thought; }

private:
    enum class Phase { Open, Free, Forced, Answer };
    void force(std::vector<int32_t> tokens);

    FramedJsonConstraint::Reasoning m_reasoning;
    std::vector<int32_t> m_lead;
    int m_budget;
    Phase m_phase = Phase::Free;
    std::vector<int32_t> m_forced; // Forced: the tokens still to write, in order
    size_t m_pos = 0;              // Open / Forced: position in the open markup or m_forced
    int m_thought = 0;
};

} // namespace waste::text
