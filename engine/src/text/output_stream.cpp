#include "text/output_stream.hpp"

#include "text/tokenizer.hpp"

#include <algorithm>

namespace waste::text {

OutputStream::OutputStream(const Tokenizer &tokenizer, const GenParams &params, int32_t eos)
    : m_tok(tokenizer), m_stopTokens(params.stopTokens), m_maxTokens(params.maxTokens),
      m_keepSpecialText(params.keepSpecialText), m_stops(params.stopStrings)
{
    m_stopTokens.push_back(eos);
}

std::string OutputStream::drain()
{
    std::string out = m_utf8.push(m_stops.flush());
    out += m_utf8.flush();
    return out;
}

OutputStream::Step OutputStream::push(int32_t token)
{
    Step step;
    if (m_done) {
        step.done = true;
        return step;
    }
    ++m_count;
    if (std::find(m_stopTokens.begin(), m_stopTokens.end(), token) != m_stopTokens.end()) {
        step.text = drain();
        step.done = true;
        step.finish = FinishReason::Stop;
    } else {
        const StopMatcher::Result r = m_stops.push(m_keepSpecialText ? m_tok.piece(token) : m_tok.textPiece(token));
        step.text = m_utf8.push(r.text);
        if (r.stopped) {
            step.text += m_utf8.flush();
            step.done = true;
            step.finish = FinishReason::Stop;
        } else if (m_maxTokens > 0 && m_count >= m_maxTokens) {
            step.text += drain();
            step.done = true;
            step.finish = FinishReason::Length;
        }
    }
    m_done = step.done;
    m_text += step.text;
    return step;
}

std::string OutputStream::finish()
{
    std::string out = m_done ? std::string() : drain();
    m_done = true;
    m_text += out;
    return out;
}

} // namespace waste::text
