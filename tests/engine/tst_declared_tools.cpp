// The reply parser for a request with declared tools (text/declared_tools_parser): only
// declared functions are calls, other calls are shown as text, and outside K3 a bare JSON
// call is read whole at the end. The inner parser is scripted (each token stands for one
// step of a format's parser), so every rule is checked apart from any model.
#include "text/argument_types.hpp"
#include "text/declared_tools_parser.hpp"

#include <gtest/gtest.h>

#include <deque>

using namespace waste;
using waste::text::DeclaredToolsParser;

namespace {

const char *const kTools = R"([{"type":"function","function":{"name":"get_weather",
    "parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},
    {"type":"function","function":{"name":"get_time"}}])";

// A parser that returns one scripted step per fed token, and the last one at finish().
class Scripted : public ReplyParser {
public:
    explicit Scripted(std::deque<ReplyDelta> steps, ReplyDelta last = {}) : m_steps(std::move(steps)), m_last(std::move(last)) {}
    ReplyDelta feed(int32_t) override
    {
        if (m_steps.empty())
            return {};
        ReplyDelta d = m_steps.front();
        m_steps.pop_front();
        return d;
    }
    ReplyDelta finish() override { return m_last; }
    const ChatReply &reply() const override { return m_reply; }

private:
    std::deque<ReplyDelta> m_steps;
    ReplyDelta m_last;
    ChatReply m_reply;
};

ReplyDelta content(const std::string &text)
{
    ReplyDelta d;
    d.content = text;
    return d;
}

ReplyDelta call(const std::string &name, const std::string &args)
{
    ReplyDelta d;
    d.toolCalls.push_back({"call_9", name, args});
    return d;
}

// Feeds every scripted step, then finishes; returns the deltas in order.
std::vector<ReplyDelta> run(DeclaredToolsParser &p, size_t steps)
{
    std::vector<ReplyDelta> out;
    for (size_t i = 0; i < steps; ++i)
        out.push_back(p.feed(0));
    out.push_back(p.finish());
    return out;
}

} // namespace

TEST(DeclaredTools, DeclaredCallsPassAndOthersBecomeText)
{
    DeclaredToolsParser p(std::make_unique<Scripted>(std::deque<ReplyDelta>{
                              content("Checking."), call("get_weather", R"({"city":"Oslo"})"), call("format_disk", R"({"all":true})")}),
                          ChatFormat::K3, kTools);
    const std::vector<ReplyDelta> d = run(p, 3);
    EXPECT_EQ(d[0].content, "Checking."); // K3: nothing is held
    ASSERT_EQ(d[1].toolCalls.size(), 1u);
    EXPECT_EQ(d[1].toolCalls[0].id, "call_1");
    EXPECT_EQ(d[1].toolCalls[0].name, "get_weather");
    EXPECT_TRUE(d[2].toolCalls.empty());
    EXPECT_EQ(d[2].content, R"({"arguments":{"all":true},"name":"format_disk"})"); // no markup around it
    EXPECT_EQ(p.reply().content, std::string("Checking.") + d[2].content);
    EXPECT_EQ(p.reply().toolCalls.size(), 1u);
}

// A call of an undeclared function cut off mid-character (the token limit came inside a
// four-byte character of its arguments) is shown as text with U+FFFD, not thrown about: the
// server once answered such a request with a 500.
TEST(DeclaredTools, AnUndeclaredCallCutMidCharacterIsText)
{
    DeclaredToolsParser p(std::make_unique<Scripted>(std::deque<ReplyDelta>{call("format_disk", "{\"all\":\"\xF3")}),
                          ChatFormat::K3, kTools);
    std::vector<ReplyDelta> d;
    ASSERT_NO_THROW(d = run(p, 1));
    EXPECT_TRUE(d[0].toolCalls.empty());
    EXPECT_EQ(d[0].content, "{\"arguments\":\"{\\\"all\\\":\\\"\xEF\xBF\xBD\",\"name\":\"format_disk\"}");
}

// Arguments a format writes one element each keep the model's bytes; those that are not
// UTF-8 come out as U+FFFD in the arguments' JSON.
TEST(DeclaredTools, ArgumentTextThatIsNotUtf8IsReplaced)
{
    const std::set<std::string> strings = {"q"};
    std::string json;
    ASSERT_NO_THROW(json = waste::text::argumentsJson({{"q", "ab\xF3"}, {"n", "\xF3"}}, &strings));
    EXPECT_EQ(json, "{\"q\":\"ab\xEF\xBF\xBD\",\"n\":\"\xEF\xBF\xBD\"}");
}

TEST(DeclaredTools, NoToolsMeansEveryCallIsText)
{
    for (const char *tools : {"", "[]"}) {
        DeclaredToolsParser p(std::make_unique<Scripted>(std::deque<ReplyDelta>{call("get_time", "{}")}), ChatFormat::ChatMl, tools);
        run(p, 1);
        EXPECT_TRUE(p.reply().toolCalls.empty());
        EXPECT_EQ(p.reply().content, R"({"arguments":{},"name":"get_time"})");
    }
}

