#include "session/sequence_decoder.hpp"

#include "text/tokenizer.hpp"

#include <algorithm>

namespace waste::session {
namespace {

text::SamplerParams samplerParams(const GenParams &p)
{
    text::SamplerParams sp;
    sp.temperature = p.temperature;
    sp.topP = p.topP;
    sp.topK = p.topK;
    sp.seed = p.seed;
    return sp;
}

} // namespace

SequenceDecoder::SequenceDecoder(const text::Tokenizer &tokenizer, const GenParams &params)
    : m_tok(tokenizer), m_params(params), m_sampler(samplerParams(params))
{
    // With a reply parser, stop strings apply to the parsed content (ReplyStream), not to the raw text.
    GenParams textParams = params;
    if (params.reply) {
        m_reply.emplace(params.reply, params.stopStrings);
        textParams.stopStrings.clear();
    }
    m_out.emplace(tokenizer, textParams, tokenizer.eosId());
}

SequenceDecoder::Next SequenceDecoder::step(const std::vector<float> &logits, bool roomLeft, const TokenCallback &onToken,
                                            const std::function<Stats()> &stats)
{
    const std::vector<bool> *maskPtr = nullptr;
    if (m_params.constraint) {
        m_mask.assign(logits.size(), false);
        m_params.constraint->allowed(m_mask);
        maskPtr = &m_mask;
    }
    const int32_t id = m_sampler.sample(logits, maskPtr);
    const float lp = text::Sampler::logProb(logits, id, maskPtr);
    if (m_params.constraint)
        m_params.constraint->accept(id);
    m_res.tokens.push_back(id);
    text::OutputStream::Step st = m_out->push(id);
    bool done = st.done;
    m_res.finish = st.finish;
    if (!done && m_params.constraint && m_params.constraint->complete()) {
        st.text += m_out->finish();
        done = true;
        m_res.finish = FinishReason::Stop;
    }
    TokenEvent ev;
    if (m_reply) {
        const bool stopToken = id == m_tok.eosId() ||
                               std::find(m_params.stopTokens.begin(), m_params.stopTokens.end(), id) != m_params.stopTokens.end();
        ev.reply = m_reply->push(id, stopToken);
        if (!done && m_reply->ended()) {
            st.text += m_out->finish();
            done = true;
            m_res.finish = FinishReason::Stop;
        }
        if (done)
            ev.reply.append(m_reply->finish());
    }
    ev.index = static_cast<int>(m_res.tokens.size()) - 1;
    ev.token = id;
    ev.text = st.text;
    ev.logprob = lp;
    ev.stats = stats();
    const bool keepGoing = onToken ? onToken(ev) : true;
    if (!done && !keepGoing) {
        m_out->finish();
        m_res.finish = FinishReason::Cancelled;
        return Next::End;
    }
    if (done && m_res.finish != FinishReason::Length)
        return Next::End;
    if (!roomLeft) {
        m_out->finish();
        m_res.finish = done ? m_res.finish : FinishReason::ContextFull;
        return Next::End;
    }
    return done ? Next::FeedThenEnd : Next::Feed;
}

void SequenceDecoder::cancelled()
{
    m_out->finish();
    m_res.finish = FinishReason::Cancelled;
}

GenResult SequenceDecoder::finish(int promptTokens, const Stats &stats)
{
    GenResult res = std::move(m_res);
    res.text = m_out->text();
    if (m_reply) {
        m_reply->finish();
        res.reply = m_reply->reply();
    }
    res.promptTokens = promptTokens;
    res.stats = stats;
    return res;
}

} // namespace waste::session
