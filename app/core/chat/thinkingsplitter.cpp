#include "chat/thinkingsplitter.h"

#include <array>

namespace {

const std::array<QString, 2> kOpen = {QStringLiteral("<think>"), QStringLiteral("<|open|>think<|sep|>")};
const std::array<QString, 2> kClose = {QStringLiteral("</think>"), QStringLiteral("<|close|>think<|sep|>")};

// Position of the first complete tag in `s` (and its length), or -1.
qsizetype findTag(const QString &s, const std::array<QString, 2> &tags, qsizetype &length)
{
    qsizetype best = -1;
    for (const QString &t : tags) {
        const qsizetype at = s.indexOf(t);
        if (at >= 0 && (best < 0 || at < best)) {
            best = at;
            length = t.size();
        }
    }
    return best;
}

// Length of the longest suffix of `s` that is a proper prefix of a tag: text that may
// still turn into a tag when the next chunk arrives.
qsizetype heldBack(const QString &s, const std::array<QString, 2> &tags)
{
    qsizetype keep = 0;
    for (const QString &t : tags)
        for (qsizetype n = qMin(s.size(), t.size() - 1); n > keep; --n)
            if (QStringView(s).right(n) == QStringView(t).left(n)) {
                keep = n;
                break;
            }
    return keep;
}

} // namespace

ThinkingSplitter::ThinkingSplitter(bool startInsideThinking)
    : m_state(startInsideThinking ? State::Thinking : State::Start), m_sawThinking(startInsideThinking)
{
}

void ThinkingSplitter::feed(const QString &chunk)
{
    m_pending += chunk;
    process(false);
}

void ThinkingSplitter::finish()
{
    process(true);
}

void ThinkingSplitter::process(bool final)
{
    for (;;) {
        qsizetype len = 0;
        if (m_state == State::Start) {
            // Only a tag at the very start (after blank space) opens the channel.
            const QString trimmed = m_pending.trimmed();
            const qsizetype at = findTag(m_pending, kOpen, len);
            if (at >= 0 && m_pending.left(at).trimmed().isEmpty()) {
                m_pending.remove(0, at + len);
                m_state = State::Thinking;
                m_sawThinking = true;
                continue;
            }
            bool couldOpen = false;
            for (const QString &t : kOpen)
                couldOpen = couldOpen || t.startsWith(trimmed);
            if (couldOpen && !final)
                return;
            m_state = State::Answer;
            continue;
        }
        if (m_state == State::Thinking) {
            const qsizetype at = findTag(m_pending, kClose, len);
            if (at >= 0) {
                m_thinking += m_pending.left(at);
                m_pending.remove(0, at + len);
                m_state = State::Answer;
                // The answer usually starts after a blank line; drop leading blank space.
                while (!m_pending.isEmpty() && m_pending.front().isSpace())
                    m_pending.remove(0, 1);
                continue;
            }
            const qsizetype keep = final ? 0 : heldBack(m_pending, kClose);
            m_thinking += m_pending.left(m_pending.size() - keep);
            m_pending.remove(0, m_pending.size() - keep);
            if (final)
                m_thinking = m_thinking.trimmed();
            return;
        }
        // Answer
        if (m_answer.isEmpty())
            while (!m_pending.isEmpty() && m_pending.front().isSpace())
                m_pending.remove(0, 1);
        m_answer += m_pending;
        m_pending.clear();
        return;
    }
}
