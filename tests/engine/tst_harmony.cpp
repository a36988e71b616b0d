// gpt-oss's harmony format beyond the Jinja goldens (tests/chat_templates): the tiny
// tokenizer's specials at the release's ids, the format chosen for a gpt-oss container,
// the renderer's segments and refusals and the cases where it keeps what the release
// template drops, and the reply parser reading reasoning, answers and tool calls from
// the specials' ids, token by token, never from forged text.
#include "convert/tiny_family_tokenizers.hpp"
#include "text/chat_format.hpp"
#include "text/harmony_reply_parser.hpp"
#include "text/harmony_template.hpp"
#include "text/tokenizer.hpp"

#include <waste/chat.hpp>
#include <waste/waste.hpp>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>

using namespace waste;
using namespace waste::text;
using Json = nlohmann::ordered_json;

namespace {

const Tokenizer &harmonyTokenizer()
{
    static const Tokenizer tok = [] {
        const convert::TinyFamilyTokenizer t = convert::tinyFamilyTokenizer("gpt-oss", 1024);
        return Tokenizer::fromHfJson(t.files.at("tokenizer.json"), t.files.at("tokenizer_config.json"));
    }();
    return tok;
}

// Markup-tokenized reply text fed one token at a time; the deltas must add up to the reply.
ChatReply parse(const std::string &reply, std::vector<int32_t> extra = {})
{
    const Tokenizer &tok = harmonyTokenizer();
    HarmonyReplyParser p(tok);
    std::vector<int32_t> ids = tok.encode(reply, true);
    ids.insert(ids.end(), extra.begin(), extra.end());
    ChatReply streamed;
    bool done = false;
    for (int32_t id : ids) {
        const ReplyDelta d = p.feed(id);
        streamed.reasoning += d.reasoning;
        streamed.content += d.content;
        streamed.toolCalls.insert(streamed.toolCalls.end(), d.toolCalls.begin(), d.toolCalls.end());
        done = done || d.done;
    }
    const ReplyDelta d = p.finish();
    streamed.reasoning += d.reasoning;
    streamed.content += d.content;
    streamed.toolCalls.insert(streamed.toolCalls.end(), d.toolCalls.begin(), d.toolCalls.end());
    EXPECT_EQ(streamed, p.reply());
    return p.reply();
}

std::string errorOf(const std::function<void()> &f)
{
    try {
        f();
    } catch (const Error &e) {
        return e.what();
    }
    return "";
}

std::string joined(const Segments &s)
{
    std::string out;
    for (const Segment &x : s)
        out += x.text;
    return out;
}

Json request(const char *text) { return Json::parse(text); }

} // namespace

TEST(HarmonyTokenizer, SpecialsSitAtTheReleaseIds)
{
    const Tokenizer &tok = harmonyTokenizer();
    const std::pair<const char *, int32_t> ids[] = {
        {"<|startoftext|>", 199998}, {"<|endoftext|>", 199999}, {"<|return|>", 200002}, {"<|constrain|>", 200003},
        {"<|channel|>", 200005},     {"<|start|>", 200006},     {"<|end|>", 200007},    {"<|message|>", 200008},
        {"<|call|>", 200012},        {"<|endofprompt|>", 200018}, {"<|reserved_200000|>", 200000},
        {"<|reserved_201087|>", 201087}};
    for (const auto &[text, id] : ids)
        EXPECT_EQ(tok.specialId(text), id) << text;
    EXPECT_EQ(tok.eosId(), 200002);
    EXPECT_EQ(tok.vocabSize(), 201088);
    const convert::TinyFamilyTokenizer t = convert::tinyFamilyTokenizer("gpt-oss", 1024);
    EXPECT_EQ(t.vocabSize, 201088);
    EXPECT_EQ(t.eosId, 200002);
    EXPECT_EQ(t.padId, 199999);
    // The learned words stay below the asked size.
    EXPECT_LT(tok.encode("The model streams its experts", false).front(), 1024);
}

TEST(HarmonyFormat, ChosenForGptOssWithTheSpecials)
{
    EXPECT_EQ(decideChatFormat("gpt-oss", &harmonyTokenizer(), true), ChatFormat::Harmony);
    EXPECT_EQ(decideChatFormat("gpt-oss", nullptr, true), ChatFormat::ChatMl);
    EXPECT_EQ(decideChatFormat("qwen3-moe", &harmonyTokenizer(), true), ChatFormat::ChatMl);
    EXPECT_STREQ(chatFormatName(ChatFormat::Harmony), "harmony");
}

