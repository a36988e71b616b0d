// DeepSeek-V3.2's and V4's prompt encodings (text/deepseek_v32_template.cpp, text/dsv4_template.cpp)
// against Python ports of the releases' encoders (tests/chat_templates/dsv32_encoder.py from
// encoding_dsv32.py, dsv4_encoder.py from encoding_dsv4.py), run with Debian's /usr/bin/python3.
//
// V3.2: each request of dsv32_requests.json (thinking and chat mode, every user turn handing
// over, tools with and without a system prompt, DSML calls with typed and non-JSON arguments,
// tool results in one <function_results> block, reasoning kept after the last user turn,
// developer turns, response formats, add_generation_prompt false) renders to the encoder's
// text with every marker in markup, and an assistant turn reads back through the parser.
//
// V4: each request of tests/chat_templates/dsv4_requests.json (thinking and chat
// mode, tools with and without a system prompt, DSML calls with typed and non-JSON arguments,
// tool results merged and put in the calls' order, earlier reasoning dropped or kept, reasoning
// effort max, a developer message, a latest reminder) must render to the encoder's text, with
// every marker of the format in markup. And the reply side: what the encoder writes for an
// assistant turn reads back through the DSML parser to the same reasoning, content and calls.
#include "text/family_templates.hpp"
#include "text/tagged_reply_parser.hpp"
#include "waste/waste.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>

namespace {

using Json = nlohmann::ordered_json;

const std::string kDir = std::string(WASTE_FIXTURES_DIR) + "/../chat_templates/";

std::string run(const std::string &command)
{
    std::string out;
    FILE *p = ::popen(command.c_str(), "r");
    if (!p)
        return out;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
        out.append(buf, n);
    ::pclose(p);
    return out;
}

Json cases(const char *file)
{
    std::ifstream f(kDir + file);
    return Json::parse(std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()));
}

bool havePython()
{
    if (std::FILE *py = std::fopen("/usr/bin/python3", "r")) {
        std::fclose(py);
        return true;
    }
    return false;
}

std::string joined(const waste::text::Segments &s)
{
    std::string text;
    for (const auto &seg : s)
        text += seg.text;
    return text;
}

// Every marker of the format is markup: a text segment holds one only where the request wrote it.
void expectMarkersInMarkup(const waste::text::Segments &s, const Json &request, const std::vector<std::string> &markers,
                           const std::string &name)
{
    const std::string written = request.dump();
    for (const auto &seg : s)
        if (!seg.markup)
            for (const std::string &m : markers)
                EXPECT_TRUE(seg.text.find(m) == std::string::npos || written.find(m) != std::string::npos)
                    << name << ": a text segment holds " << m;
}

const std::string kBos = "<\xEF\xBD\x9C" "begin\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>";
const std::string kEos = "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>";
const std::string kUser = "<\xEF\xBD\x9C" "User\xEF\xBD\x9C>", kAssistant = "<\xEF\xBD\x9C" "Assistant\xEF\xBD\x9C>";
const std::string kDsml = "\xEF\xBD\x9C" "DSML\xEF\xBD\x9C";

// The assistant turn of `req` (a user turn, then an assistant turn with reasoning "two
// tools", content "Checking." and two calls) as `render` writes it after <think>, read back
// through the parser of `syntax`; the EOS token ends the message.
waste::text::ChatReply readBack(const Json &req, waste::text::Segments (*render)(const Json &),
                                waste::text::CallSyntax syntax)
{
    Json one = {{"tools", req["tools"]}, {"messages", Json::array({req["messages"][0], req["messages"][1]})}};
    const std::string text = joined(render(one));
    const std::string open = kAssistant + "<think>";
    const size_t at = text.find(open);
    EXPECT_NE(at, std::string::npos);
    std::string reply = at == std::string::npos ? std::string() : text.substr(at + open.size());
    EXPECT_TRUE(reply.ends_with(kEos));
    if (reply.ends_with(kEos))
        reply.resize(reply.size() - kEos.size());
    waste::text::TaggedReplyParser p(true, syntax);
    p.push(reply);
    p.finish();
    return p.reply();
}

void expectReadBack(const Json &req, waste::text::Segments (*render)(const Json &), waste::text::CallSyntax syntax)
{
    const waste::text::ChatReply r = readBack(req, render, syntax);
    EXPECT_EQ(r.reasoning, "two tools");
    EXPECT_EQ(r.content, "Checking.");
    ASSERT_EQ(r.toolCalls.size(), 2u);
    EXPECT_EQ(r.toolCalls[0].name, "get_weather");
    EXPECT_EQ(Json::parse(r.toolCalls[0].arguments),
              Json::parse(req["messages"][1]["tool_calls"][0]["function"]["arguments"].get<std::string>()));
    EXPECT_EQ(r.toolCalls[1].name, "get_time");
    EXPECT_EQ(r.toolCalls[1].arguments, "{}");
}

} // namespace