TEST(DeclaredTools, BareJsonCallIsHeldAndReadAtTheEnd)
{
    for (ChatFormat f : {ChatFormat::ChatMl, ChatFormat::Plain, ChatFormat::Qwen3, ChatFormat::DeepSeek}) {
        DeclaredToolsParser p(std::make_unique<Scripted>(std::deque<ReplyDelta>{
                                  content("\n "), content(R"({"name":"get_weather",)"), content(R"("arguments":{"city":"Rome"}})")}),
                              f, kTools);
        const std::vector<ReplyDelta> d = run(p, 3);
        for (size_t i = 0; i < 3; ++i)
            EXPECT_TRUE(d[i].empty()) << chatFormatName(f) << " step " << i;
        ASSERT_EQ(d[3].toolCalls.size(), 1u) << chatFormatName(f);
        EXPECT_EQ(d[3].toolCalls[0].name, "get_weather");
        EXPECT_EQ(d[3].toolCalls[0].arguments, R"({"city":"Rome"})");
        EXPECT_TRUE(p.reply().content.empty());
    }
}

TEST(DeclaredTools, BareJsonForms)
{
    const std::set<std::string> declared{"get_weather", "get_time"};
    auto calls = text::bareJsonCalls(R"([{"name":"get_time","arguments":{}},{"name":"get_weather","parameters":{"city":"X"}}])", declared);
    ASSERT_EQ(calls.size(), 2u);
    EXPECT_EQ(calls[1].arguments, R"({"city":"X"})");
    calls = text::bareJsonCalls(R"({"name":"get_time","arguments":"{\"tz\": \"UTC\"}"})", declared);
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].arguments, R"({"tz":"UTC"})");
    calls = text::bareJsonCalls(R"({"name":"get_time"})", declared);
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].arguments, "{}");
    // Undeclared names, one bad call in an array, arguments that are not an object, broken
    // JSON, an object that is not a call and an empty array are not calls.
    for (const char *text : {R"({"name":"rm_rf","arguments":{}})", R"([{"name":"get_time"},{"name":"rm_rf"}])",
                             R"({"name":"get_time","arguments":"[1]"})", R"({"name":"get_time","arguments":3})",
                             R"({"name":"get_time")", R"({"city":"Oslo"})", "[]"})
        EXPECT_TRUE(text::bareJsonCalls(text, declared).empty()) << text;
}

TEST(DeclaredTools, JsonThatIsNotACallIsReleasedAsText)
{
    DeclaredToolsParser p(std::make_unique<Scripted>(std::deque<ReplyDelta>{content("{not json"), content(" at all")}),
                          ChatFormat::ChatMl, kTools);
    const std::vector<ReplyDelta> d = run(p, 2);
    EXPECT_TRUE(d[0].empty());
    EXPECT_TRUE(d[1].empty());
    EXPECT_EQ(d[2].content, "{not json at all");
    EXPECT_TRUE(p.reply().toolCalls.empty());
}

TEST(DeclaredTools, TextStreamsAtOnce)
{
    DeclaredToolsParser p(std::make_unique<Scripted>(std::deque<ReplyDelta>{content("  "), content("Sure"), content(" {x}")}),
                          ChatFormat::ChatMl, kTools);
    const std::vector<ReplyDelta> d = run(p, 3);
    EXPECT_TRUE(d[0].empty()); // blanks wait for the first character
    EXPECT_EQ(d[1].content, "  Sure");
    EXPECT_EQ(d[2].content, " {x}");
    EXPECT_EQ(p.reply().content, "  Sure {x}");
}

TEST(DeclaredTools, K3NeverHoldsContent)
{
    // K3's calls are special tokens: content that starts like JSON is only text.
    DeclaredToolsParser p(std::make_unique<Scripted>(std::deque<ReplyDelta>{content(R"({"name":"get_time","arguments":{}})")}),
                          ChatFormat::K3, kTools);
    const std::vector<ReplyDelta> d = run(p, 1);
    EXPECT_EQ(d[0].content, R"({"name":"get_time","arguments":{}})");
    EXPECT_TRUE(p.reply().toolCalls.empty());
}

TEST(DeclaredTools, ReasoningPassesWhileContentIsHeld)
{
    ReplyDelta think;
    think.reasoning = "maybe time";
    ReplyDelta last = content("}");
    last.done = true;
    DeclaredToolsParser p(std::make_unique<Scripted>(std::deque<ReplyDelta>{think, content(R"({"name":"get_time")")}, last),
                          ChatFormat::Qwen3, kTools);
    const std::vector<ReplyDelta> d = run(p, 2);
    EXPECT_EQ(d[0].reasoning, "maybe time");
    EXPECT_TRUE(d[1].empty());
    EXPECT_TRUE(d[2].done);
    ASSERT_EQ(d[2].toolCalls.size(), 1u);
    EXPECT_EQ(p.reply().reasoning, "maybe time");
    // Nothing more after the end.
    EXPECT_TRUE(p.feed(0).empty());
    EXPECT_TRUE(p.finish().empty());
}

TEST(DeclaredTools, MalformedToolsAreRefused)
{
    EXPECT_THROW(DeclaredToolsParser(std::make_unique<Scripted>(std::deque<ReplyDelta>{}), ChatFormat::ChatMl, "{"), Error);
    EXPECT_THROW(DeclaredToolsParser(std::make_unique<Scripted>(std::deque<ReplyDelta>{}), ChatFormat::ChatMl, "{}"), Error);
}