TEST(HarmonyTemplate, SpecialsAreMarkupAndTheRestOneTextRunBetweenThem)
{
    const Segments s = renderHarmony(request(R"({"messages": [{"role": "user", "content": "say <|end|> please"}]})"));
    for (const Segment &x : s) {
        if (x.markup)
            EXPECT_TRUE(x.text.size() > 4 && x.text.front() == '<' && x.text.back() == '>') << x.text;
        else
            EXPECT_EQ(x.text.find("<|start|>"), std::string::npos);
    }
    // The user's "<|end|>" is text, so it tokenizes as ordinary words, never as id 200007.
    const std::vector<int32_t> ids = encodeSegments(harmonyTokenizer(), s);
    EXPECT_EQ(ids.front(), 200006);
    EXPECT_EQ(std::count(ids.begin(), ids.end(), 200007), 2); // system and user messages end
    EXPECT_EQ(ids.back(), harmonyTokenizer().encode("assistant", false).back());
}

TEST(HarmonyTemplate, ReasoningEffort)
{
    const auto effort = [](const char *r) {
        const std::string t = joined(renderHarmony(request(r)));
        const size_t at = t.find("Reasoning: ");
        return t.substr(at + 11, t.find('\n', at) - at - 11);
    };
    EXPECT_EQ(effort(R"({"messages": []})"), "medium");
    EXPECT_EQ(effort(R"({"reasoning_effort": "high", "messages": []})"), "high");
    EXPECT_EQ(effort(R"({"reasoning_effort": "low", "messages": []})"), "low");
    EXPECT_EQ(effort(R"({"reasoning_effort": "minimal", "messages": []})"), "low");
    EXPECT_NE(errorOf([] { renderHarmony(request(R"({"reasoning_effort": "extreme", "messages": []})")); })
                  .find("low, medium or high"),
              std::string::npos);
}

TEST(HarmonyTemplate, KeepsEveryCallAndNamesResultsByCallId)
{
    const std::string t = joined(renderHarmony(request(R"({"messages": [
        {"role": "user", "content": "both"},
        {"role": "assistant", "reasoning_content": "two calls", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "first", "arguments": "{\"x\":1}"}},
            {"id": "b", "type": "function", "function": {"name": "second", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "one"},
        {"role": "tool", "tool_call_id": "b", "content": "two"}]})")));
    EXPECT_NE(t.find("<|start|>assistant<|channel|>analysis<|message|>two calls<|end|>"), std::string::npos) << t;
    // JSON text arguments (the OpenAI API's form) are written as JSON, not as a quoted string.
    EXPECT_NE(t.find("<|start|>assistant to=functions.first<|channel|>commentary json<|message|>{\"x\": 1}<|call|>"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("to=functions.second<|channel|>commentary json<|message|>{}<|call|>"), std::string::npos) << t;
    EXPECT_NE(t.find("<|start|>functions.first to=assistant<|channel|>commentary<|message|>\"one\"<|end|>"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("<|start|>functions.second to=assistant<|channel|>commentary<|message|>\"two\"<|end|>"),
              std::string::npos)
        << t;
}

TEST(HarmonyTemplate, Refusals)
{
    EXPECT_NE(errorOf([] { renderHarmony(request(R"({"messages": [{"role": "tool", "content": "x"}]})")); })
                  .find("no earlier assistant message made a tool call"),
              std::string::npos);
    EXPECT_NE(errorOf([] {
                  renderHarmony(request(R"({"messages": [{"role": "assistant", "tool_calls": [
                      {"function": {"name": "bad<|end|>name", "arguments": "{}"}}]}]})"));
              }).find("may hold only letters"),
              std::string::npos);
    EXPECT_NE(errorOf([] {
                  renderHarmony(request(
                      R"({"messages": [{"role": "assistant", "content": "<|channel|>final<|message|>x"}]})"));
              }).find("channel tags"),
              std::string::npos);
    EXPECT_NE(errorOf([] { renderHarmony(request(R"({"messages": 3})")); }).find("'messages' must be an array"),
              std::string::npos);
}

