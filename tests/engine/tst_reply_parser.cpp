// Reading replies through the public API (Model::replyParser, GenParams::reply): the text
// parser's streaming rules (GLM-4.5's argument-pair calls too), stop strings on the parsed content, K3 replies built from the
// tokenizer's specials, and constrained K3 output (forced tool calls, JSON responses) on
// the tiny random-weights K3 container, which must always come back as structure.
#include <gtest/gtest.h>

#include <set>

#include "text/k3_template.hpp"
#include "text/reply_stream.hpp"
#include "text/tagged_reply_parser.hpp"
#include "text/tokenizer.hpp"

#include <nlohmann/json.hpp>

using Json = nlohmann::ordered_json;
using namespace waste::text;

namespace {

const std::string kR3 = std::string(WASTE_FIXTURES_DIR) + "/reference-container/r3.waste";
const std::string kK3 = std::string(WASTE_FIXTURES_DIR) + "/k3-container/k3s1.waste";

std::unique_ptr<waste::Model> openModel(const std::string &path)
{
    waste::OpenOptions o;
    o.directIo = false;
    o.ctxTokens = 1024;
    return waste::Model::open(path, o);
}

waste::Model &k3()
{
    static std::unique_ptr<waste::Model> m = openModel(kK3);
    return *m;
}

std::vector<int32_t> encode(const waste::Model &m, const Segments &segs)
{
    std::vector<int32_t> ids;
    for (const Segment &s : segs) {
        const auto t = m.tokenize(s.text, s.markup);
        ids.insert(ids.end(), t.begin(), t.end());
    }
    return ids;
}

// Sums the deltas of a stream.
struct Collected {
    waste::ChatReply r;
    bool done = false;
    void add(const waste::ReplyDelta &d)
    {
        r.reasoning += d.reasoning;
        r.content += d.content;
        r.toolCalls.insert(r.toolCalls.end(), d.toolCalls.begin(), d.toolCalls.end());
        done = done || d.done;
    }
};

const char *kTools = R"([
  {"type":"function","function":{"name":"lookup","parameters":{"type":"object",
    "properties":{"q":{"type":"string"},"n":{"type":"integer"}},"required":["q","n"],"additionalProperties":false}}},
  {"type":"function","function":{"name":"get_time","parameters":{"type":"object",
    "properties":{"zone":{"type":"string","enum":["UTC","CET"]}},"required":["zone"],"additionalProperties":false}}}])";

Json k3Request(bool thinking)
{
    Json req = Json::parse(R"({"messages":[{"role":"user","content":"What is the time?"}]})");
    req["tools"] = Json::parse(kTools);
    req["thinking"] = thinking;
    return req;
}

} // namespace

