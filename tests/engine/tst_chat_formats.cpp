// The public chat layer's description of formats (chatFormatTraits, namedChatFormats) and
// the two renderings every front end shares: the plain transcript of a container without a
// template, and the part of a rendered request that a later one shares (renderChatPrompt).
#include "waste/chat.hpp"
#include "waste/waste.hpp"

#include <gtest/gtest.h>

#include <set>

using namespace waste;

namespace {

std::string joined(const ChatSegments &segments, size_t count = SIZE_MAX)
{
    std::string s;
    for (size_t i = 0; i < segments.size() && i < count; ++i)
        s += segments[i].text;
    return s;
}

const char *const kConversation = R"({"messages":[
    {"role":"system","content":"Be brief."},
    {"role":"user","content":"What time is it?"},
    {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",
      "function":{"name":"get_time","arguments":"{\"tz\":\"UTC\"}"}}]},
    {"role":"tool","tool_call_id":"c1","content":"12:00"}],
  "tools":[{"type":"function","function":{"name":"get_time","parameters":{"type":"object"}}}],
  "tool_choice":"required"})";

} // namespace

TEST(ChatFormats, EveryNamedFormatHasOneNameAndIsFoundByIt)
{
    std::set<std::string> names;
    for (ChatFormat f : namedChatFormats()) {
        const ChatFormatTraits &t = chatFormatTraits(f);
        EXPECT_TRUE(t.templated) << t.name;
        EXPECT_STREQ(t.name, chatFormatName(f));
        EXPECT_TRUE(names.insert(t.name).second) << t.name;
        EXPECT_EQ(chatFormatNamed(t.name), f);
        EXPECT_NE(std::string(t.description), "");
    }
    EXPECT_EQ(names.size(), 13u);
    EXPECT_FALSE(chatFormatNamed("plain")); // the absence of a template is not a choice
    EXPECT_FALSE(chatFormatNamed("K3"));
    EXPECT_FALSE(chatFormatTraits(ChatFormat::Plain).templated);
    EXPECT_TRUE(chatFormatTraits(ChatFormat::K3).replaysParsedTurns);
    EXPECT_FALSE(chatFormatTraits(ChatFormat::ChatMl).replaysParsedTurns);
    EXPECT_EQ(chatFormatNameList(),
              "k3, chatml, deepseek, deepseek-v3.1, kimi-k2, kimi-k2-instruct, qwen3, harmony, glm-4.5, glm-4.7, qwen3.5, "
              "deepseek-v3.2 or deepseek-v4");
    EXPECT_TRUE(chatFormatTraits(genericChatFormat()).templated);
}

TEST(ChatFormats, PlainTranscriptIsTextWithToolsDeclared)
{
    const ChatSegments s = renderChat(ChatFormat::Plain, kConversation);
    for (const ChatSegment &seg : s)
        EXPECT_FALSE(seg.markup) << seg.text;
    const std::string all = joined(s);
    EXPECT_EQ(all.find("system: You can call these tools:\n{\"name\":\"get_time\",\"parameters\":{\"type\":\"object\"}}\n"), 0u);
    EXPECT_NE(all.find("You must call a tool now.\n\nsystem: Be brief.\n\nuser: What time is it?\n\n"), std::string::npos);
    EXPECT_NE(all.find("assistant: <tool_call>{\"arguments\":{\"tz\":\"UTC\"},\"name\":\"get_time\"}</tool_call>\n\n"),
              std::string::npos);
    EXPECT_NE(all.find("tool (c1): 12:00\n\nassistant: "), std::string::npos);
    EXPECT_TRUE(all.ends_with("\n\nassistant: "));
    // Markers a person types stay text.
    const ChatSegments typed = renderChat(ChatFormat::Plain, R"({"messages":[{"role":"user","content":"<|im_end|>"}]})");
    ASSERT_EQ(typed.size(), 4u);
    EXPECT_EQ(typed[1], (ChatSegment{"<|im_end|>", false}));
}

TEST(ChatFormats, PlainPlacesImagesAndRefusesAMismatch)
{
    const char *req = R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"file:///a.png"}},
        {"type":"text","text":"what is this"}]}]})";
    const ChatSegments s = renderChat(ChatFormat::Plain, req, {"<IMG>"});
    ASSERT_EQ(s.size(), 5u);
    EXPECT_EQ(s[0], (ChatSegment{"user: ", false}));
    EXPECT_EQ(s[1], (ChatSegment{"<IMG>", true}));
    EXPECT_EQ(s[2], (ChatSegment{"what is this", false}));
    EXPECT_THROW(renderChat(ChatFormat::Plain, req, {"<IMG>", "<IMG>"}), Error);
    EXPECT_THROW(renderChat(ChatFormat::Plain, R"({"messages":[{"content":"x"}]})"), Error);
    EXPECT_THROW(renderChat(ChatFormat::Plain, R"({"messages":3})"), Error);
}

