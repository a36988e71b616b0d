// The sampling side of one generation, token by token: sampler, constraint, output text,
// reply parser, stop rules and the result. Model::generate and a Batch's sequences
// both drive it, so a sequence decoded in a batch picks exactly the tokens it would alone.
#pragma once

#include "text/output_stream.hpp"
#include "text/reply_stream.hpp"
#include "text/sampler.hpp"
#include "waste/waste.hpp"

#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace waste::text {
class Tokenizer;
}

namespace waste::session {

class SequenceDecoder {
public:
    SequenceDecoder(const text::Tokenizer &tokenizer, const GenParams &params);

    // What the caller does after a token: feed it to the state and come back with the
    // logits after it (Feed), feed it and then end (FeedThenEnd: a length stop still
    // feeds, so the session can continue), or end now.
    enum class Next { Feed, FeedThenEnd, End };
    // Picks the next token from `logits` (the state's, after the last token fed), reports
    // it to onToken (stats: the counters to show with it) and decides. roomLeft: the
    // state has a position left for the token (false: the context is full).
    Next step(const std::vector<float> &logits, bool roomLeft, const TokenCallback &onToken,
              const std::function<Stats()> &stats);
    // Feeding the token was cancelled: the generation ends as cancelled.
    void cancelled();
    int32_t lastToken() const { return m_res.tokens.back(); }
    int generated() const { return static_cast<int>(m_res.tokens.size()); }
    // The result once ended (call once).
    GenResult finish(int promptTokens, const Stats &stats);

private:
    const text::Tokenizer &m_tok;
    GenParams m_params;
    text::Sampler m_sampler;
    std::optional<text::ReplyStream> m_reply;
    std::optional<text::OutputStream> m_out;
    std::vector<bool> m_mask;
    GenResult m_res;
};

} // namespace waste::session