TEST(TaggedReplyParser, AnySplitGivesTheSameReplyAndHoldsBackOnlyMarkers)
{
    const std::string text = "<think>\nweigh it\n</think>\n\nSure.\n<tool_call>\n{\"name\": \"f\", \"arguments\": "
                             "{\"a\": 1}}\n</tool_call>\n<tool_call>not json</tool_call> café 🙂\n";
    TaggedReplyParser whole(false);
    whole.push(text);
    whole.finish();
    EXPECT_EQ(whole.reply().reasoning, "weigh it");
    // A block that is not a call gives back its words, never its markers.
    EXPECT_EQ(whole.reply().content, "Sure.\n\nnot json café 🙂");
    ASSERT_EQ(whole.reply().toolCalls.size(), 1u);
    EXPECT_EQ(whole.reply().toolCalls[0].name, "f");
    EXPECT_EQ(Json::parse(whole.reply().toolCalls[0].arguments), Json::parse(R"({"a":1})"));
    for (size_t step : {1, 2, 3, 5, 7}) {
        TaggedReplyParser p(false);
        Collected c;
        for (size_t i = 0; i < text.size(); i += step)
            c.add(p.push(std::string_view(text).substr(i, step)));
        c.add(p.finish());
        EXPECT_EQ(c.r, whole.reply()) << "step " << step;
        EXPECT_EQ(p.reply(), whole.reply());
        EXPECT_TRUE(c.done);
    }
    // Streaming releases text as soon as it cannot be a marker.
    TaggedReplyParser p(false);
    EXPECT_EQ(p.push("Hello wor").content, "Hello wor");
    EXPECT_EQ(p.push("ld <tool_").content, "ld"); // " <tool_" may start a call: held
    EXPECT_EQ(p.push("tip>").content, " <tool_tip>"); // it did not
    EXPECT_EQ(p.push(" <tool_call>{\"name\":\"g\",\"arguments\":{}}").content, "");
    const waste::ReplyDelta d = p.push("</tool_call>");
    ASSERT_EQ(d.toolCalls.size(), 1u);
    EXPECT_EQ(d.toolCalls[0].arguments, "{}");
    // An unclosed call at the end is still read if its JSON is whole, text otherwise.
    TaggedReplyParser q(true); // the prompt opened <think>
    q.push("hmm</think>ok<tool_call>{\"name\":\"h\",\"arguments\":{\"x\":2}}");
    EXPECT_EQ(q.finish().toolCalls.size(), 1u);
    EXPECT_EQ(q.reply().reasoning, "hmm");
    EXPECT_EQ(q.reply().content, "ok");
    TaggedReplyParser broken(false);
    broken.push("a <tool_call>{\"name\":");
    EXPECT_EQ(broken.finish().content, " {\"name\":");
}

// The DSML marker is one special token, let into the content while it may start a block's
// opening tag. A "<｜DSML｜" that goes on with other words opens nothing: its words are content,
// the marker never (serve_fuzz_families once found "<｜DSML｜n" in a DeepSeek V4 answer), both
// mid-stream and at the end, and a real block after it is still read.
TEST(TaggedReplyParser, DsmlMarkerThatOpensNothingIsNotText)
{
    const std::string d = "\xEF\xBD\x9C" "DSML" "\xEF\xBD\x9C";
    std::vector<SpecialToken> markup(1);
    markup[0].id = 7;
    markup[0].text = d;
    for (const bool atEnd : {false, true}) {
        TaggedReplyParser p(false, CallSyntax::DsmlToolCalls);
        p.setMarkup(markup);
        std::string shown = p.push("one ").content;
        shown += p.push("<").content;
        shown += p.push(d).content; // held: it may still be <｜DSML｜tool_calls>
        EXPECT_EQ(shown, "one");
        shown += p.push("n").content;
        if (!atEnd) {
            shown += p.push(" more\n\n<" + d + "tool_calls>\n<" + d + "invoke name=\"f\">\n</" + d + "invoke>\n</" + d +
                            "tool_calls>")
                         .content;
            EXPECT_EQ(p.reply().toolCalls.size(), 1u);
        }
        shown += p.finish().content;
        EXPECT_EQ(shown, p.reply().content);
        EXPECT_EQ(p.reply().content.find(d), std::string::npos) << p.reply().content;
        EXPECT_EQ(p.reply().content.substr(0, 6), "one <n");
    }
}

