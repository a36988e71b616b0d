// Reply frames (text/reply_frame.hpp) read back by their format's reply parser, on the
// real tokenizers of the tiny models (DeepSeek-V3, Kimi K2, Qwen3 from mktiny's files;
// K3 and the raw format from the fixture containers). A seeded random walk takes any
// token the constraint allows (so every path the frame permits is fair game, not only
// the ones a model likes), and the parser must return exactly what the frame wrote: the
// free text as reasoning, the document as the content (answer) or as the arguments of a
// call of the branch's tool (call). Also: which tokens count as ordinary text.
#include "family_tokenizer.hpp"
#include "text/constraint_factory.hpp"
#include "text/declared_tools_parser.hpp"
#include "text/reply_frame.hpp"
#include "text/reply_parsers.hpp"
#include "text/token_trie.hpp"
#include "text/tokenizer.hpp"

#include <waste/chat.hpp>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <random>
#include <set>

using namespace waste;
using namespace waste::text;
using Json = nlohmann::json;

namespace {

const std::string kR3 = std::string(WASTE_FIXTURES_DIR) + "/reference-container/r3.waste";
const std::string kK3 = std::string(WASTE_FIXTURES_DIR) + "/k3-container/k3s1.waste";

const char *kTools = R"([
  {"type":"function","function":{"name":"lookup","parameters":{"type":"object",
    "properties":{"q":{"type":"string","maxLength":8},"n":{"type":"integer"}},"required":["q","n"],"additionalProperties":false}}},
  {"type":"function","function":{"name":"get_time","parameters":{"type":"object",
    "properties":{"zone":{"type":"string","enum":["UTC","CET"]}},"required":["zone"],"additionalProperties":false}}}])";
const char *kSchema = R"({"type":"object","properties":{"name":{"type":"string","maxLength":10},"age":{"type":"integer"}},
    "required":["name","age"],"additionalProperties":false})";

struct Format {
    const char *label;
    ChatFormat format;
    std::function<Tokenizer()> tokenizer;
};

std::vector<Format> formats()
{
    return {
        {"deepseek", ChatFormat::DeepSeek, [] { return familyTokenizer("deepseek-v3"); }},
        {"deepseek-v3.1", ChatFormat::DeepSeekV31, [] { return familyTokenizer("deepseek-v3"); }},
        {"kimi-k2", ChatFormat::KimiK2, [] { return familyTokenizer("kimi-k2"); }},
        {"kimi-k2-instruct", ChatFormat::KimiK2Instruct, [] { return familyTokenizer("kimi-k2"); }},
        {"qwen3", ChatFormat::Qwen3, [] { return familyTokenizer("qwen3-moe"); }},
        {"harmony", ChatFormat::Harmony, [] { return familyTokenizer("gpt-oss"); }},
        {"chatml-qwen-vocab", ChatFormat::ChatMl, [] { return familyTokenizer("qwen3-moe"); }},
        {"chatml-r3-vocab", ChatFormat::ChatMl, [] { return Tokenizer::load(kR3); }},
        {"k3", ChatFormat::K3, [] { return Tokenizer::load(kK3); }},
        {"plain", ChatFormat::Plain, [] { return Tokenizer::load(kR3); }},
    };
}

std::vector<int32_t> promptFor(const Format &f, const Tokenizer &tok, bool thinking, bool tools)
{
    if (f.format == ChatFormat::Plain)
        return tok.encode("user: What is the time?\nassistant:");
    Json req = Json::parse(R"({"messages":[{"role":"system","content":"Be brief."},
                                           {"role":"user","content":"What is the time?"}]})");
    if (tools)
        req["tools"] = Json::parse(kTools);
    req["thinking"] = thinking;
    std::vector<int32_t> ids;
    for (const ChatSegment &s : renderChat(f.format, req.dump()))
        tok.encodeTo(s.text, s.markup, ids);
    return ids;
}

bool validUtf8(std::string_view s) { return sanitizeUtf8(s) == s; }

std::string trim(const std::string &s)
{
    const size_t a = s.find_first_not_of(" \t\r\n");
    return a == std::string::npos ? std::string() : s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1);
}

// Any allowed token, preferring those that are whole UTF-8 by themselves (so the free
// text compares byte for byte), until the constraint is complete.
std::vector<int32_t> walk(TokenConstraint &c, const Tokenizer &tok, uint64_t seed, int maxTokens)
{
    std::mt19937_64 rng(seed);
    std::vector<bool> mask(size_t(tok.vocabSize()), false);
    std::vector<int32_t> out, any, whole;
    while (!c.complete()) {
        if (int(out.size()) >= maxTokens) {
            ADD_FAILURE() << "the frame did not close within " << maxTokens << " tokens";
            break;
        }
        c.allowed(mask);
        any.clear();
        whole.clear();
        for (size_t id = 0; id < mask.size(); ++id) {
            if (!mask[id])
                continue;
            any.push_back(int32_t(id));
            if (validUtf8(tok.piece(int32_t(id))))
                whole.push_back(int32_t(id));
        }
        if (any.empty()) {
            ADD_FAILURE() << "the constraint allows nothing after " << out.size() << " tokens";
            break;
        }
        const auto &from = whole.empty() ? any : whole;
        const int32_t t = from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)];
        c.accept(t);
        out.push_back(t);
    }
    return out;
}

