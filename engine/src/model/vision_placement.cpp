#include "model/vision_placement.hpp"

#include <algorithm>

#include "waste/waste.hpp"

namespace waste::vision {

std::string mediaBlockText(int width, int height)
{
    return "<|media_begin|>image " + std::to_string(width) + "x" + std::to_string(height) +
           "<|media_content|><|media_pad|><|media_end|>";
}

std::vector<int32_t> expandMediaTokens(std::span<const int32_t> tokens, int32_t mediaToken,
                                       std::span<const int> positions)
{
    const auto pads = std::count(tokens.begin(), tokens.end(), mediaToken);
    if (size_t(pads) != positions.size())
        throw Error(ErrorCode::Argument, "prompt: " + std::to_string(pads) + " image placeholder token(s) for " +
                                             std::to_string(positions.size()) +
                                             " image(s); attach images with --image, do not type <|media_pad|>");
    std::vector<int32_t> out;
    int64_t total = int64_t(tokens.size());
    for (int n : positions) total += n - 1;
    out.reserve(size_t(std::max<int64_t>(total, 0)));
    size_t k = 0;
    for (int32_t t : tokens) {
        if (t == mediaToken) out.insert(out.end(), size_t(positions[k++]), t);
        else out.push_back(t);
    }
    return out;
}

void MediaRowQueue::append(std::span<const float> rows)
{
    if (m_hidden <= 0 || rows.size() % size_t(m_hidden) != 0)
        throw Error(ErrorCode::Argument, "image rows do not match the model's hidden size");
    m_rows.insert(m_rows.end(), rows.begin(), rows.end());
}

void MediaRowQueue::clear()
{
    m_rows.clear();
    m_next = 0;
}

bool MediaRowQueue::take(int32_t token, float *out)
{
    if (token != m_token || pending() <= 0) return false;
    const float *row = &m_rows[size_t(m_next) * size_t(m_hidden)];
    std::copy(row, row + m_hidden, out);
    ++m_next;
    if (pending() == 0) clear(); // all used: the next evaluation starts a fresh queue
    return true;
}

} // namespace waste::vision