TEST(TaggedReplyParser, DeepSeekDsmlCallsAnySplit)
{
    // DeepSeek V4's calls: one <｜DSML｜tool_calls> block of invokes (V3.2's: <｜DSML｜function_calls>);
    // string="true" values are strings as written, string="false" ones the JSON they hold
    // (encoding_dsv4.py's and encoding_dsv32.py's parsers).
    const std::string d = "\xEF\xBD\x9C" "DSML" "\xEF\xBD\x9C";
    for (const auto &[syntax, block] : {std::pair{CallSyntax::DsmlToolCalls, std::string("tool_calls>")},
                                        std::pair{CallSyntax::DsmlFunctionCalls, std::string("function_calls>")}}) {
        const std::string text = "plan</think>On it.\n\n<" + d + block + "\n<" + d + "invoke name=\"get_weather\">\n<" + d +
                                 "parameter name=\"city\" string=\"true\">Roma \"è\" bella</" + d + "parameter>\n<" + d +
                                 "parameter name=\"days\" string=\"false\">3</" + d + "parameter>\n<" + d +
                                 "parameter name=\"opts\" string=\"false\">{\"units\": [\"C\"]}</" + d + "parameter>\n</" +
                                 d + "invoke>\n<" + d + "invoke name=\"get_time\">\n</" + d + "invoke>\n</" + d + block;
        TaggedReplyParser whole(true, syntax); // the prompt opened <think>
        whole.push(text);
        whole.finish();
        EXPECT_EQ(whole.reply().reasoning, "plan");
        EXPECT_EQ(whole.reply().content, "On it.");
        ASSERT_EQ(whole.reply().toolCalls.size(), 2u);
        EXPECT_EQ(whole.reply().toolCalls[0].name, "get_weather");
        EXPECT_EQ(whole.reply().toolCalls[0].arguments, R"({"city": "Roma \"è\" bella", "days": 3, "opts": {"units": ["C"]}})");
        EXPECT_EQ(whole.reply().toolCalls[1].name, "get_time");
        EXPECT_EQ(whole.reply().toolCalls[1].arguments, "{}");
        for (size_t step : {1, 2, 3, 5, 7}) {
            TaggedReplyParser p(true, syntax);
            Collected c;
            for (size_t i = 0; i < text.size(); i += step)
                c.add(p.push(std::string_view(text).substr(i, step)));
            c.add(p.finish());
            EXPECT_EQ(c.r, whole.reply()) << block << " step " << step;
        }
        // A repeated parameter, or a string="false" value that is not JSON: the block stays text.
        for (const std::string bad : {"<" + d + "parameter name=\"a\" string=\"true\">x</" + d + "parameter><" + d +
                                          "parameter name=\"a\" string=\"true\">y</" + d + "parameter>",
                                      "<" + d + "parameter name=\"a\" string=\"false\">not json</" + d + "parameter>"}) {
            TaggedReplyParser broken(false, syntax);
            broken.push("<" + d + block + "\n<" + d + "invoke name=\"f\">\n" + bad + "\n</" + d + "invoke>\n</" + d + block);
            broken.finish();
            EXPECT_TRUE(broken.reply().toolCalls.empty());
            EXPECT_NE(broken.reply().content.find("invoke name=\"f\""), std::string::npos); // its words
            EXPECT_EQ(broken.reply().content.find("<" + d + block + ">"), std::string::npos); // not its opening
        }
    }
}