// The reply the format's parser reads from `out`, fed as Model::generate feeds it (EOS,
// a stop token, is not fed), checking that the deltas add up to the reply.
ChatReply parse(ChatFormat format, const Tokenizer &tok, std::span<const int32_t> prompt,
                const std::vector<int32_t> &out, const char *toolsJson = nullptr)
{
    std::unique_ptr<ReplyParser> p = replyParserFor(format, tok, prompt);
    if (toolsJson) // as Model::replyParser reads a request that declared tools
        p = std::make_unique<DeclaredToolsParser>(std::move(p), format, toolsJson);
    ChatReply sum;
    auto add = [&](const ReplyDelta &d) {
        sum.reasoning += d.reasoning;
        sum.content += d.content;
        sum.toolCalls.insert(sum.toolCalls.end(), d.toolCalls.begin(), d.toolCalls.end());
    };
    for (int32_t t : out)
        if (t != tok.eosId())
            add(p->feed(t));
    add(p->finish());
    EXPECT_EQ(sum, p->reply());
    return p->reply();
}

bool startsWith(std::span<const int32_t> s, const std::vector<int32_t> &p)
{
    return s.size() >= p.size() && std::equal(p.begin(), p.end(), s.begin());
}

// Where the frame's pieces lie in `out`: the free text, the chosen branch, its document.
struct Split {
    std::string reasoning;
    size_t branch = 0;
    std::string document;
};

Split split(const ReplyFrame &frame, const Tokenizer &tok, const std::vector<int32_t> &out)
{
    Split s;
    size_t at = 0;
    const auto &r = frame.reasoning;
    if (r.allowed) {
        size_t begin = 0;
        if (!r.open.empty() && startsWith(out, r.open)) {
            begin = r.open.size();
        } else if (!r.optional) {
            EXPECT_TRUE(r.open.empty()) << "the reply does not open its reasoning";
        }
        if (begin > 0 || !r.optional) {
            const auto close = std::find(out.begin() + std::ptrdiff_t(begin), out.end(), r.close[0]);
            EXPECT_NE(close, out.end()) << "the reasoning never closed";
            s.reasoning = trim(tok.decode(std::span(out).subspan(begin, size_t(close - out.begin()) - begin)));
            at = size_t(close - out.begin());
            EXPECT_TRUE(startsWith(std::span(out).subspan(at), r.close));
            at += r.close.size();
        }
    }
    for (size_t i = 0; i < frame.branches.size(); ++i) {
        const auto &b = frame.branches[i];
        if (!startsWith(std::span(out).subspan(at), b.prefix) || out.size() < at + b.prefix.size() + b.suffix.size())
            continue;
        const size_t end = out.size() - b.suffix.size();
        if (!std::equal(b.suffix.begin(), b.suffix.end(), out.begin() + std::ptrdiff_t(end)))
            continue;
        s.branch = i;
        s.document = tok.decode(std::span(out).subspan(at + b.prefix.size(), end - at - b.prefix.size()));
        return s;
    }
    ADD_FAILURE() << "no branch of the frame matches the reply";
    return s;
}

std::string what(const Format &f, const char *kind, bool thinking, uint64_t seed, const Tokenizer &tok,
                 const std::vector<int32_t> &out)
{
    return std::string(f.label) + " " + kind + ", thinking " + (thinking ? "on" : "off") + ", seed " +
           std::to_string(seed) + ": " + sanitizeUtf8(tok.decode(out));
}

} // namespace

TEST(ReplyFrame, AnswersReadBackAsTheirDocument)
{
    for (const Format &f : formats()) {
        const Tokenizer tok = f.tokenizer();
        for (const bool thinking : {false, true}) {
            const std::vector<int32_t> prompt = promptFor(f, tok, thinking, false);
            const ReplyFrame frame = replyFramer(f.format, tok, prompt)->answer(Schema::compile(kSchema));
            for (uint64_t seed = 1; seed <= 4; ++seed) {
                const int maxTokens = 70;
                const auto c = makeAnswerConstraint(f.format, tok, prompt, kSchema, maxTokens);
                const std::vector<int32_t> out = walk(*c, tok, seed, maxTokens);
                const std::string w = what(f, "answer", thinking, seed, tok, out);
                const ChatReply reply = parse(f.format, tok, prompt, out);
                const Split s = split(frame, tok, out);
                EXPECT_EQ(trim(reply.reasoning), s.reasoning) << w; // K3 keeps the channel's edges
                EXPECT_TRUE(reply.toolCalls.empty()) << w;
                Json doc;
                ASSERT_NO_THROW(doc = Json::parse(reply.content)) << w;
                EXPECT_EQ(doc, Json::parse(s.document)) << w;
                EXPECT_TRUE(doc.at("name").is_string() && doc.at("age").is_number_integer()) << w;
            }
        }
    }
}

