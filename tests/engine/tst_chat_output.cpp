// Reading replies back: K3 replies (by token id, incrementally) and ChatML replies,
// plus the generic ChatML prompt.
#include <gtest/gtest.h>

#include "text/chat_format.hpp"
#include "text/chatml_template.hpp"
#include "text/k3_output_parser.hpp"
#include "text/k3_template.hpp"
#include "text/tokenizer.hpp"

using Json = nlohmann::ordered_json;
using namespace waste::text;

namespace {

const Tokenizer &r3()
{
    static const Tokenizer tok = Tokenizer::load(std::string(WASTE_FIXTURES_DIR) + "/reference-container/r3.waste");
    return tok;
}

// The tokens a model would generate for `assistant`, after a prompt that opened the
// think channel: the history rendering of that message from the think header on.
std::vector<int32_t> replyTokens(const Json &assistant)
{
    Json req = {{"messages", Json::array({assistant})}, {"add_generation_prompt", false}};
    const Segments segs = renderK3(req);
    size_t start = 0;
    for (size_t i = 0; i + 2 < segs.size(); ++i) {
        if (segs[i].text == "<|open|>" && segs[i + 1].text == "think" && segs[i + 2].text == "<|sep|>") {
            start = i + 3;
            break;
        }
    }
    return encodeSegments(r3(), Segments(segs.begin() + static_cast<std::ptrdiff_t>(start), segs.end()));
}

ChatReply parseAll(const std::vector<int32_t> &ids, bool think, ChatReply *streamed = nullptr)
{
    K3OutputParser p(r3(), think);
    ChatReply s;
    bool done = false;
    for (int32_t id : ids) {
        const ReplyDelta d = p.feed(id);
        s.reasoning += d.reasoning;
        s.content += d.content;
        s.toolCalls.insert(s.toolCalls.end(), d.toolCalls.begin(), d.toolCalls.end());
        done = done || d.done;
    }
    EXPECT_TRUE(done);
    if (streamed)
        *streamed = s;
    return p.reply();
}

} // namespace

TEST(K3OutputParser, RoundTripsReasoningContentAndTypedToolCalls)
{
    const Json assistant = Json::parse(R"({"role":"assistant","reasoning_content":"Let me think… ok.",
      "content":"Calling tools: café 🙂",
      "tool_calls":[
        {"id":"x","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\",\"days\":3,\"hot\":false,\"extra\":null,\"opts\":{\"u\":\"c\"},\"list\":[1,\"a\"]}"}},
        {"id":"y","type":"function","function":{"name":"ping","arguments":""}},
        {"id":"z","type":"function","function":{"name":"raw","arguments":"{broken"}}]})");
    ChatReply streamed;
    const ChatReply r = parseAll(replyTokens(assistant), true, &streamed);
    EXPECT_EQ(r.reasoning, "Let me think… ok.");
    EXPECT_EQ(r.content, "Calling tools: café 🙂");
    ASSERT_EQ(r.toolCalls.size(), 3u);
    EXPECT_EQ(r.toolCalls[0].name, "get_weather");
    EXPECT_EQ(Json::parse(r.toolCalls[0].arguments),
              Json::parse(R"({"city":"Paris","days":3,"hot":false,"extra":null,"opts":{"u":"c"},"list":[1,"a"]})"));
    EXPECT_EQ(r.toolCalls[1].name, "ping");
    EXPECT_EQ(r.toolCalls[1].arguments, "{}");
    EXPECT_EQ(r.toolCalls[2].arguments, "{broken");
    EXPECT_EQ(r.toolCalls[0].id, "call_1");
    EXPECT_EQ(r.toolCalls[2].id, "call_3");
    // The incremental deltas add up to the same reply.
    EXPECT_EQ(streamed.reasoning, r.reasoning);
    EXPECT_EQ(streamed.content, r.content);
    EXPECT_EQ(streamed.toolCalls.size(), 3u);
}

TEST(K3OutputParser, EscapedAttributeValuesReadBackAsWritten)
{
    // The renderer escapes '&' and '"' in attribute values (tool names, argument keys); the
    // parser reads the model's escaped values back to the original text.
    const Json assistant = Json::parse(R"({"role":"assistant","content":"",
      "tool_calls":[{"id":"x","type":"function","function":{"name":"a&b\"c","arguments":"{\"k&\\\"q\":\"&amp;\"}"}}]})");
    const ChatReply r = parseAll(replyTokens(assistant), true);
    ASSERT_EQ(r.toolCalls.size(), 1u);
    EXPECT_EQ(r.toolCalls[0].name, "a&b\"c");
    EXPECT_EQ(Json::parse(r.toolCalls[0].arguments), Json::parse(R"({"k&\"q":"&amp;"})"));
}