TEST(TaggedReplyParser, GlmArgumentPairsAnySplit)
{
    // GLM-4.5's calls: NAME, then <arg_key>/<arg_value> pairs; a value reads back as JSON
    // where it is JSON (as the template wrote it with tojson), else as the string it is.
    const std::string text = "\n<think>plan</think>\nOn it.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n"
                             "<arg_value>Roma è bella</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n"
                             "<arg_key>opts</arg_key>\n<arg_value>{\"units\": [\"C\"]}</arg_value>\n</tool_call>"
                             "\n<tool_call>get_time\n</tool_call><tool_call>two words\n</tool_call>";
    TaggedReplyParser whole(false, CallSyntax::ArgPairs);
    whole.push(text);
    whole.finish();
    EXPECT_EQ(whole.reply().reasoning, "plan");
    EXPECT_EQ(whole.reply().content, "On it.\n\ntwo words"); // no name: its words stay text
    ASSERT_EQ(whole.reply().toolCalls.size(), 2u);
    EXPECT_EQ(whole.reply().toolCalls[0].name, "get_weather");
    EXPECT_EQ(Json::parse(whole.reply().toolCalls[0].arguments),
              Json::parse(R"({"city": "Roma è bella", "days": 3, "opts": {"units": ["C"]}})"));
    EXPECT_EQ(whole.reply().toolCalls[1].name, "get_time");
    EXPECT_EQ(whole.reply().toolCalls[1].arguments, "{}");
    for (size_t step : {1, 2, 3, 5, 7}) {
        TaggedReplyParser p(false, CallSyntax::ArgPairs);
        Collected c;
        for (size_t i = 0; i < text.size(); i += step)
            c.add(p.push(std::string_view(text).substr(i, step)));
        c.add(p.finish());
        EXPECT_EQ(c.r, whole.reply()) << "step " << step;
    }
    // A pair left open stays text, without the block's markers (the markup inside it goes
    // where the parser knows the vocabulary's markup: TextReplyParser).
    TaggedReplyParser broken(false, CallSyntax::ArgPairs);
    broken.push("<tool_call>f\n<arg_key>a</arg_key><arg_value>1");
    EXPECT_EQ(broken.finish().content, "f\n<arg_key>a</arg_key><arg_value>1");
    TaggedReplyParser known(false, CallSyntax::ArgPairs);
    std::vector<waste::text::SpecialToken> tags;
    for (const char *t : {"<arg_value>", "</arg_value>", "<arg_key>", "</arg_key>"})
        tags.push_back({.text = t});
    known.setMarkup(tags);
    known.push("<tool_call>f\n<arg_key>a</arg_key><arg_value>1");
    EXPECT_EQ(known.finish().content, "f\na1");
    // Pairs out of order are no call either: a tag is never part of a name, key or value (the
    // request fuzzer's tiny GLM-5 wrote "name<arg_value>x" and the tag reached tool_use.name).
    for (const char *body : {"f<arg_value>1</arg_value>", "f<arg_key>a<arg_value>1</arg_key><arg_value>2</arg_value>",
                             "f<arg_key>a</arg_key><arg_value>1<arg_key>b</arg_value>"}) {
        TaggedReplyParser p(false, CallSyntax::ArgPairs);
        p.setMarkup(tags);
        p.push(std::string("<tool_call>") + body + "</tool_call>");
        const auto reply = p.finish();
        EXPECT_TRUE(p.reply().toolCalls.empty()) << body;
        for (const char *t : {"<arg_value>", "</arg_value>", "<arg_key>", "</arg_key>"})
            EXPECT_EQ(p.reply().content.find(t), std::string::npos) << body;
    }
}

// Where the tool declares a parameter a string, its value is the text written, even when
// that text reads as JSON ("123", "true", "{...}"); the other parameters still read as JSON,
// and a function declared with no types (or not declared) reads every value as JSON.
TEST(TaggedReplyParser, GlmStringTypedArgumentsStayTheirText)
{
    const std::string text = "<tool_call>lookup<arg_key>code</arg_key><arg_value>123</arg_value>"
                             "<arg_key>flag</arg_key><arg_value>true</arg_value>"
                             "<arg_key>doc</arg_key><arg_value>{\"a\": 1}</arg_value>"
                             "<arg_key>n</arg_key><arg_value>7</arg_value></tool_call>";
    const StringArguments declared = stringArgumentsOf(R"([{"type":"function","function":{"name":"lookup",
        "parameters":{"type":"object","properties":{"code":{"type":"string"},"flag":{"type":["string","null"]},
        "doc":{"type":"string"},"n":{"type":"integer"}}}}}])");
    ASSERT_EQ(declared.at("lookup"), (std::set<std::string>{"code", "doc", "flag"}));
    TaggedReplyParser typed(false, CallSyntax::ArgPairs);
    typed.setStringArguments(declared);
    typed.push(text);
    typed.finish();
    ASSERT_EQ(typed.reply().toolCalls.size(), 1u);
    EXPECT_EQ(Json::parse(typed.reply().toolCalls[0].arguments),
              Json::parse(R"({"code": "123", "flag": "true", "doc": "{\"a\": 1}", "n": 7})"));
    TaggedReplyParser untyped(false, CallSyntax::ArgPairs);
    untyped.push(text);
    untyped.finish();
    ASSERT_EQ(untyped.reply().toolCalls.size(), 1u);
    EXPECT_EQ(Json::parse(untyped.reply().toolCalls[0].arguments),
              Json::parse(R"({"code": 123, "flag": true, "doc": {"a": 1}, "n": 7})"));
    // The same rule for Qwen3.5's XML parameters.
    TaggedReplyParser xml(false, CallSyntax::XmlFunction);
    xml.setStringArguments(declared);
    xml.push("<tool_call>\n<function=lookup>\n<parameter=code>\n123\n</parameter>\n<parameter=n>\n7\n</parameter>\n"
             "</function>\n</tool_call>");
    xml.finish();
    ASSERT_EQ(xml.reply().toolCalls.size(), 1u);
    EXPECT_EQ(Json::parse(xml.reply().toolCalls[0].arguments), Json::parse(R"({"code": "123", "n": 7})"));
}