TEST(ReplyFrame, ForcedCallsReadBackAsACallOfTheBranchTool)
{
    const std::vector<std::string> names = {"lookup", "get_time"};
    for (const Format &f : formats()) {
        const Tokenizer tok = f.tokenizer();
        for (const bool thinking : {false, true}) {
            const std::vector<int32_t> prompt = promptFor(f, tok, thinking, true);
            for (const char *named : {"", "get_time"}) {
                const ReplyFrame frame = replyFramer(f.format, tok, prompt)->call(toolParameters(kTools, named));
                // Plain: one document whose "name" chooses; the others: a branch per tool.
                ASSERT_EQ(frame.branches.size(), *named || f.format == ChatFormat::Plain ? 1u : 2u);
                for (uint64_t seed = 1; seed <= 4; ++seed) {
                    const int maxTokens = 90;
                    const auto c = makeCallConstraint(f.format, tok, prompt, kTools, named, maxTokens);
                    const std::vector<int32_t> out = walk(*c, tok, seed, maxTokens);
                    const std::string w = what(f, named, thinking, seed, tok, out);
                    const ChatReply reply = parse(f.format, tok, prompt, out);
                    const Split s = split(frame, tok, out);
                    std::string tool = *named ? std::string(named) : names[s.branch];
                    EXPECT_EQ(trim(reply.reasoning), s.reasoning) << w;
                    Json args;
                    if (f.format == ChatFormat::Plain) {
                        // The bare {"name", "arguments"} document, read back by the API server.
                        const Json call = Json::parse(reply.content);
                        EXPECT_EQ(call, Json::parse(s.document)) << w;
                        if (!*named)
                            tool = call.at("name");
                        EXPECT_EQ(call.at("name"), tool) << w;
                        args = call.at("arguments");
                    } else {
                        EXPECT_EQ(reply.content, "") << w;
                        ASSERT_EQ(reply.toolCalls.size(), 1u) << w;
                        EXPECT_EQ(reply.toolCalls[0].name, tool) << w;
                        ASSERT_NO_THROW(args = Json::parse(reply.toolCalls[0].arguments)) << w;
                        EXPECT_EQ(args, Json::parse(s.document)) << w;
                    }
                    if (tool == "lookup")
                        EXPECT_TRUE(args.at("q").is_string() && args.at("n").is_number_integer()) << w;
                    else
                        EXPECT_TRUE(args.at("zone") == "UTC" || args.at("zone") == "CET") << w;
                }
            }
        }
    }
}

// Which formats reason first, by the prompt: R1, V3.1 and Qwen3 only with thinking on, K2
// (K2-Thinking) and harmony always (a harmony reply opens its analysis channel, which may stay
// empty), K3 when its prompt opened the think channel, K2-Instruct, ChatML and Plain never.
TEST(ReplyFrame, ReasoningFollowsThePrompt)
{
    for (const Format &f : formats()) {
        const Tokenizer tok = f.tokenizer();
        for (const bool thinking : {false, true}) {
            const ReplyFrame frame =
                replyFramer(f.format, tok, promptFor(f, tok, thinking, false))->answer(Schema::anyObject());
            const bool expected = f.format == ChatFormat::KimiK2 || f.format == ChatFormat::Harmony ||
                                  (thinking && (f.format == ChatFormat::DeepSeek || f.format == ChatFormat::Qwen3 ||
                                                f.format == ChatFormat::K3 || f.format == ChatFormat::DeepSeekV31));
            EXPECT_EQ(frame.reasoning.allowed, expected) << f.label << " thinking " << thinking;
            if (expected) { // the free text ends at a markup token, never at ordinary text
                EXPECT_TRUE(tok.isAdded(frame.reasoning.close[0])) << f.label;
            }
        }
    }
}

