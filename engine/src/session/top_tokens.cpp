// `waste eval`'s report: softmax in double over all logits, then k rounds of
// "largest logit not yet picked", scanning ids ascending with a strict >.
#include "waste/waste.hpp"

#include <cmath>

namespace waste {

std::vector<TopToken> topTokens(std::span<const float> logits, int k)
{
    std::vector<TopToken> out;
    if (logits.empty() || k <= 0)
        return out;
    double mx = logits[0];
    for (float v : logits)
        mx = std::max(mx, double(v));
    double sum = 0;
    for (float v : logits)
        sum += std::exp(double(v) - mx);
    const size_t n = std::min<size_t>(static_cast<size_t>(k), logits.size());
    std::vector<bool> picked(logits.size(), false);
    for (size_t round = 0; round < n; ++round) {
        size_t best = logits.size();
        for (size_t i = 0; i < logits.size(); ++i)
            if (!picked[i] && (best == logits.size() || logits[i] > logits[best]))
                best = i;
        picked[best] = true;
        out.push_back({static_cast<int32_t>(best), logits[best], std::exp(double(logits[best]) - mx) / sum});
    }
    return out;
}

} // namespace waste