TEST(TaggedReplyParser, Qwen35XmlFunctionCallsAnySplit)
{
    // Qwen3.5's calls (Qwen3-Coder's XML): <function=NAME>, one <parameter=KEY> block per
    // argument with the template's newline on each side of the value, </function>; the
    // prompt opened <think>, so the reply starts in the reasoning.
    const std::string text = "plan it\n</think>\n\nOn it.\n\n<tool_call>\n<function=get_weather>\n"
                             "<parameter=city>\nRoma è bella\n</parameter>\n<parameter=days>\n3\n</parameter>\n"
                             "<parameter=opts>\n{\"units\": [\"C\"]}\n</parameter>\n<parameter=note>\nline one\nline two\n"
                             "</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_time>\n</function>\n"
                             "</tool_call><tool_call>\n<function=two words>\n</function>\n</tool_call>";
    TaggedReplyParser whole(true, CallSyntax::XmlFunction);
    whole.push(text);
    whole.finish();
    EXPECT_EQ(whole.reply().reasoning, "plan it");
    // The whitespace between blocks stays where text follows it (the parser's rule).
    EXPECT_EQ(whole.reply().content, "On it.\n\n\n\n<function=two words>\n</function>"); // not a call: no <tool_call>
    ASSERT_EQ(whole.reply().toolCalls.size(), 2u);
    EXPECT_EQ(whole.reply().toolCalls[0].name, "get_weather");
    EXPECT_EQ(Json::parse(whole.reply().toolCalls[0].arguments),
              Json::parse(R"({"city": "Roma è bella", "days": 3, "opts": {"units": ["C"]}, "note": "line one\nline two"})"));
    EXPECT_EQ(whole.reply().toolCalls[1].name, "get_time");
    EXPECT_EQ(whole.reply().toolCalls[1].arguments, "{}");
    for (size_t step : {1, 2, 3, 5, 7}) {
        TaggedReplyParser p(true, CallSyntax::XmlFunction);
        Collected c;
        for (size_t i = 0; i < text.size(); i += step)
            c.add(p.push(std::string_view(text).substr(i, step)));
        c.add(p.finish());
        EXPECT_EQ(c.r, whole.reply()) << "step " << step;
    }
    // A parameter left open, or text after </function>, stays text, without the block's markers.
    TaggedReplyParser broken(false, CallSyntax::XmlFunction);
    broken.push("<tool_call>\n<function=f>\n<parameter=a>\n1");
    EXPECT_EQ(broken.finish().content, "<function=f>\n<parameter=a>\n1");
    TaggedReplyParser trailing(false, CallSyntax::XmlFunction);
    trailing.push("<tool_call>\n<function=f>\n</function>\nmore</tool_call>");
    trailing.finish();
    EXPECT_TRUE(trailing.reply().toolCalls.empty());
    EXPECT_EQ(trailing.reply().content, "<function=f>\n</function>\nmore");
}