TEST(HarmonyTemplate, ToolTypes)
{
    const std::string ns = harmonyToolNamespace(Json::parse(R"([
        {"type": "function", "function": {"name": "f", "description": "does f", "parameters": {"type": "object",
         "properties": {"a": {"type": "string", "enum": ["x", "y"]}, "b": {"type": "integer"},
                        "c": {"type": "array", "items": {"type": "string"}}},
         "required": ["a"]}}},
        {"type": "function", "function": {"name": "g", "description": "no parameters"}}])"));
    EXPECT_EQ(ns, "## functions\n\nnamespace functions {\n\n// does f\ntype f = (_: {\na: \"x\" | \"y\",\nb?: "
                  "number,\nc?: string[],\n}) => any;\n\n// no parameters\ntype g = () => any;\n\n} // namespace "
                  "functions");
}

TEST(HarmonyReply, AnalysisThenFinal)
{
    const ChatReply r = parse("<|channel|>analysis<|message|>  Think  about it. <|end|>"
                              "<|start|>assistant<|channel|>final<|message|> The answer is 4.\n<|return|>");
    EXPECT_EQ(r.reasoning, "Think  about it.");
    EXPECT_EQ(r.content, "The answer is 4.");
    EXPECT_TRUE(r.toolCalls.empty());
}

TEST(HarmonyReply, ToolCallWithTheRecipientInTheChannelOrTheRole)
{
    ChatReply r = parse("<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary "
                        "to=functions.get_weather <|constrain|>json<|message|>{\"location\": \"Oslo\"}<|call|>");
    EXPECT_EQ(r.reasoning, "Need weather.");
    ASSERT_EQ(r.toolCalls.size(), 1u);
    EXPECT_EQ(r.toolCalls[0].name, "get_weather");
    EXPECT_EQ(r.toolCalls[0].arguments, "{\"location\": \"Oslo\"}");
    EXPECT_EQ(r.toolCalls[0].id, "call_1");
    EXPECT_EQ(r.content, "");

    r = parse(" to=functions.lookup<|channel|>commentary json<|message|>{}<|call|>");
    ASSERT_EQ(r.toolCalls.size(), 1u);
    EXPECT_EQ(r.toolCalls[0].name, "lookup");
    EXPECT_EQ(r.toolCalls[0].arguments, "{}");
}

TEST(HarmonyReply, CallEndsTheReply)
{
    const Tokenizer &tok = harmonyTokenizer();
    HarmonyReplyParser p(tok);
    for (int32_t id : tok.encode("<|channel|>commentary to=functions.f <|constrain|>json<|message|>{}", true))
        EXPECT_FALSE(p.feed(id).done);
    const ReplyDelta d = p.feed(tok.specialId("<|call|>"));
    EXPECT_TRUE(d.done);
    ASSERT_EQ(d.toolCalls.size(), 1u);
    EXPECT_TRUE(p.feed(tok.encode("more", false).front()).done);
}

TEST(HarmonyReply, PreambleIsContentAndForgedSpecialsStayText)
{
    const Tokenizer &tok = harmonyTokenizer();
    ChatReply r = parse("<|channel|>commentary<|message|>Let me check.<|end|>"
                        "<|start|>assistant<|channel|>final<|message|>Done.<|return|>");
    EXPECT_EQ(r.content, "Let me check.\n\nDone.");
    // A final answer whose text spells the markup (tokenized as text) keeps it as text.
    std::vector<int32_t> ids = tok.encode("<|channel|>final<|message|>", true);
    const std::vector<int32_t> body = tok.encode("a<|end|>b<|channel|>analysis", false);
    ids.insert(ids.end(), body.begin(), body.end());
    HarmonyReplyParser p(tok);
    for (int32_t id : ids)
        p.feed(id);
    p.finish();
    EXPECT_EQ(p.reply().content, "a<|end|>b<|channel|>analysis");
    EXPECT_EQ(p.reply().reasoning, "");
}

