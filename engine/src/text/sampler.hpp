// Picks the next token from logits exactly as the reference engine does
// (kimi-linear-math.md §5): greedy at temperature <= 0; otherwise a 64-bit LCG
// draw over the softmax at temperature T, optionally truncated by top-k and top-p.
// The same seed and the same logits give the same tokens.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace waste::text {

struct SamplerParams {
    float temperature = 0.0f; // <= 0: greedy
    float topP = 1.0f;        // >= 1: no nucleus truncation
    int topK = 0;             // 0 or >= vocabulary: no top-k truncation
    uint64_t seed = 0;        // 0: the reference's fixed default state
};

class Sampler {
public:
    static constexpr uint64_t kDefaultState = 0x853c49e6748fea9bULL;

    explicit Sampler(const SamplerParams &params = {});

    // Next token. `mask`, when given, has one entry per logit; false entries can
    // never be picked (constrained decoding). At least one entry must be allowed.
    int32_t sample(std::span<const float> logits, const std::vector<bool> *mask = nullptr);

    // The LCG: advances the state once and returns u in [0, 1).
    double nextUniform();
    uint64_t state() const { return m_state; }
    const SamplerParams &params() const { return m_params; }

    // Greedy choice: the first maximal logit (lowest id on ties), honouring `mask`.
    static int32_t argmax(std::span<const float> logits, const std::vector<bool> *mask = nullptr);
    // log softmax(logits)[id] at temperature 1, computed in double.
    static float logProb(std::span<const float> logits, int32_t id, const std::vector<bool> *mask = nullptr);

private:
    int32_t sampleFull(std::span<const float> logits, const std::vector<bool> *mask, double u) const;
    int32_t sampleTruncated(std::span<const float> logits, const std::vector<bool> *mask, double u) const;

    SamplerParams m_params;
    uint64_t m_state;
};

} // namespace waste::text