TEST(ReplyParser, TextModelsGetTheTextParserAndStopStringsCutTheContent)
{
    auto r3 = openModel(kR3); // kimi-linear: its replies are plain text
    const auto prompt = r3->tokenize("Question: <think>", false);
    auto parser = r3->replyParser(prompt);
    Collected c;
    for (int32_t id : r3->tokenize("a plan</think>The answer STOP is hidden", false))
        c.add(parser->feed(id));
    c.add(parser->finish());
    EXPECT_EQ(c.r.reasoning, "a plan");
    EXPECT_EQ(c.r.content, "The answer STOP is hidden");

    ReplyStream stream(r3->replyParser(r3->tokenize("Q:", false)), {"STOP"});
    Collected s;
    for (int32_t id : r3->tokenize("<think>STOP in reasoning stays</think>The answer STOP is hidden", false))
        s.add(stream.push(id, false));
    EXPECT_TRUE(stream.ended());
    s.add(stream.finish());
    EXPECT_EQ(s.r.reasoning, "STOP in reasoning stays");
    EXPECT_EQ(s.r.content, "The answer ");
    EXPECT_EQ(stream.reply(), s.r);
}

TEST(ReplyParser, K3StartsInTheChannelThePromptOpened)
{
    waste::Model &m = k3();
    // The reply: the history rendering of an assistant message, from its think header on.
    const Json assistant = Json::parse(R"({"role":"assistant","reasoning_content":"Check the clock.",
      "content":"One moment.","tool_calls":[{"id":"c","type":"function",
      "function":{"name":"get_time","arguments":"{\"zone\":\"UTC\"}"}}]})");
    const Segments hist = renderK3(Json{{"messages", Json::array({assistant})}, {"add_generation_prompt", false}});
    size_t at = 0;
    while (!(hist[at].text == "<|open|>" && hist[at + 1].text == "think"))
        ++at;
    const std::vector<int32_t> afterThinkHeader = encode(m, Segments(hist.begin() + std::ptrdiff_t(at) + 3, hist.end()));

    const std::vector<int32_t> thinking = encode(m, renderK3(k3Request(true)));
    auto p = m.replyParser(thinking);
    Collected c;
    for (int32_t id : afterThinkHeader)
        c.add(p->feed(id));
    EXPECT_TRUE(c.done); // <|end_of_msg|> ends the message
    EXPECT_EQ(c.r.reasoning, "Check the clock.");
    EXPECT_EQ(c.r.content, "One moment.");
    ASSERT_EQ(c.r.toolCalls.size(), 1u);
    EXPECT_EQ(c.r.toolCalls[0].name, "get_time");
    EXPECT_EQ(Json::parse(c.r.toolCalls[0].arguments), Json::parse(R"({"zone":"UTC"})"));
    EXPECT_EQ(p->reply(), c.r);

    // Thinking off: the prompt opened the response channel, so plain text is content.
    auto q = m.replyParser(encode(m, renderK3(k3Request(false))));
    Collected d;
    for (int32_t id : m.tokenize("Just text <|close|>response<|sep|>", false)) // spelled out: stays text
        d.add(q->feed(id));
    d.add(q->finish());
    EXPECT_EQ(d.r.content, "Just text <|close|>response<|sep|>");
    EXPECT_TRUE(d.r.reasoning.empty());
}