TEST(Dsv32Encoding, EveryRequestRendersAsTheReleaseEncoderWritesIt)
{
    if (!havePython())
        GTEST_SKIP() << "needs /usr/bin/python3";
    const Json all = cases("dsv32_requests.json");
    const Json golden = Json::parse(run("/usr/bin/python3 -B " + kDir + "dsv32_encoder.py " + kDir + "dsv32_requests.json"));
    ASSERT_EQ(golden.size(), all.size());
    ASSERT_GE(all.size(), 10u);
    const std::vector<std::string> markers = {kBos, kEos, kUser, kAssistant, kDsml, "<think>", "</think>",
                                              "<function_results>", "<result>", "</functions>"};
    for (size_t i = 0; i < all.size(); ++i) {
        const std::string name = all[i]["name"].get<std::string>();
        const waste::text::Segments s = waste::text::renderDeepSeekV32(all[i]["request"]);
        EXPECT_EQ(joined(s), golden[i].get<std::string>()) << name;
        expectMarkersInMarkup(s, all[i]["request"], markers, name);
    }
}

TEST(Dsv32Encoding, AnAssistantTurnReadsBackThroughTheDsmlParser)
{
    // The third request's assistant turn as the encoder writes it after the last user turn
    // (reasoning kept); V4's block name is not V3.2's, so V4's parser leaves it as text.
    expectReadBack(cases("dsv32_requests.json")[2]["request"], waste::text::renderDeepSeekV32,
                   waste::text::CallSyntax::DsmlFunctionCalls);
    EXPECT_TRUE(readBack(cases("dsv32_requests.json")[2]["request"], waste::text::renderDeepSeekV32,
                         waste::text::CallSyntax::DsmlToolCalls).toolCalls.empty());
}

TEST(Dsv32Encoding, ToolResultsNeedTheCallsBeforeThem)
{
    const Json orphan = Json::parse(R"({"messages":[{"role":"user","content":"q"},{"role":"tool","content":"r"}]})");
    EXPECT_THROW(waste::text::renderDeepSeekV32(orphan), waste::Error);
    const Json extra = Json::parse(R"({"messages":[{"role":"user","content":"q"},
        {"role":"assistant","content":"","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},
        {"role":"tool","content":"r1"},{"role":"tool","content":"r2"}]})");
    EXPECT_THROW(waste::text::renderDeepSeekV32(extra), waste::Error);
}

TEST(Dsv4Encoding, EveryRequestRendersAsTheReleaseEncoderWritesIt)
{
    if (!havePython())
        GTEST_SKIP() << "needs /usr/bin/python3";
    const Json all = cases("dsv4_requests.json");
    const Json golden = Json::parse(run("/usr/bin/python3 -B " + kDir + "dsv4_encoder.py " + kDir + "dsv4_requests.json"));
    ASSERT_EQ(golden.size(), all.size());
    ASSERT_GE(all.size(), 5u);
    const std::vector<std::string> markers = {
        "<\xEF\xBD\x9C" "begin\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
        "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
        "<\xEF\xBD\x9C" "User\xEF\xBD\x9C>", "<\xEF\xBD\x9C" "Assistant\xEF\xBD\x9C>",
        "<\xEF\xBD\x9C" "latest_reminder\xEF\xBD\x9C>", "\xEF\xBD\x9C" "DSML\xEF\xBD\x9C", "<think>", "</think>",
        "<tool_result>"};
    for (size_t i = 0; i < all.size(); ++i) {
        const std::string name = all[i]["name"].get<std::string>();
        const waste::text::Segments s = waste::text::renderDeepSeekV4(all[i]["request"]);
        std::string text;
        for (const auto &seg : s)
            text += seg.text;
        EXPECT_EQ(text, golden[i].get<std::string>()) << name;
        const std::string written = all[i]["request"].dump();
        for (const auto &seg : s)
            if (!seg.markup)
                for (const std::string &m : markers)
                    EXPECT_TRUE(seg.text.find(m) == std::string::npos || written.find(m) != std::string::npos)
                        << name << ": a text segment holds " << m;
    }
}

TEST(Dsv4Encoding, AnAssistantTurnReadsBackThroughTheDsmlParser)
{
    // The third request's assistant turn as the encoder writes it (reasoning kept: tools are
    // declared).
    expectReadBack(cases("dsv4_requests.json")[2]["request"], waste::text::renderDeepSeekV4,
                   waste::text::CallSyntax::DsmlToolCalls);
}
