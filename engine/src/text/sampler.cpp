#include "text/sampler.hpp"

#include "waste/waste.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace waste::text {

namespace {

constexpr const char *kNothingAllowed =
    "sampler: the constraint allows no token here (a constrained-decoding fault; the request was ended)";

bool allowedAt(const std::vector<bool> *mask, size_t i) { return !mask || (*mask)[i]; }

void checkInputs(std::span<const float> logits, const std::vector<bool> *mask)
{
    if (logits.empty())
        throw Error(ErrorCode::Argument, "sampler: empty logits");
    if (mask && mask->size() != logits.size())
        throw Error(ErrorCode::Argument, "sampler: mask has " + std::to_string(mask->size()) +
                                             " entries for " + std::to_string(logits.size()) + " logits");
}

} // namespace

Sampler::Sampler(const SamplerParams &params) : m_params(params), m_state(params.seed ? params.seed : kDefaultState)
{
}

double Sampler::nextUniform()
{
    m_state = m_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(m_state >> 11) * (1.0 / 9007199254740992.0); // 2^-53
}

int32_t Sampler::argmax(std::span<const float> logits, const std::vector<bool> *mask)
{
    checkInputs(logits, mask);
    int32_t best = -1;
    for (size_t i = 0; i < logits.size(); ++i) {
        if (!allowedAt(mask, i))
            continue;
        if (best < 0 || logits[i] > logits[static_cast<size_t>(best)])
            best = static_cast<int32_t>(i);
    }
    if (best < 0)
        throw Error(ErrorCode::Argument, kNothingAllowed);
    return best;
}

float Sampler::logProb(std::span<const float> logits, int32_t id, const std::vector<bool> *mask)
{
    const int32_t top = argmax(logits, mask);
    const double maxLogit = logits[static_cast<size_t>(top)];
    double sum = 0;
    for (size_t i = 0; i < logits.size(); ++i)
        if (allowedAt(mask, i))
            sum += std::exp(static_cast<double>(logits[i]) - maxLogit);
    if (id < 0 || static_cast<size_t>(id) >= logits.size() || !allowedAt(mask, static_cast<size_t>(id)))
        return -std::numeric_limits<float>::infinity();
    return static_cast<float>(static_cast<double>(logits[static_cast<size_t>(id)]) - maxLogit - std::log(sum));
}

int32_t Sampler::sample(std::span<const float> logits, const std::vector<bool> *mask)
{
    checkInputs(logits, mask);
    if (!(m_params.temperature > 0.0f))
        return argmax(logits, mask);
    const double u = nextUniform(); // one draw per sampled token, whichever path follows
    const bool truncate = (m_params.topK > 0 && static_cast<size_t>(m_params.topK) < logits.size()) ||
                          m_params.topP < 1.0f;
    return truncate ? sampleTruncated(logits, mask, u) : sampleFull(logits, mask, u);
}

int32_t Sampler::sampleFull(std::span<const float> logits, const std::vector<bool> *mask, double u) const
{
    const float maxLogit = logits[static_cast<size_t>(argmax(logits, mask))];
    const float invT = 1.0f / m_params.temperature;
    std::vector<float> p(logits.size(), 0.0f);
    float total = 0.0f;
    int32_t lastAllowed = 0;
    for (size_t i = 0; i < logits.size(); ++i) {
        if (!allowedAt(mask, i))
            continue;
        p[i] = std::exp((logits[i] - maxLogit) * invT);
        total += p[i];
        lastAllowed = static_cast<int32_t>(i);
    }
    const float r = static_cast<float>(u * total);
    float running = 0.0f;
    for (size_t i = 0; i < logits.size(); ++i) {
        if (!allowedAt(mask, i))
            continue;
        running += p[i];
        if (running >= r)
            return static_cast<int32_t>(i);
    }
    return lastAllowed;
}

int32_t Sampler::sampleTruncated(std::span<const float> logits, const std::vector<bool> *mask, double u) const
{
    std::vector<int32_t> order;
    order.reserve(logits.size());
    for (size_t i = 0; i < logits.size(); ++i)
        if (allowedAt(mask, i))
            order.push_back(static_cast<int32_t>(i));
    // NaN ranks lowest, so the order stays a strict weak ordering whatever the logits hold.
    auto value = [&](int32_t i) {
        const float v = logits[static_cast<size_t>(i)];
        return std::isnan(v) ? -std::numeric_limits<float>::infinity() : v;
    };
    auto higher = [&](int32_t a, int32_t b) {
        const float la = value(a), lb = value(b);
        return la > lb || (la == lb && a < b);
    };
    if (order.empty()) // a mask that allows nothing: the same clear error as the greedy path
        throw Error(ErrorCode::Argument, kNothingAllowed);
    size_t keep = order.size();
    if (m_params.topK > 0 && static_cast<size_t>(m_params.topK) < keep)
        keep = static_cast<size_t>(m_params.topK);
    // Only the kept prefix needs to be in order.
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(), higher);
    order.resize(keep);

    const float maxLogit = logits[static_cast<size_t>(order.front())];
    const float invT = 1.0f / m_params.temperature;
    std::vector<float> p(keep);
    float total = 0.0f;
    for (size_t i = 0; i < keep; ++i) {
        p[i] = std::exp((logits[static_cast<size_t>(order[i])] - maxLogit) * invT);
        total += p[i];
    }
    for (float &x : p)
        x /= total;
    float cum = 0.0f;
    size_t n = 0;
    while (n < keep) {
        cum += p[n++];
        if (cum >= m_params.topP)
            break;
    }
    const float r = static_cast<float>(u * cum);
    float running = 0.0f;
    for (size_t i = 0; i < n; ++i) {
        running += p[i];
        if (running >= r)
            return order[i];
    }
    return order.front();
}

} // namespace waste::text