// Random weights, forced structure: every run must come back as one well-formed call to a
// declared tool, with the reasoning (thinking on) apart, and the deltas adding up.
TEST(ReplyParser, K3ForcedToolCallsAlwaysParse)
{
    waste::Model &m = k3();
    for (const bool thinking : {false, true}) {
        for (const char *named : {"", "get_time"}) {
            for (uint64_t seed = 1; seed <= 2; ++seed) {
                m.resetState();
                const std::vector<int32_t> prompt = encode(m, renderK3(k3Request(thinking)));
                waste::GenParams gp;
                gp.temperature = 1.0f;
                gp.seed = seed;
                gp.maxTokens = 90;
                gp.constraint = waste::makeToolCallConstraint(m, kTools, named, gp.maxTokens, prompt);
                gp.reply = m.replyParser(prompt);
                Collected c;
                const waste::GenResult r = m.generate(prompt, gp, [&](const waste::TokenEvent &ev) {
                    c.add(ev.reply);
                    return true;
                });
                const std::string what = std::string("thinking ") + (thinking ? "on" : "off") + ", tool '" + named +
                                         "', seed " + std::to_string(seed) + ": " + r.text;
                EXPECT_EQ(r.finish, waste::FinishReason::Stop) << what;
                EXPECT_LE(int(r.tokens.size()), gp.maxTokens) << what;
                EXPECT_TRUE(c.done) << what;
                EXPECT_EQ(c.r, r.reply) << what;
                EXPECT_TRUE(r.reply.content.empty()) << what;
                if (!thinking)
                    EXPECT_TRUE(r.reply.reasoning.empty()) << what;
                ASSERT_EQ(r.reply.toolCalls.size(), 1u) << what;
                const waste::ReplyToolCall &call = r.reply.toolCalls[0];
                Json args;
                ASSERT_NO_THROW(args = Json::parse(call.arguments)) << what;
                if (call.name == "lookup") {
                    EXPECT_TRUE(args.at("q").is_string()) << what;
                    EXPECT_TRUE(args.at("n").is_number_integer()) << what;
                } else {
                    ASSERT_EQ(call.name, "get_time") << what;
                    EXPECT_TRUE(args.at("zone") == "UTC" || args.at("zone") == "CET") << what;
                }
                if (*named)
                    EXPECT_EQ(call.name, named) << what;
            }
        }
    }
}

TEST(ReplyParser, K3JsonResponsesFillTheResponseChannel)
{
    waste::Model &m = k3();
    const std::string schema = R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},
        "required":["name","age"],"additionalProperties":false})";
    for (const bool thinking : {false, true}) {
        for (uint64_t seed = 1; seed <= 3; ++seed) {
            m.resetState();
            Json req = k3Request(thinking);
            req.erase("tools");
            const std::vector<int32_t> prompt = encode(m, renderK3(req));
            waste::GenParams gp;
            gp.temperature = 1.0f;
            gp.seed = seed;
            gp.maxTokens = 80;
            gp.constraint = waste::makeJsonConstraint(m, schema, gp.maxTokens, prompt);
            gp.reply = m.replyParser(prompt);
            const waste::GenResult r = m.generate(prompt, gp);
            Json v;
            ASSERT_NO_THROW(v = Json::parse(r.reply.content)) << r.text;
            EXPECT_TRUE(v.at("name").is_string()) << r.text;
            EXPECT_TRUE(v.at("age").is_number_integer()) << r.text;
            EXPECT_TRUE(r.reply.toolCalls.empty());
            EXPECT_EQ(r.finish, waste::FinishReason::Stop);
        }
    }
    // A limit that cannot hold the message is refused up front, with the minimum.
    const std::vector<int32_t> prompt = encode(m, renderK3(k3Request(false)));
    try {
        waste::makeToolCallConstraint(m, kTools, "", 10, prompt);
        FAIL() << "a 10-token limit cannot hold a K3 tool call";
    } catch (const waste::Error &e) {
        EXPECT_EQ(e.code(), waste::ErrorCode::Argument);
        EXPECT_NE(std::string(e.what()).find("at least"), std::string::npos) << e.what();
    }
}

TEST(TaggedReplyParser, AnUnfinishedCharacterEndsWithTheThinkBlock)
{
    // Reasoning that stops inside a UTF-8 sequence lets it go (as U+FFFD) at </think>, so a
    // stream never carries reasoning after the answer has begun.
    TaggedReplyParser p(false);
    EXPECT_EQ(p.push("<think>ok:\xE6\x97").reasoning, "ok:");
    const ReplyDelta d = p.push("</think>yes");
    EXPECT_EQ(d.reasoning, "\xEF\xBF\xBD");
    EXPECT_EQ(d.content, "yes");
    EXPECT_EQ(p.finish().reasoning, "");
    EXPECT_EQ(p.reply().reasoning, "ok:\xEF\xBF\xBD");
}