// GLM-4.5 and GLM-4.7's layouts: an answer reads back as its document, after a think block
// only where the prompt left thinking on.
TEST(ReplyFrame, GlmAnswersReadBack)
{
    for (const Format f : {Format{"glm-4.5", ChatFormat::Glm45, [] { return familyTokenizer("glm4-moe"); }},
                           Format{"glm-4.7", ChatFormat::Glm47, [] { return familyTokenizer("glm4-moe"); }}})
    for (const bool thinking : {false, true}) {
        const Tokenizer tok = f.tokenizer();
        const std::vector<int32_t> prompt = promptFor(f, tok, thinking, false);
        const ReplyFrame frame = replyFramer(f.format, tok, prompt)->answer(Schema::compile(kSchema));
        EXPECT_EQ(frame.reasoning.allowed, thinking);
        for (uint64_t seed = 1; seed <= 4; ++seed) {
            const int maxTokens = 70;
            const auto c = makeAnswerConstraint(f.format, tok, prompt, kSchema, maxTokens);
            const std::vector<int32_t> out = walk(*c, tok, seed, maxTokens);
            const std::string w = what(f, "answer", thinking, seed, tok, out);
            const ChatReply reply = parse(f.format, tok, prompt, out);
            const Split s = split(frame, tok, out);
            EXPECT_EQ(trim(reply.reasoning), s.reasoning) << w;
            EXPECT_TRUE(reply.toolCalls.empty()) << w;
            Json doc;
            ASSERT_NO_THROW(doc = Json::parse(reply.content)) << w;
            EXPECT_EQ(doc, Json::parse(s.document)) << w;
        }
    }
}

// Qwen3.5, DeepSeek-V3.2 and V4: the generation prompt opens <think> (reasoning first)
// unless thinking is off; an answer reads back as its document, ending at the format's end
// marker.
TEST(ReplyFrame, ThinkThenAnswerFormatsReadBack)
{
    struct Case {
        Format f;
        const char *end;
    };
    const std::string eos = "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>";
    for (const Case &k : {Case{{"qwen3.5", ChatFormat::Qwen35, [] { return familyTokenizer("qwen3.5-moe"); }}, "<|im_end|>"},
                          Case{{"deepseek-v3.2", ChatFormat::DeepSeekV32, [] { return familyTokenizer("deepseek-v32"); }},
                               eos.c_str()},
                          Case{{"deepseek-v4", ChatFormat::DeepSeekV4, [] { return familyTokenizer("deepseek-v4"); }},
                               eos.c_str()}})
    for (const bool thinking : {false, true}) {
        const Format &f = k.f;
        const Tokenizer tok = f.tokenizer();
        const std::vector<int32_t> prompt = promptFor(f, tok, thinking, false);
        const ReplyFrame frame = replyFramer(f.format, tok, prompt)->answer(Schema::compile(kSchema));
        EXPECT_EQ(frame.reasoning.allowed, thinking) << f.label;
        EXPECT_TRUE(frame.reasoning.open.empty()) << "the prompt opened <think> itself";
        for (uint64_t seed = 1; seed <= 4; ++seed) {
            const int maxTokens = 70;
            const auto c = makeAnswerConstraint(f.format, tok, prompt, kSchema, maxTokens);
            const std::vector<int32_t> out = walk(*c, tok, seed, maxTokens);
            const std::string w = what(f, "answer", thinking, seed, tok, out);
            ASSERT_FALSE(out.empty()) << w;
            EXPECT_EQ(out.back(), tok.specialId(k.end)) << w;
            const ChatReply reply = parse(f.format, tok, prompt, out);
            const Split s = split(frame, tok, out);
            EXPECT_EQ(trim(reply.reasoning), s.reasoning) << w;
            EXPECT_TRUE(reply.toolCalls.empty()) << w;
            Json doc;
            ASSERT_NO_THROW(doc = Json::parse(reply.content)) << w;
            EXPECT_EQ(doc, Json::parse(s.document)) << w;
        }
    }
}

// The formats that write a call's arguments one element each: GLM's <arg_key>/<arg_value>
// pairs, Qwen3.5's <parameter=KEY> blocks, DeepSeek-V3.2's and V4's DSML parameters.
std::vector<Format> perArgumentFormats()
{
    return {
        {"glm-4.5", ChatFormat::Glm45, [] { return familyTokenizer("glm4-moe"); }},
        {"glm-4.7", ChatFormat::Glm47, [] { return familyTokenizer("glm4-moe"); }},
        {"qwen3.5", ChatFormat::Qwen35, [] { return familyTokenizer("qwen3.5-moe"); }},
        {"deepseek-v3.2", ChatFormat::DeepSeekV32, [] { return familyTokenizer("deepseek-v32"); }},
        {"deepseek-v4", ChatFormat::DeepSeekV4, [] { return familyTokenizer("deepseek-v4"); }},
    };
}

size_t codePoints(const std::string &s)
{
    return size_t(std::count_if(s.begin(), s.end(), [](char c) { return (uint8_t(c) & 0xC0) != 0x80; }));
}

