// How image rows enter the prompt (k3-vision-math §8): the media block text, the expansion of
// each <|media_pad|> into its image's positions, and the queue of rows that stand in for the
// embedding of those positions during the forward pass.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace waste::vision {

inline constexpr int kMaxImagesPerPrompt = 32;

// "<|media_begin|>image {W}x{H}<|media_content|><|media_pad|><|media_end|>" (markup text).
std::string mediaBlockText(int width, int height);

// Replaces the k-th `mediaToken` in `tokens` by positions[k] copies of itself. The number of
// media tokens must equal positions.size(); otherwise Error(Argument) (a prompt that types
// <|media_pad|> itself does not place an image).
std::vector<int32_t> expandMediaTokens(std::span<const int32_t> tokens, int32_t mediaToken,
                                       std::span<const int> positions);

// Rows waiting to replace media-token positions, consumed in order across evaluations.
class MediaRowQueue {
public:
    void reset(int32_t mediaToken, int hidden)
    {
        m_token = mediaToken;
        m_hidden = hidden;
        clear();
    }
    void append(std::span<const float> rows); // whole rows of `hidden` values
    void clear();

    int32_t token() const { return m_token; }
    int hidden() const { return m_hidden; }
    int64_t pending() const { return m_hidden ? int64_t(m_rows.size() / size_t(m_hidden)) - m_next : 0; }

    // When `token` is the media token and rows remain: copies the next row to `out` and
    // returns true. Otherwise false (the caller uses the embedding table).
    bool take(int32_t token, float *out);

private:
    int32_t m_token = -1;
    int m_hidden = 0;
    std::vector<float> m_rows;
    int64_t m_next = 0;
};

} // namespace waste::vision
