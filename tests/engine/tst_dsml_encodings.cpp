// DeepSeek V4's prompt encoding (text/dsv4_template.cpp) against a Python port of the release's
// encoder (tests/chat_templates/dsv4_encoder.py, from encoding_dsv4.py), run with Debian's
// /usr/bin/python3: each request of tests/chat_templates/dsv4_requests.json (thinking and chat
// mode, tools with and without a system prompt, DSML calls with typed and non-JSON arguments,
// tool results merged and put in the calls' order, earlier reasoning dropped or kept, reasoning
// effort max, a developer message, a latest reminder) must render to the encoder's text, with
// every marker of the format in markup. And the reply side: what the encoder writes for an
// assistant turn reads back through the DSML parser to the same reasoning, content and calls.
#include "text/family_templates.hpp"
#include "text/tagged_reply_parser.hpp"

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

Json cases()
{
    std::ifstream f(kDir + "dsv4_requests.json");
    return Json::parse(std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()));
}

} // namespace

TEST(Dsv4Encoding, EveryRequestRendersAsTheReleaseEncoderWritesIt)
{
    if (std::FILE *py = std::fopen("/usr/bin/python3", "r"))
        std::fclose(py);
    else
        GTEST_SKIP() << "needs /usr/bin/python3";
    const Json all = cases();
    const Json golden = Json::parse(run("/usr/bin/python3 " + kDir + "dsv4_encoder.py " + kDir + "dsv4_requests.json"));
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
    // declared), generated after <think>: the parser gives back its parts.
    const Json req = cases()[2]["request"];
    Json one = {{"tools", req["tools"]}, {"messages", Json::array({req["messages"][0], req["messages"][1]})}};
    std::string text;
    for (const auto &seg : waste::text::renderDeepSeekV4(one))
        text += seg.text;
    const std::string open = "<\xEF\xBD\x9C" "Assistant\xEF\xBD\x9C><think>";
    const size_t at = text.find(open);
    ASSERT_NE(at, std::string::npos);
    std::string reply = text.substr(at + open.size());
    const std::string eos = "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>";
    ASSERT_TRUE(reply.ends_with(eos));
    reply.resize(reply.size() - eos.size()); // the EOS token ends the message
    waste::text::TaggedReplyParser p(true, waste::text::CallSyntax::Dsml);
    p.push(reply);
    p.finish();
    EXPECT_EQ(p.reply().reasoning, "two tools");
    EXPECT_EQ(p.reply().content, "Checking.");
    ASSERT_EQ(p.reply().toolCalls.size(), 2u);
    EXPECT_EQ(p.reply().toolCalls[0].name, "get_weather");
    EXPECT_EQ(Json::parse(p.reply().toolCalls[0].arguments),
              Json::parse(req["messages"][1]["tool_calls"][0]["function"]["arguments"].get<std::string>()));
    EXPECT_EQ(p.reply().toolCalls[1].name, "get_time");
    EXPECT_EQ(p.reply().toolCalls[1].arguments, "{}");
}