// A forced call in those formats reads back, through the parser a request with tools gets,
// as one call of the branch's tool whose arguments match its schema: the string raw yet
// within its length and enum, the integer as JSON.
TEST(ReplyFrame, PerArgumentFormatsReadForcedCallsBack)
{
    const std::vector<std::string> names = {"lookup", "get_time"};
    for (const Format &f : perArgumentFormats()) {
        const Tokenizer tok = f.tokenizer();
        for (const bool thinking : {false, true}) {
            const std::vector<int32_t> prompt = promptFor(f, tok, thinking, true);
            for (const char *named : {"", "get_time"}) {
                const ReplyFrame frame = replyFramer(f.format, tok, prompt)->call(toolParameters(kTools, named));
                ASSERT_EQ(frame.branches.size(), *named ? 1u : 2u) << f.label;
                for (uint64_t seed = 1; seed <= 4; ++seed) {
                    const int maxTokens = 300; // V3.2's tiny vocabulary spells each DSML tag in many tokens
                    const auto c = makeCallConstraint(f.format, tok, prompt, kTools, named, maxTokens);
                    const std::vector<int32_t> out = walk(*c, tok, seed, maxTokens);
                    const std::string w = what(f, *named ? named : "call", thinking, seed, tok, out);
                    const ChatReply reply = parse(f.format, tok, prompt, out, kTools);
                    const Split s = split(frame, tok, out);
                    EXPECT_EQ(trim(reply.reasoning), s.reasoning) << w;
                    EXPECT_EQ(trim(reply.content), "") << w;
                    ASSERT_EQ(reply.toolCalls.size(), 1u) << w;
                    const std::string tool = *named ? std::string(named) : names[s.branch];
                    EXPECT_EQ(reply.toolCalls[0].name, tool) << w;
                    Json args;
                    ASSERT_NO_THROW(args = Json::parse(reply.toolCalls[0].arguments)) << w;
                    if (tool == "lookup") {
                        ASSERT_TRUE(args.contains("q") && args.at("q").is_string()) << w;
                        EXPECT_LE(codePoints(args.at("q").get<std::string>()), 8u) << w;
                        EXPECT_TRUE(args.contains("n") && args.at("n").is_number_integer()) << w;
                        EXPECT_EQ(args.size(), 2u) << w;
                    } else {
                        EXPECT_TRUE(args == Json({{"zone", "UTC"}}) || args == Json({{"zone", "CET"}})) << w;
                    }
                }
            }
        }
    }
}

// Optional arguments come after the required ones, each written or left out, in the order
// the schema lists them (the first one written takes no separator when nothing is required);
// objects, arrays, booleans and nullable strings keep their schema; no value ever holds the
// text at which the parser would end it.
TEST(ReplyFrame, PerArgumentCallsKeepOptionalAndNestedArguments)
{
    const char *tools = R"([
      {"type":"function","function":{"name":"edit","parameters":{"type":"object","properties":{
        "path":{"type":"string","maxLength":12},
        "dry":{"type":"boolean"},
        "line":{"type":"integer"},
        "opts":{"type":"object","properties":{"n":{"type":"number"}},"required":["n"],"additionalProperties":false},
        "tags":{"type":"array","items":{"$ref":"#/$defs/tag"},"maxItems":2},
        "note":{"type":["string","null"],"maxLength":6}},
        "required":["line","path"],"$defs":{"tag":{"type":"string","enum":["a","bc"]}}}}},
      {"type":"function","function":{"name":"ping","parameters":{"type":"object","properties":{
        "verbose":{"type":"boolean"},"host":{"type":"string","enum":["h1","h2"]}}}}}])";
    const std::vector<std::string> editOrder = {"path", "line", "dry", "opts", "tags", "note"};
    for (const Format &f : perArgumentFormats()) {
        const Tokenizer tok = f.tokenizer();
        const std::vector<int32_t> prompt = promptFor(f, tok, false, true);
        std::set<std::string> pingShapes;
        for (const char *named : {"edit", "ping"})
        for (uint64_t seed = 1; seed <= 12; ++seed) {
            const int maxTokens = 320;
            const auto c = makeCallConstraint(f.format, tok, prompt, tools, named, maxTokens);
            const std::vector<int32_t> out = walk(*c, tok, seed, maxTokens);
            const std::string w = what(f, named, false, seed, tok, out);
            const ChatReply reply = parse(f.format, tok, prompt, out, tools);
            ASSERT_EQ(reply.toolCalls.size(), 1u) << w;
            EXPECT_EQ(reply.toolCalls[0].name, named) << w;
            nlohmann::ordered_json args;
            ASSERT_NO_THROW(args = nlohmann::ordered_json::parse(reply.toolCalls[0].arguments)) << w;
            if (std::string(named) == "ping") {
                std::string shape;
                for (const auto &[k, v] : args.items())
                    shape += k + ",";
                EXPECT_TRUE(shape == "" || shape == "verbose," || shape == "host," || shape == "verbose,host,") << w;
                if (args.contains("verbose"))
                    EXPECT_TRUE(args.at("verbose").is_boolean()) << w;
                if (args.contains("host"))
                    EXPECT_TRUE(args.at("host") == "h1" || args.at("host") == "h2") << w;
                pingShapes.insert(shape);
                continue;
            }
            // Required first (path before line, as the properties list them), then the optional ones in order.
            std::vector<std::string> keys;
            for (const auto &[k, v] : args.items())
                keys.push_back(k);
            ASSERT_GE(keys.size(), 2u) << w;
            EXPECT_EQ(keys[0], "path") << w;
            EXPECT_EQ(keys[1], "line") << w;
            EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end(), [&](const std::string &a, const std::string &b) {
                return std::find(editOrder.begin(), editOrder.end(), a) < std::find(editOrder.begin(), editOrder.end(), b);
            })) << w;
            EXPECT_TRUE(args.at("path").is_string() && codePoints(args.at("path")) <= 12) << w;
            EXPECT_TRUE(args.at("line").is_number_integer()) << w;
            if (args.contains("dry"))
                EXPECT_TRUE(args.at("dry").is_boolean()) << w;
            if (args.contains("opts"))
                EXPECT_TRUE(args.at("opts").size() == 1 && args.at("opts").at("n").is_number()) << w;
            if (args.contains("tags")) {
                EXPECT_LE(args.at("tags").size(), 2u) << w;
                for (const auto &t : args.at("tags"))
                    EXPECT_TRUE(t == "a" || t == "bc") << w;
            }
            if (args.contains("note"))
                EXPECT_TRUE(args.at("note").is_string() && codePoints(args.at("note")) <= 6) << w;
        }
        EXPECT_GE(pingShapes.size(), 2u) << f.label << ": the optional arguments were never both written and left out";
    }
}