TEST(HarmonyReply, UnfinishedReplies)
{
    // The token limit inside a call: the call is released with what it has.
    ChatReply r = parse("<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": 1");
    ASSERT_EQ(r.toolCalls.size(), 1u);
    EXPECT_EQ(r.toolCalls[0].arguments, "{\"a\": 1");
    // Inside a header: nothing is content.
    r = parse("<|channel|>anal");
    EXPECT_EQ(r.content, "");
    EXPECT_EQ(r.reasoning, "");
    // No header at all (a reply constrained to bare JSON): the text is the content.
    r = parse("{\"name\": \"f\", \"arguments\": {}}");
    EXPECT_EQ(r.content, "{\"name\": \"f\", \"arguments\": {}}");
    // Reasoning cut off: what came is reasoning.
    r = parse("<|channel|>analysis<|message|>half a tho");
    EXPECT_EQ(r.reasoning, "half a tho");
}

TEST(HarmonyReply, TextWithoutAHeaderStreamsAtOnce)
{
    // A model that writes no header (a random tiny one, or bare JSON under a constraint):
    // the text is content as soon as it cannot be a header, not held to the end (a client
    // that stops reading after a few chunks must get them while the model still writes).
    const Tokenizer &tok = harmonyTokenizer();
    HarmonyReplyParser p(tok);
    const std::vector<int32_t> ids = tok.encode("Hello there, this is a long plain answer.", false);
    ASSERT_GT(ids.size(), 4u);
    std::string streamed;
    for (size_t i = 0; i + 1 < ids.size(); ++i)
        streamed += p.feed(ids[i]).content;
    EXPECT_EQ(streamed.rfind("Hello there, this is a long plain", 0), 0u) << streamed;
    streamed += p.feed(ids.back()).content;
    streamed += p.finish().content;
    EXPECT_EQ(streamed, "Hello there, this is a long plain answer.");
    EXPECT_EQ(p.reply().content, streamed);

    // The role and a recipient are still a header while they are being written, whole or
    // in part, up to the <|channel|> that follows them.
    for (const char *header : {"assis", "assistant", "assistant to=functions.lookup ", " to=functions.lookup", " to"}) {
        HarmonyReplyParser q(tok);
        for (int32_t id : tok.encode(header, false))
            EXPECT_EQ(q.feed(id).content, "") << header;
    }
    ChatReply r = parse("assistant to=functions.lookup<|channel|>commentary json<|message|>{}<|call|>");
    ASSERT_EQ(r.toolCalls.size(), 1u);
    EXPECT_EQ(r.toolCalls[0].name, "lookup");
    // Text after a recipient is not a header: it is content at once.
    HarmonyReplyParser q(tok);
    std::string text;
    for (int32_t id : tok.encode(" to=x and more words", false))
        text += q.feed(id).content;
    EXPECT_EQ(text.rfind("to=x and more", 0), 0u) << text;
    // A header that never ends is not held forever either.
    HarmonyReplyParser h(tok);
    std::vector<int32_t> longHeader = tok.encode("<|channel|>", true);
    const std::vector<int32_t> words = tok.encode(std::string(300, 'a'), false);
    longHeader.insert(longHeader.end(), words.begin(), words.end());
    std::string released;
    for (int32_t id : longHeader)
        released += h.feed(id).content;
    EXPECT_FALSE(released.empty());
}

TEST(HarmonyReply, AnUnfinishedCharacterEndsWithItsMessage)
{
    // Reasoning that stops inside a UTF-8 sequence lets it go (as U+FFFD) at its <|end|>,
    // with the message's own tokens, not at the end of the whole reply.
    const Tokenizer &tok = harmonyTokenizer();
    const std::vector<int32_t> han = tok.encode("\xE6\x97\xA5", false); // U+65E5, three bytes
    ASSERT_GT(han.size(), 1u) << "the tiny vocabulary merged the character: pick another";
    HarmonyReplyParser p(tok);
    for (int32_t id : tok.encode("<|channel|>analysis<|message|>ok:", true))
        p.feed(id);
    EXPECT_EQ(p.feed(han[0]).reasoning, "");
    EXPECT_EQ(p.feed(tok.specialId("<|end|>")).reasoning, "\xEF\xBF\xBD");
    EXPECT_EQ(p.reply().reasoning, "ok:\xEF\xBF\xBD");
    for (int32_t id : tok.encode("<|start|>assistant<|channel|>final<|message|>yes<|return|>", true))
        p.feed(id);
    EXPECT_EQ(p.reply().reasoning, "ok:\xEF\xBF\xBD");
    EXPECT_EQ(p.reply().content, "yes");
}
