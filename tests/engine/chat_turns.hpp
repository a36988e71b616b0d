// A multi-turn chat driven the way a front end drives it (render the conversation, reuse
// what the session holds, read the rest, answer), on a container, with a fresh read of
// every prompt beside it: what tst_prefix_reuse checks and bench_prefix_reuse tabulates.
// The answers are the tokens a model writes (text and markup tokenised piece by piece, the
// end-of-message stop sampled but never read), so a renderer that rewrote what the model
// wrote shows up as a shorter reuse.
#pragma once

#include "waste/chat.hpp"
#include "waste/prefix.hpp"
#include "waste/waste.hpp"

#include <nlohmann/json.hpp>

#include <cstring>
#include <string>
#include <vector>

namespace chat_turns {

inline bool sameBits(const std::vector<float> &a, const std::vector<float> &b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

inline std::vector<int32_t> tokenize(waste::Model &m, const waste::ChatSegments &segments)
{
    std::vector<int32_t> ids;
    for (const waste::ChatSegment &s : segments) {
        const std::vector<int32_t> part = m.tokenize(s.text, s.markup);
        ids.insert(ids.end(), part.begin(), part.end());
    }
    return ids;
}

// How a model's answer continues the prompt, in pieces it writes one after another.
enum class Format { ChatMl, K3Thinking, K3Plain };

// The answer as the model's tokens; the last one is the stop it samples and never reads.
inline std::vector<int32_t> answerTokens(waste::Model &m, Format f, const std::string &reasoning, const std::string &content)
{
    waste::ChatSegments s;
    const auto tag = [&](const char *mark, const char *name) {
        s.push_back({mark, true});
        s.push_back({name, false});
        s.push_back({"<|sep|>", true});
    };
    if (f == Format::ChatMl) {
        s.push_back({"<think>" + reasoning + "</think>" + content, false});
        s.push_back({"<|im_end|>", true});
    } else {
        if (f == Format::K3Thinking) {
            s.push_back({reasoning, false});
            tag("<|close|>", "think");
            tag("<|open|>", "response");
        }
        s.push_back({content, false});
        tag("<|close|>", "response");
        tag("<|close|>", "message");
        s.push_back({"<|end_of_msg|>", true});
    }
    return tokenize(m, s);
}

struct TurnFigures {
    size_t promptTokens = 0;
    int reused = 0;
    int expectedReuse = 0;
    size_t common = 0; // leading tokens the prompt shares with what the session read
    bool identical = false;
};

// `turns` turns; `keepReasoning`: the client sends the reasoning back (reasoning_content, or
// the <think> block inside a ChatML answer).
inline std::vector<TurnFigures> converse(const std::string &container, Format f, bool keepReasoning, int turns = 6)
{
    auto live = waste::Model::open(container);
    auto fresh = waste::Model::open(container);
    const waste::ChatFormat format = f == Format::ChatMl ? waste::ChatFormat::ChatMl : waste::ChatFormat::K3;
    nlohmann::json messages = nlohmann::json::array({{{"role", "system"}, {"content", "You are terse."}}});
    std::vector<TurnFigures> out;
    int expected = 0;
    for (int turn = 1; turn <= turns; ++turn) {
        messages.push_back({{"role", "user"}, {"content", "Question " + std::to_string(turn) + ": why is the sky blue?"}});
        nlohmann::json request = {{"messages", messages}};
        if (f != Format::ChatMl)
            request["thinking"] = f == Format::K3Thinking;
        const std::vector<int32_t> prompt = tokenize(*live, waste::renderChat(format, request.dump()));

        TurnFigures t;
        t.promptTokens = prompt.size();
        t.expectedReuse = expected;
        const std::vector<int32_t> read = waste::readTokens(*live);
        while (t.common < read.size() && t.common < prompt.size() && read[t.common] == prompt[t.common])
            ++t.common;
        t.reused = waste::reusePrefix(*live, prompt);
        const std::vector<float> a = live->eval(std::span<const int32_t>(prompt).subspan(size_t(t.reused)));
        fresh->resetState();
        t.identical = sameBits(a, fresh->eval(prompt));
        out.push_back(t);

        // The answer: the session keeps a checkpoint where it starts (generate() does the
        // same), reads every token of it but the stop.
        waste::markCheckpoint(*live);
        const std::string reasoning = "Thinking " + std::to_string(turn) + " about scattering.";
        const std::string content = "Rayleigh scattering, turn " + std::to_string(turn) + ".";
        const std::vector<int32_t> answer = answerTokens(*live, f, reasoning, content);
        live->eval(std::span<const int32_t>(answer).first(answer.size() - 1));

        nlohmann::json back = {{"role", "assistant"}};
        if (f == Format::ChatMl) {
            back["content"] = keepReasoning ? "<think>" + reasoning + "</think>" + content : content;
        } else {
            back["content"] = content;
            if (keepReasoning)
                back["reasoning_content"] = reasoning;
        }
        messages.push_back(back);
        // Where the format keeps the answer as written, the next turn reads only its new
        // tokens; where it rewrites it, it goes back to the answer's start.
        const bool rewritten = (f == Format::ChatMl || f == Format::K3Thinking) && !keepReasoning;
        expected = int(prompt.size() + (rewritten ? 0 : answer.size() - 1));
    }
    return out;
}

} // namespace chat_turns