// A special token the format has no place for where it comes (a stray <arg_value> or
// <tool_response> in the answer, </think> after the reasoning closed, DSML's marker outside a
// block) is never shown as text; the same tokens where they belong still read as the format's.
TEST(ReplyFrame, StraySpecialTokensAreNeverText)
{
    struct Case {
        Format f;
        std::vector<const char *> stray;
    };
    for (const Case &k : {Case{{"glm-4.5", ChatFormat::Glm45, [] { return familyTokenizer("glm4-moe"); }},
                               {"<arg_value>", "</arg_key>", "<tool_response>", "</think>", "[gMASK]"}},
                          Case{{"qwen3.5", ChatFormat::Qwen35, [] { return familyTokenizer("qwen3.5-moe"); }},
                               {"<tool_response>", "</tool_call>", "<think>", "<|fim_pad|>"}},
                          Case{{"deepseek-v4", ChatFormat::DeepSeekV4, [] { return familyTokenizer("deepseek-v4"); }},
                               {"\xEF\xBD\x9C" "DSML" "\xEF\xBD\x9C", "<\xEF\xBD\x9C" "User\xEF\xBD\x9C>", "</think>"}},
                          // R1's parser reads calls by id; its other tool and role tokens are strays.
                          Case{{"deepseek-r1", ChatFormat::DeepSeek, [] { return familyTokenizer("deepseek-v3"); }},
                               {"<\xEF\xBD\x9Ctool\xE2\x96\x81outputs\xE2\x96\x81" "end\xEF\xBD\x9C>",
                                "<\xEF\xBD\x9C" "User\xEF\xBD\x9C>", "<\xEF\xBD\x9C" "Assistant\xEF\xBD\x9C>",
                                "<\xEF\xBD\x9Ctool\xE2\x96\x81sep\xEF\xBD\x9C>", "<think>"}}}) {
        const Tokenizer tok = k.f.tokenizer();
        const std::vector<int32_t> prompt = promptFor(k.f, tok, false, false);
        std::vector<int32_t> out = tok.encode("Hello");
        for (const char *m : k.stray) {
            const int32_t id = tok.specialId(m);
            ASSERT_GE(id, 0) << k.f.label << " " << m;
            out.push_back(id);
            tok.encodeTo(" world", false, out);
        }
        const ChatReply reply = parse(k.f.format, tok, prompt, out);
        std::string want = "Hello";
        for (size_t i = 0; i < k.stray.size(); ++i)
            want += " world";
        EXPECT_EQ(reply.content, want) << k.f.label;
        EXPECT_TRUE(reply.toolCalls.empty()) << k.f.label;
    }
}

// A call block that never closes, or cannot be read, gives back the words the model wrote in
// it, never the block's markers or the markup inside it (the server fuzz found <tool_call> and
// <|fim_prefix|> in an Anthropic reply on the tiny Qwen3.5 this way).
TEST(ReplyFrame, ACallThatIsNotOneGivesBackItsWordsWithoutMarkup)
{
    struct Case {
        Format f;
        std::vector<const char *> opening;
        std::vector<const char *> inside;
    };
    for (const Case &k : {Case{{"glm-4.5", ChatFormat::Glm45, [] { return familyTokenizer("glm4-moe"); }},
                               {"<tool_call>"}, {"<arg_key>", "</arg_key>", "<arg_value>"}},
                          Case{{"qwen3.5", ChatFormat::Qwen35, [] { return familyTokenizer("qwen3.5-moe"); }},
                               {"<tool_call>"}, {"<|fim_prefix|>", "<tool_response>"}}}) {
        const Tokenizer tok = k.f.tokenizer();
        const std::vector<int32_t> prompt = promptFor(k.f, tok, false, false);
        std::vector<int32_t> out = tok.encode("Hello");
        for (const char *m : k.opening)
            out.push_back(tok.specialId(m));
        tok.encodeTo(" one", false, out);
        for (const char *m : k.inside) {
            ASSERT_GE(tok.specialId(m), 0) << k.f.label << " " << m;
            out.push_back(tok.specialId(m));
            tok.encodeTo(" two", false, out);
        }
        const ChatReply reply = parse(k.f.format, tok, prompt, out);
        EXPECT_TRUE(reply.toolCalls.empty()) << k.f.label;
        std::string want = "Hello one";
        for (size_t i = 0; i < k.inside.size(); ++i)
            want += " two";
        EXPECT_EQ(reply.content, want) << k.f.label;
    }
}