TEST(K3OutputParser, SpelledOutMarkupStaysText)
{
    const Json assistant = Json::parse(R"({"role":"assistant","content":"a <|close|>response<|sep|> b"})");
    const ChatReply r = parseAll(replyTokens(assistant), true);
    EXPECT_EQ(r.content, "a <|close|>response<|sep|> b");
    EXPECT_TRUE(r.reasoning.empty());
    EXPECT_TRUE(r.toolCalls.empty());
}

TEST(K3OutputParser, ResponseChannelStartAndTruncatedOutput)
{
    const Tokenizer &tok = r3();
    // No thinking: the prompt opened the response channel.
    std::vector<int32_t> ids = tok.encode("Plain answer.");
    auto more = tok.encode("<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"f\" index=\"1\"<|sep|>"
                           "<|open|>argument key=\"q\" type=\"string\"<|sep|>half",
                           true);
    ids.insert(ids.end(), more.begin(), more.end());
    K3OutputParser p(tok, false);
    for (int32_t id : ids)
        p.feed(id);
    const ReplyDelta end = p.finish(); // the token limit hit mid-argument
    EXPECT_EQ(p.reply().content, "Plain answer.");
    ASSERT_EQ(end.toolCalls.size(), 1u);
    EXPECT_EQ(end.toolCalls[0].name, "f");
    EXPECT_EQ(Json::parse(end.toolCalls[0].arguments), Json::parse(R"({"q":"half"})"));
}

TEST(K3OutputParser, StrayStructureIsNeverText)
{
    // A separator outside a header, and a close of an element that is not open, are markup
    // the model wrote out of place: dropped, never shown as text.
    const Tokenizer &tok = r3();
    K3OutputParser p(tok, false);
    for (int32_t id : tok.encode("x<|sep|>y<|close|>nothing<|sep|>z<|media_begin|>!<|end_of_msg|>", true))
        p.feed(id);
    EXPECT_EQ(p.reply().content, "xyz!");
}

TEST(ChatMl, RendersMarkersAsMarkupAndTextAsText)
{
    const Json req = Json::parse(R"({"messages":[{"role":"system","content":"Be brief."},
        {"role":"user","content":"<|im_end|> hi"}],
        "tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]})");
    const Segments s = renderChatMl(req);
    ASSERT_GE(s.size(), 4u);
    EXPECT_EQ(s.front(), (Segment{"<|im_start|>", true}));
    EXPECT_EQ(s[s.size() - 2], (Segment{"<|im_start|>", true}));
    EXPECT_EQ(s.back(), (Segment{"assistant\n", true}));
    bool found = false;
    for (const Segment &x : s)
        found = found || (x.text == "<|im_end|> hi" && !x.markup);
    EXPECT_TRUE(found);
    EXPECT_TRUE(hasK3Markup(r3()));
}

TEST(ChatFormat, DecidedOnceFromTheContainer)
{
    // K3 for kimi-k3 containers whose vocabulary has K3's markup; otherwise ChatML when the
    // container ships a chat template; otherwise a plain transcript.
    EXPECT_EQ(decideChatFormat("kimi-linear", &r3(), false), waste::ChatFormat::Plain);
    EXPECT_EQ(decideChatFormat("kimi-linear", &r3(), true), waste::ChatFormat::ChatMl);
    EXPECT_EQ(decideChatFormat("kimi-k3", &r3(), false), waste::ChatFormat::K3);
    EXPECT_EQ(decideChatFormat("kimi-k3", nullptr, true), waste::ChatFormat::ChatMl);
    const std::string fixtures = WASTE_FIXTURES_DIR;
    EXPECT_EQ(waste::containerChatFormat(fixtures + "/k3-container/k3s1.waste"), waste::ChatFormat::K3);
    EXPECT_EQ(waste::containerChatFormat(fixtures + "/reference-container/r3.waste"), waste::ChatFormat::Plain);
    EXPECT_STREQ(waste::chatFormatName(waste::ChatFormat::K3), "k3");
    EXPECT_STREQ(waste::chatFormatName(waste::ChatFormat::ChatMl), "chatml");
    EXPECT_STREQ(waste::chatFormatName(waste::ChatFormat::Plain), "plain");
}

TEST(ChatMl, ParsesThinkingAndToolCalls)
{
    const ChatReply r = parseChatMlReply(
        "<think>hmm</think>\nSure.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>\n"
        "<tool_call>not json</tool_call>");
    EXPECT_EQ(r.reasoning, "hmm");
    ASSERT_EQ(r.toolCalls.size(), 1u);
    EXPECT_EQ(r.toolCalls[0].name, "f");
    EXPECT_EQ(Json::parse(r.toolCalls[0].arguments), Json::parse(R"({"a":1})"));
    EXPECT_EQ(r.content, "Sure.\n\nnot json"); // not a call: its words, not its markers
}
