#include "text/thinking_budget.hpp"

#include "waste/waste.hpp"

#include <algorithm>

namespace waste::text {

ThinkingBudget::ThinkingBudget(FramedJsonConstraint::Reasoning reasoning, std::vector<int32_t> lead, int budget)
    : m_reasoning(std::move(reasoning)), m_lead(std::move(lead)), m_budget(budget)
{
    if (!m_reasoning.allowed || m_reasoning.close.empty())
        throw Error(ErrorCode::Argument, "thinking budget: the chat format gives no reasoning to cut");
    if (budget < 0)
        throw Error(ErrorCode::Argument, "thinking budget must be 0 or more tokens (got " + std::to_string(budget) + ")");
    if (!m_reasoning.open.empty())
        m_phase = Phase::Open;
    else if (m_budget == 0)
        force(m_reasoning.close);
}

void ThinkingBudget::force(std::vector<int32_t> tokens)
{
    m_forced = std::move(tokens);
    m_forced.insert(m_forced.end(), m_lead.begin(), m_lead.end());
    m_pos = 0;
    m_phase = m_forced.empty() ? Phase::Answer : Phase::Forced;
}

void ThinkingBudget::allowed(std::vector<bool> &mask)
{
    auto only = [&mask](int32_t id) {
        std::fill(mask.begin(), mask.end(), false);
        if (id >= 0 && size_t(id) < mask.size())
            mask[size_t(id)] = true;
    };
    switch (m_phase) {
    case Phase::Open:
        // Optional reasoning: the model may open it or answer at once, as it likes.
        if (m_reasoning.optional && m_pos == 0)
            std::fill(mask.begin(), mask.end(), true);
        else
            only(m_reasoning.open[m_pos]);
        return;
    case Phase::Forced:
        only(m_forced[m_pos]);
        return;
    case Phase::Free:
    case Phase::Answer:
        std::fill(mask.begin(), mask.end(), true);
        return;
    }
}

void ThinkingBudget::accept(int32_t token)
{
    switch (m_phase) {
    case Phase::Open:
        if (m_pos == 0 && m_reasoning.optional && token != m_reasoning.open[0]) {
            m_phase = Phase::Answer; // answered without reasoning: nothing to cut
            return;
        }
        if (++m_pos == m_reasoning.open.size()) {
            m_phase = Phase::Free;
            if (m_budget == 0)
                force(m_reasoning.close);
        }
        return;
    case Phase::Free:
        if (token == m_reasoning.close[0]) {
            // The model closed its reasoning itself: from here on it is free, as it would be.
            m_phase = Phase::Answer;
            return;
        }
        if (++m_thought >= m_budget)
            force(m_reasoning.close);
        return;
    case Phase::Forced:
        if (++m_pos == m_forced.size())
            m_phase = Phase::Answer;
        return;
    case Phase::Answer:
        return;
    }
}

} // namespace waste::text