// Markup inside a call that is not the call syntax's own (a </think>, a role token) is
// dropped: it never reaches a tool's name or arguments, nor the text an undeclared call is
// shown as (the server fuzz found a </think> in such a call's name on the tiny GLM-4.5).
TEST(ReplyFrame, StrayMarkupInsideACallIsDropped)
{
    const Tokenizer tok = familyTokenizer("glm4-moe");
    const Format f{"glm-4.5", ChatFormat::Glm45, nullptr};
    const std::vector<int32_t> prompt = promptFor(f, tok, false, false);
    const auto markup = [&](const char *m) { return tok.specialId(m); };
    std::vector<int32_t> out{markup("<tool_call>")};
    tok.encodeTo("look", false, out);
    out.push_back(markup("</think>"));
    tok.encodeTo("up\n", false, out);
    out.push_back(markup("<arg_key>"));
    tok.encodeTo("q", false, out);
    out.push_back(markup("</arg_key>"));
    out.push_back(markup("<arg_value>"));
    tok.encodeTo("a", false, out);
    out.push_back(markup("<tool_response>"));
    tok.encodeTo("b", false, out);
    out.push_back(markup("</arg_value>"));
    out.push_back(markup("</tool_call>"));
    for (const int32_t id : out)
        ASSERT_GE(id, 0);
    // Declared: a call of lookup with q = "ab".
    const ChatReply declared = parse(f.format, tok, prompt, out,
                                     R"([{"type":"function","function":{"name":"lookup","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}}])");
    ASSERT_EQ(declared.toolCalls.size(), 1u);
    EXPECT_EQ(declared.toolCalls[0].name, "lookup");
    EXPECT_EQ(declared.toolCalls[0].arguments, R"({"q":"ab"})");
    // Undeclared: shown as its JSON, with no markup in it.
    const ChatReply shown = parse(f.format, tok, prompt, out, "[]");
    EXPECT_TRUE(shown.toolCalls.empty());
    EXPECT_EQ(shown.content, R"({"arguments":{"q":"ab"},"name":"lookup"})");
}

// DeepSeek's two templates share one framer, set apart by their layout: R1's writes "\n\n"
// after </think> and fences a call as function<sep>NAME + ```json, V3.1's writes nothing
// after </think> and a call as NAME<sep> with the bare arguments.
TEST(ReplyFrame, DeepSeekLayoutsFollowTheirTemplates)
{
    const Tokenizer tok = familyTokenizer("deepseek-v3");
    const ToolSchemas tools{{"lookup", nlohmann::ordered_json::parse(R"({"type":"object"})")}};
    const auto text = [&](const std::vector<int32_t> &ids) {
        std::string s;
        for (const int32_t id : ids)
            s += tok.piece(id);
        return s;
    };
    const std::string sep = "<\xEF\xBD\x9Ctool\xE2\x96\x81sep\xEF\xBD\x9C>";
    for (const Format &f : {Format{"deepseek", ChatFormat::DeepSeek, nullptr},
                            Format{"deepseek-v3.1", ChatFormat::DeepSeekV31, nullptr}}) {
        const bool r1 = f.format == ChatFormat::DeepSeek;
        const auto framer = replyFramer(f.format, tok, promptFor(f, tok, true, true));
        const ReplyFrame answer = framer->answer(Schema::anyObject());
        ASSERT_TRUE(answer.reasoning.allowed) << f.label;
        EXPECT_EQ(answer.reasoning.close.front(), tok.specialId("</think>")) << f.label;
        EXPECT_EQ(text(answer.reasoning.close), r1 ? "</think>\n\n" : "</think>") << f.label;
        const ReplyFrame call = framer->call(tools);
        ASSERT_EQ(call.branches.size(), 1u) << f.label;
        const std::string prefix = text(call.branches[0].prefix), suffix = text(call.branches[0].suffix);
        if (r1) {
            EXPECT_NE(prefix.find("function" + sep + "lookup\n```json\n"), std::string::npos) << prefix;
            EXPECT_EQ(suffix.rfind("\n```", 0), 0u) << suffix;
        } else {
            EXPECT_EQ(prefix.substr(prefix.size() - sep.size() - 6), "lookup" + sep) << prefix;
            EXPECT_EQ(suffix.find("```"), std::string::npos) << suffix;
        }
    }
}

