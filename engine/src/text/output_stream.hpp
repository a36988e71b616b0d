// Turns generated token ids into released text and decides when generation ends:
// EOS or a caller stop token, a stop string (held back across tokens, never
// released), or max tokens. Released text is always valid UTF-8 (split sequences
// are held back until they complete). The generation loop feeds every sampled id
// to push() and stops when a step says done.
#pragma once

#include "text/stop_matcher.hpp"
#include "text/utf8_stream.hpp"
#include "waste/waste.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace waste::text {

class Tokenizer;

class OutputStream {
public:
    // `eos` is always a stop token, in addition to params.stopTokens.
    OutputStream(const Tokenizer &tokenizer, const GenParams &params, int32_t eos);

    struct Step {
        std::string text;  // newly released text (may be empty)
        bool done = false; // generation must end after this token
        FinishReason finish = FinishReason::Stop;
    };
    Step push(int32_t token);
    // Ends the stream early (cancel, context full): releases held text.
    std::string finish();

    int count() const { return m_count; }
    const std::string &text() const { return m_text; } // all released text so far
    bool done() const { return m_done; }

private:
    std::string drain(); // releases everything held back

    const Tokenizer &m_tok;
    std::vector<int32_t> m_stopTokens;
    int m_maxTokens;
    bool m_keepSpecialText;
    StopMatcher m_stops;
    Utf8StreamDecoder m_utf8;
    std::string m_text;
    int m_count = 0;
    bool m_done = false;
};

} // namespace waste::text