TEST(ChatFormats, SharedSegmentsEndWhereTheLastMessageStarts)
{
    for (ChatFormat f : {ChatFormat::Plain, ChatFormat::ChatMl, ChatFormat::K3, ChatFormat::Qwen3, ChatFormat::DeepSeek,
                         ChatFormat::DeepSeekV32, ChatFormat::DeepSeekV4}) {
        const ChatPrompt p = renderChatPrompt(f, kConversation);
        EXPECT_EQ(p.segments, renderChat(f, kConversation)) << chatFormatName(f);
        ASSERT_GT(p.sharedSegments, 0u) << chatFormatName(f);
        ASSERT_LT(p.sharedSegments, p.segments.size()) << chatFormatName(f);
        // The shared part holds the call, and the tool result comes after it.
        EXPECT_NE(joined(p.segments, p.sharedSegments).find("get_time"), std::string::npos) << chatFormatName(f);
        EXPECT_EQ(joined(p.segments, p.sharedSegments).find("12:00"), std::string::npos) << chatFormatName(f);
        EXPECT_NE(joined(p.segments).find("12:00"), std::string::npos) << chatFormatName(f);
    }
    // A last message without words tells nothing apart.
    EXPECT_EQ(renderChatPrompt(ChatFormat::ChatMl, R"({"messages":[{"role":"user","content":""}]})").sharedSegments, 0u);
    EXPECT_TRUE(renderChatPrompt(ChatFormat::K3, R"({"messages":[{"role":"user","content":"hi"}]})").opensThinking);
    EXPECT_FALSE(renderChatPrompt(ChatFormat::Plain, R"({"messages":[{"role":"user","content":"hi"}]})").opensThinking);
}

// GLM-4.7's layout (docs/architectures/glm4-moe.md, as ollama's glm47 renderer writes it): the
// markers with no newline after them, a call on one line, a bare </think> for an answer whose
// reasoning is dropped, and the generation prompt opening <think>; "clear_thinking": false keeps
// the earlier reasoning, thinking off closes the prompt with </think> and adds no /nothink.
TEST(ChatFormats, Glm47WritesEachTurnOnOneLine)
{
    const std::string req = R"({"messages":[
        {"role":"user","content":"Weather?"},
        {"role":"assistant","content":"","reasoning_content":"look it up",
         "tool_calls":[{"id":"a","type":"function","function":{"name":"get_weather","arguments":{"location":"Tokyo","days":2}}}]},
        {"role":"tool","tool_call_id":"a","content":"{\"t\":20}"},
        {"role":"assistant","content":"20 degrees.","reasoning_content":"easy"},
        {"role":"user","content":"Thanks"}])";
    EXPECT_EQ(joined(renderChat(ChatFormat::Glm47, req + "}")),
              "[gMASK]<sop><|user|>Weather?<|assistant|></think><tool_call>get_weather<arg_key>location</arg_key>"
              "<arg_value>Tokyo</arg_value><arg_key>days</arg_key><arg_value>2</arg_value></tool_call><|observation|>"
              "<tool_response>{\"t\":20}</tool_response><|assistant|></think>20 degrees.<|user|>Thanks<|assistant|><think>");
    const std::string kept = joined(renderChat(ChatFormat::Glm47, req + R"(,"clear_thinking":false})"));
    EXPECT_NE(kept.find("<|assistant|><think>look it up</think><tool_call>"), std::string::npos) << kept;
    EXPECT_NE(kept.find("<|assistant|><think>easy</think>20 degrees."), std::string::npos) << kept;
    EXPECT_EQ(joined(renderChat(ChatFormat::Glm47, req + R"(,"thinking":{"type":"enabled","clear_thinking":false}})")), kept);
    const std::string off = joined(renderChat(ChatFormat::Glm47, req + R"(,"enable_thinking":false})"));
    EXPECT_TRUE(off.ends_with("<|user|>Thanks<|assistant|></think>")) << off;
    EXPECT_EQ(off.find("/nothink"), std::string::npos) << off;
    // GLM-4.5's layout of the same conversation keeps its newlines.
    EXPECT_NE(joined(renderChat(ChatFormat::Glm45, req + "}")).find("<|user|>\nWeather?<|assistant|>\n<think></think>\n<tool_call>get_weather\n"),
              std::string::npos);
}
