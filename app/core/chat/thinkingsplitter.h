// ThinkingSplitter: separates a model's thinking channel from its answer while the text
// streams in. Tags may arrive split across batches, so a possible tag prefix is held back
// until it is decided. Two conventions are understood: <think>…</think> and the K3
// channel markers <|open|>think<|sep|> … <|close|>think<|sep|>. When the prompt already
// opened the channel (a template that ends inside it) the splitter starts inside.
#pragma once

#include <QString>

class ThinkingSplitter {
public:
    explicit ThinkingSplitter(bool startInsideThinking = false);

    void feed(const QString &chunk);
    // Call after the last chunk: whatever was held back is flushed.
    void finish();

    QString thinking() const { return m_thinking; }
    QString answer() const { return m_answer; }
    bool inThinking() const { return m_state == State::Thinking; }
    bool sawThinking() const { return m_sawThinking; }

private:
    enum class State { Start, Thinking, Answer };
    void process(bool final);

    State m_state;
    bool m_sawThinking = false;
    QString m_pending;
    QString m_thinking;
    QString m_answer;
};