// A limit too small for the structure is refused up front, naming the minimum.
TEST(ReplyFrame, TooSmallALimitIsRefusedWithTheMinimum)
{
    const Tokenizer tok = familyTokenizer("deepseek-v3");
    const Format f{"deepseek", ChatFormat::DeepSeek, nullptr};
    try {
        makeCallConstraint(f.format, tok, promptFor(f, tok, true, true), kTools, "", 12);
        FAIL() << "12 tokens cannot hold a DeepSeek tool call";
    } catch (const Error &e) {
        EXPECT_EQ(e.code(), ErrorCode::Argument);
        EXPECT_NE(std::string(e.what()).find("at least"), std::string::npos) << e.what();
    }
}

// Ordinary text is every token that is not an added token of the tokenizer (a special,
// or a markup word such as Qwen's <think>), whatever the ids: DeepSeek's release puts BOS
// at 0 and Qwen3 has no BOS, so "ids below BOS" would be wrong for both.
TEST(TokenTrie, OrdinaryTokensAreThoseThatAreNotAdded)
{
    for (const char *arch : {"deepseek-v3", "kimi-k2", "qwen3-moe", "gpt-oss"}) {
        const Tokenizer tok = familyTokenizer(arch);
        const TokenTrie trie = TokenTrie::fromTokenizer(tok);
        int ordinary = 0, added = 0;
        for (int32_t id = 0; id < tok.vocabSize(); ++id) {
            if (tok.isAdded(id)) {
                ++added;
                EXPECT_TRUE(trie.bytes(id).empty()) << arch << " id " << id << " " << tok.piece(id);
            } else if (!tok.piece(id).empty()) {
                ++ordinary;
                EXPECT_EQ(trie.bytes(id), tok.piece(id)) << arch << " id " << id;
            }
        }
        EXPECT_GE(ordinary, 256) << arch; // at least every byte
        EXPECT_GT(added, 0) << arch;
        for (const char *markup : {"<think>", "</think>", "<tool_call>"})
            if (const int32_t id = tok.specialId(markup); id >= 0) {
                EXPECT_TRUE(trie.bytes(id).empty()) << arch << " " << markup;
            }
        if (tok.bosId() >= 0) {
            EXPECT_TRUE(trie.bytes(tok.bosId()).empty()) << arch;
        }
        EXPECT_TRUE(trie.bytes(tok.eosId()).empty()) << arch;
    }
}

// Optional reasoning (a format whose model may or may not open a think block): the first
// token may open it or start the answer; once the answer started, it can no longer open.
TEST(FramedJsonConstraint, OptionalReasoningOpensOnlyAtTheStart)
{
    const Tokenizer tok = familyTokenizer("qwen3-moe");
    const int32_t open = tok.specialId("<think>"), close = tok.specialId("</think>"), end = tok.specialId("<|im_end|>");
    const auto trie = std::make_shared<const TokenTrie>(TokenTrie::fromTokenizer(tok));
    FramedJsonConstraint::Reasoning r;
    r.allowed = r.optional = true;
    r.open = {open};
    r.close = {close};
    const auto make = [&] {
        return FramedJsonConstraint(trie, r, {{{}, Schema::anyObject(), {end}}}, 40, tok.eosId());
    };
    const int32_t brace = tok.encode("{")[0], letter = tok.encode("a")[0];
    std::vector<bool> mask;

    FramedJsonConstraint thinking = make();
    thinking.allowed(mask);
    EXPECT_TRUE(mask[size_t(open)] && mask[size_t(brace)]);
    EXPECT_FALSE(mask[size_t(letter)]); // not JSON, and no reasoning opened yet
    thinking.accept(open);
    thinking.allowed(mask);
    EXPECT_TRUE(mask[size_t(letter)] && mask[size_t(close)]);
    EXPECT_FALSE(mask[size_t(open)]);
    thinking.accept(letter);
    thinking.accept(close);
    thinking.allowed(mask);
    EXPECT_TRUE(mask[size_t(brace)]);
    EXPECT_FALSE(mask[size_t(letter)] || mask[size_t(close)] || mask[size_t(open)]);

    FramedJsonConstraint direct = make();
    direct.accept(brace);
    direct.allowed(mask);
    EXPECT_FALSE(mask[size_t(open)]);
    direct.accept(tok.encode("}")[0]);
    direct.allowed(mask);
    EXPECT_TRUE(mask[size_t(end)]);
    direct.accept(end);
    EXPECT_TRUE(direct.complete());

    // A frame whose free text could end at ordinary text is refused by name.
    r.close = {letter};
    EXPECT_THROW(make(), Error);
}
