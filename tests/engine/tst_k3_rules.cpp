// Kimi K3's chat format, one test (or more) per rule of
// shared/reference/k3-chat-format-rules.md, each named for the rule it checks:
// Elements_*, Order<step>_*, Normalise_*, Messages_*. The fixture's 30 cases are a
// sample (tst_k3_template); these reach the branches the sample does not. Every expected
// segment list is written by hand from the rules page. Long on purpose: one test per rule,
// each with its expected segments spelled out.
#include <gtest/gtest.h>

#include "text/k3_template.hpp"
#include "waste/waste.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <string>
#include <utility>
#include <vector>

using Json = nlohmann::ordered_json;
using namespace waste::text;

namespace {

using Attrs = std::vector<std::pair<std::string, std::string>>;

const Segment O{"<|open|>", true};
const Segment C{"<|close|>", true};
const Segment S{"<|sep|>", true};
const Segment E{"<|end_of_msg|>", true};
Segment T(const std::string &text) { return {text, false}; }

// Expected segments, following the page's element rules: an open tag is O, the name, then
// " key", "=\"", the value (left out when empty), "\"" per attribute, then S; a close tag
// is C, the name, S; empty text adds nothing. Values are given here as they must appear
// (already escaped).
class Want {
public:
    Want &open(const std::string &tag, const Attrs &attrs = {})
    {
        m_s.push_back(O);
        m_s.push_back(T(tag));
        for (const auto &[k, v] : attrs) {
            m_s.push_back(T(" " + k));
            m_s.push_back(T("=\""));
            text(v);
            m_s.push_back(T("\""));
        }
        m_s.push_back(S);
        return *this;
    }
    Want &close(const std::string &tag)
    {
        m_s.insert(m_s.end(), {C, T(tag), S});
        return *this;
    }
    Want &text(const std::string &t)
    {
        if (!t.empty())
            m_s.push_back(T(t));
        return *this;
    }
    Want &markup(const std::string &m)
    {
        m_s.push_back({m, true});
        return *this;
    }
    Want &end()
    {
        close("message");
        m_s.push_back(E);
        return *this;
    }
    // A whole message with a plain text body.
    Want &message(const Attrs &attrs, const std::string &body) { return open("message", attrs).text(body).end(); }
    Want &user(const std::string &body) { return message({{"role", "user"}}, body); }
    Want &note(const std::string &type, const std::string &body)
    {
        return message({{"role", "system"}, {"type", type}}, body);
    }
    Want &generationPrompt(bool thinking)
    {
        return open("message", {{"role", "assistant"}}).open(thinking ? "think" : "response");
    }
    const Segments &segments() const { return m_s; }

private:
    Segments m_s;
};

// The encoder's fixed texts, copied from the rules page and the fixture's cases.
const std::string kDeclareHead = "# Tools\nHere are the available tools, described in JSONSchema.\n\n";
const std::string kLazyHead =
    "## New Tools Available\nThe system dynamically extends the toolset via lazy-loading.\nYou have access to all "
    "existing and extended tools.\nHere are the specs for the extended tools.\n\n";
std::string fenced(const std::string &json) { return "```json\n" + json + "\n```"; }
std::string effortBody(const std::string &effort)
{
    return "`thinking_effort` guides on how much to think in your thinking channel (not including the response "
           "channel), supported values include `low`, `medium`, `high`, and `max`.\nNow the system is invoked with "
           "`thinking_effort=" +
           effort + "`.";
}
const std::string kChoiceRequired =
    "The system is invoked with `tool_choice=required`.\nYou MUST call tools in the next message.";
const std::string kChoiceNone =
    "The system is invoked with `tool_choice=none`.\nYou MUST NOT call any tools in the next message.";
const std::string kRawJsonOnly =
    "Your response must be raw JSON data without markdown code blocks (```json) or any additional formatting.";
const std::string kFormatObject = "The system is invoked with `response_format=json_object`.\n" + kRawJsonOnly;
std::string schemaBody(const std::string &schemaJson)
{
    return "The system is invoked with `response_format=json_schema`.\n" + kRawJsonOnly +
           "\nThe JSON data must match the following schema:\n" + fenced(schemaJson);
}

std::string show(const Segments &s)
{
    std::string out;
    for (const Segment &x : s)
        out += (x.markup ? "{M:" : "{T:") + x.text + "}";
    return out;
}

void expectRender(const std::string &requestJson, const Want &want)
{
    Segments got;
    ASSERT_NO_THROW(got = renderK3Json(requestJson)) << requestJson;
    EXPECT_EQ(show(got), show(want.segments()));
    EXPECT_TRUE(got == want.segments());
}

// The message of the Argument error the request must raise.
std::string errorOf(const std::string &requestJson)
{
    try {
        renderK3Json(requestJson);
    } catch (const waste::Error &e) {
        EXPECT_EQ(e.code(), waste::ErrorCode::Argument) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "no error for " << requestJson;
    return {};
}

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

} // namespace

// ---- Elements --------------------------------------------------------------------------

TEST(K3Rules, Elements_OpenTagIsOpenNameAttributePiecesThenSep)
{
    const Segments want = {O,       T("message"), T(" role"), T("=\""), T("user"), T("\""), T(" name"), T("=\""),
                           T("ann"), T("\""),     S,          T("Hi"),  C,         T("message"), S,      E};
    EXPECT_EQ(show(renderK3Json(R"({"messages":[{"role":"user","name":"ann","content":"Hi"}],
        "add_generation_prompt":false})")),
              show(want));
    EXPECT_EQ(show(k3OpenSegments("call", {{"tool", "f"}, {"index", "2"}})),
              show({O, T("call"), T(" tool"), T("=\""), T("f"), T("\""), T(" index"), T("=\""), T("2"), T("\""), S}));
    EXPECT_EQ(show(k3OpenSegments("think", {})), show({O, T("think"), S}));
}

TEST(K3Rules, Elements_CloseTagIsCloseNameSep)
{
    EXPECT_EQ(show(k3CloseSegments("response")), show({C, T("response"), S}));
}

TEST(K3Rules, Elements_EmptyAttributeValueAddsNoSegment)
{
    // A call whose function has no name: tool="" is written without a value segment.
    expectRender(R"({"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"a","type":"function",
        "function":{"arguments":""}}]}],"thinking":false,"add_generation_prompt":false})",
                 Want()
                     .open("message", {{"role", "assistant"}})
                     .open("response")
                     .close("response")
                     .open("tools")
                     .open("call", {{"tool", ""}, {"index", "1"}})
                     .close("call")
                     .close("tools")
                     .end());
    EXPECT_EQ(show(k3OpenSegments("call", {{"tool", ""}})), show({O, T("call"), T(" tool"), T("=\""), T("\""), S}));
}

TEST(K3Rules, Elements_AttributeValuesEscapeAmpersandFirstThenQuote)
{
    // '&' first, so an already escaped "&quot;" is escaped again; '<' and '>' stay.
    expectRender(R"({"messages":[{"role":"user","name":"Tom & \"Jerry\" &quot; <b>","content":"x"}],
        "add_generation_prompt":false})",
                 Want().message({{"role", "user"}, {"name", "Tom &amp; &quot;Jerry&quot; &amp;quot; <b>"}}, "x"));
    EXPECT_EQ(show(k3OpenSegments("call", {{"tool", "a\"&b"}})),
              show({O, T("call"), T(" tool"), T("=\""), T("a&quot;&amp;b"), T("\""), S}));
}

TEST(K3Rules, Elements_EscapingCoversEveryAttribute)
{
    // A system message's name, an assistant's name, a call's tool name, an argument key and
    // a tool result's tool name; the text between tags is never escaped.
    expectRender(R"({"messages":[
        {"role":"system","name":"r&d","content":"a & \"b\""},
        {"role":"assistant","name":"\"bot\"","content":"","tool_calls":[{"id":"1","type":"function",
          "function":{"name":"x&y","arguments":"{\"k\\\"ey\":\"v&\\\"\"}"}}]},
        {"role":"tool","tool":"t\"&","content":"ok"}],"add_generation_prompt":false})",
                 Want()
                     .message({{"role", "system"}, {"name", "r&amp;d"}}, "a & \"b\"")
                     .open("message", {{"role", "assistant"}, {"name", "&quot;bot&quot;"}})
                     .open("think")
                     .close("think")
                     .open("response")
                     .close("response")
                     .open("tools")
                     .open("call", {{"tool", "x&amp;y"}, {"index", "1"}})
                     .open("argument", {{"key", "k&quot;ey"}, {"type", "string"}})
                     .text("v&\"")
                     .close("argument")
                     .close("call")
                     .close("tools")
                     .end()
                     .message({{"role", "tool"}, {"tool", "t&quot;&amp;"}, {"index", "1"}}, "ok"));
}

TEST(K3Rules, Elements_EmptyTextProducesNoSegment)
{
    // Empty user content, empty reasoning, empty response and an empty string argument.
    expectRender(R"({"messages":[{"role":"user","content":""},
        {"role":"assistant","content":"","reasoning_content":"","tool_calls":[{"id":"1","type":"function",
          "function":{"name":"f","arguments":"{\"k\":\"\"}"}}]}],"add_generation_prompt":false})",
                 Want()
                     .open("message", {{"role", "user"}})
                     .end()
                     .open("message", {{"role", "assistant"}})
                     .open("think")
                     .close("think")
                     .open("response")
                     .close("response")
                     .open("tools")
                     .open("call", {{"tool", "f"}, {"index", "1"}})
                     .open("argument", {{"key", "k"}, {"type", "string"}})
                     .close("argument")
                     .close("call")
                     .close("tools")
                     .end());
}

// ---- Order of a request ----------------------------------------------------------------

TEST(K3Rules, Order_EveryPartInItsPlace)
{
    // 1 tools, 2 thinking effort, 3 conversation, 4 tool choice, 5 response format,
    // 6 generation prompt — whatever order the request's keys come in.
    expectRender(R"({"response_format":{"type":"json_object"},"tool_choice":"none",
        "messages":[{"role":"user","content":"go"}],"thinking_effort":"high",
        "tools":[{"type":"function","function":{"name":"f"}}]})",
                 Want()
                     .note("tool-declare", kDeclareHead + fenced(R"([{"function":{"name":"f"},"type":"function"}])"))
                     .note("thinking-effort", effortBody("high"))
                     .user("go")
                     .note("tool-choice", kChoiceNone)
                     .note("response-format", kFormatObject)
                     .generationPrompt(true));
}

TEST(K3Rules, Order1_ToolDeclarationOnlyForNonEmptyTools)
{
    expectRender(R"({"messages":[{"role":"user","content":"go"}],"tools":[]})", Want().user("go").generationPrompt(true));
}

TEST(K3Rules, Order1_ToolsDeclaredAsCompactJsonWithNonAsciiKept)
{
    expectRender(
        R"({"messages":[{"role":"user","content":"go"}],"tools":[{"type":"function","function":{"name":"météo",
        "description":"Le temps ☀ à Paris","parameters":{"type":"object","properties":{"ville":{"type":"string"}}}}}]})",
        Want()
            .note("tool-declare",
                  kDeclareHead + fenced(R"([{"function":{"description":"Le temps ☀ à Paris","name":"météo",)"
                                        R"("parameters":{"properties":{"ville":{"type":"string"}},"type":"object"}},)"
                                        R"("type":"function"}])"))
            .user("go")
            .generationPrompt(true));
}

TEST(K3Rules, Order2_ThinkingEffortNoteForLowHighMax)
{
    for (const std::string effort : {"low", "high", "max"})
        expectRender(R"({"messages":[{"role":"user","content":"go"}],"thinking_effort":")" + effort + "\"}",
                     Want().note("thinking-effort", effortBody(effort)).user("go").generationPrompt(true));
}

TEST(K3Rules, Order2_ThinkingEffortOtherThanLowHighMaxIsAnError)
{
    for (const std::string effort : {R"("medium")", R"("LOW")", R"("")", "2", "true", R"(["low"])"}) {
        const std::string e = errorOf(R"({"messages":[{"role":"user","content":"go"}],"thinking_effort":)" + effort + "}");
        EXPECT_TRUE(contains(e, "thinking_effort") && contains(e, "low, high or max") && contains(e, effort)) << e;
    }
}

TEST(K3Rules, Order2_NoThinkingEffortNoteWithThinkingOff)
{
    // The note, and the check of its value, come only with thinking on.
    for (const char *effort : {"max", "medium"})
        expectRender(std::string(R"({"messages":[{"role":"user","content":"go"}],"thinking":false,"thinking_effort":")") +
                         effort + "\"}",
                     Want().user("go").generationPrompt(false));
}

TEST(K3Rules, Order3_ConversationMessageByMessage)
{
    expectRender(R"({"messages":[{"role":"system","content":"S"},{"role":"user","content":"U1"},
        {"role":"assistant","content":"A"},{"role":"user","content":"U2"}],"thinking":false})",
                 Want()
                     .message({{"role", "system"}}, "S")
                     .user("U1")
                     .open("message", {{"role", "assistant"}})
                     .open("response")
                     .text("A")
                     .close("response")
                     .end()
                     .user("U2")
                     .generationPrompt(false));
}

TEST(K3Rules, Order4_ToolChoiceRequiredOrNoneNoteFollowsTheConversation)
{
    const std::string conversation = R"("messages":[{"role":"user","content":"go"},
        {"role":"tool","tool":"f","content":"done"}])";
    const Want before = Want().user("go").message({{"role", "tool"}, {"tool", "f"}, {"index", "1"}}, "done");
    expectRender("{" + conversation + R"(,"tool_choice":"required"})",
                 Want(before).note("tool-choice", kChoiceRequired).generationPrompt(true));
    expectRender("{" + conversation + R"(,"tool_choice":"none"})",
                 Want(before).note("tool-choice", kChoiceNone).generationPrompt(true));
    expectRender("{" + conversation + R"(,"tool_choice":"auto"})", Want(before).generationPrompt(true));
}

TEST(K3Rules, Order5_ResponseFormatNoteFollowsToolChoice)
{
    expectRender(R"({"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{"type":"string"}}},
        "tool_choice":"required","messages":[{"role":"user","content":"go"}]})",
                 Want()
                     .user("go")
                     .note("tool-choice", kChoiceRequired)
                     .note("response-format", schemaBody(R"({"type":"string"})"))
                     .generationPrompt(true));
    expectRender(R"({"response_format":{"type":"json_object"},"messages":[{"role":"user","content":"go"}]})",
                 Want().user("go").note("response-format", kFormatObject).generationPrompt(true));
    expectRender(R"({"response_format":{"type":"text"},"messages":[{"role":"user","content":"go"}]})",
                 Want().user("go").generationPrompt(true));
}

TEST(K3Rules, Order6_GenerationPromptOpensThinkOrResponse)
{
    expectRender(R"({"messages":[{"role":"user","content":"go"}]})", Want().user("go").generationPrompt(true));
    expectRender(R"({"messages":[{"role":"user","content":"go"}],"thinking":false})",
                 Want().user("go").generationPrompt(false));
    expectRender(R"({"messages":[{"role":"user","content":"go"}],"add_generation_prompt":false})", Want().user("go"));
}

TEST(K3Rules, Order_SynthesisedMessageBodiesHaveNoSurroundingWhitespace)
{
    const Segments s = renderK3Json(R"({"tools":[{"type":"function","function":{"name":"f","description":" pad "}}],
        "thinking_effort":"max","messages":[{"role":"user","content":" go "},
        {"role":"system","tools":[{"type":"function","function":{"name":"g"}}]}],
        "tool_choice":"required","response_format":{"type":"json_schema","json_schema":{"schema":{}}}})");
    int notes = 0;
    for (size_t i = 0; i + 10 < s.size(); ++i) {
        // <|open|>message role="system" type="..."<|sep|>BODY
        if (!(s[i] == O && s[i + 1] == T("message") && s[i + 4] == T("system") && s[i + 6] == T(" type")))
            continue;
        const std::string &body = s[i + 11].text;
        ASSERT_FALSE(s[i + 11].markup);
        EXPECT_FALSE(std::isspace(static_cast<unsigned char>(body.front())) ||
                     std::isspace(static_cast<unsigned char>(body.back())))
            << body;
        ++notes;
    }
    EXPECT_EQ(notes, 5); // tool-declare, thinking-effort, the new tools, tool-choice, response-format
    EXPECT_TRUE(std::find(s.begin(), s.end(), T(" go ")) != s.end()); // a user's text keeps its spaces
}

// ---- Normalisation before rendering ----------------------------------------------------

TEST(K3Rules, Normalise_ToolKeysSortedRecursivelyArraysKeepOrder)
{
    // Keys by code point ("B" < "a" < "é"), in objects nested in arrays too; arrays as sent.
    expectRender(R"({"messages":[],"tools":[{"type":"function","function":{"parameters":{"é":1,"a":2,"B":3,
        "anyOf":[{"z":"y","enum":["y","x"]},{"type":"null"}]},"name":"f"}}],"add_generation_prompt":false})",
                 Want().note("tool-declare", kDeclareHead + fenced(R"([{"function":{"name":"f","parameters":{"B":3,"a":2,)"
                                                                   R"("anyOf":[{"enum":["y","x"],"z":"y"},{"type":"null"}],)"
                                                                   R"("é":1}},"type":"function"}])")));
}

TEST(K3Rules, Normalise_SchemaKeysSortedRecursivelyArraysKeepOrder)
{
    expectRender(R"({"messages":[],"add_generation_prompt":false,"response_format":{"type":"json_schema",
        "json_schema":{"schema":{"type":"object","required":["b","a"],"properties":{"b":{"type":"array",
        "items":{"type":"integer","minimum":0}},"a":{"type":"string"}}}}}})",
                 Want().note("response-format",
                             schemaBody(R"({"properties":{"a":{"type":"string"},"b":{"items":{"minimum":0,)"
                                        R"("type":"integer"},"type":"array"}},"required":["b","a"],"type":"object"})")));
}

TEST(K3Rules, Normalise_SchemaFromJsonSchemaDotSchema)
{
    expectRender(R"({"messages":[],"add_generation_prompt":false,"response_format":{"type":"json_schema",
        "json_schema":{"name":"p","strict":true,"schema":{"type":"integer","minimum":1}}}})",
                 Want().note("response-format", schemaBody(R"({"minimum":1,"type":"integer"})")));
}

TEST(K3Rules, Normalise_SchemaFromJsonSchemaDotJsonSchema)
{
    expectRender(R"({"messages":[],"add_generation_prompt":false,"response_format":{"type":"json_schema",
        "json_schema":{"name":"p","json_schema":{"type":"integer","minimum":1}}}})",
                 Want().note("response-format", schemaBody(R"({"minimum":1,"type":"integer"})")));
}

TEST(K3Rules, Normalise_SchemaIsJsonSchemaItselfWithNeitherKey)
{
    expectRender(R"({"messages":[],"add_generation_prompt":false,"response_format":{"type":"json_schema",
        "json_schema":{"type":"object","properties":{"n":{"type":"number"}}}}})",
                 Want().note("response-format", schemaBody(R"({"properties":{"n":{"type":"number"}},"type":"object"})")));
}

namespace {

// The assistant message (thinking off) that carries one call with these arguments.
Want callWith(const std::string &tool, const std::function<void(Want &)> &arguments)
{
    Want w;
    w.open("message", {{"role", "assistant"}}).open("response").close("response").open("tools");
    w.open("call", {{"tool", tool}, {"index", "1"}});
    arguments(w);
    w.close("call").close("tools").end();
    return w;
}
std::string requestWithArguments(const std::string &argumentsJson)
{
    return R"({"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"1","type":"function",
        "function":{"name":"f","arguments":)" +
           argumentsJson + "}}]}],\"thinking\":false,\"add_generation_prompt\":false}";
}

} // namespace

TEST(K3Rules, Normalise_ArgumentsObjectStringBecomesTypedArguments)
{
    // In the order sent: only tools and schemas have their keys sorted.
    const Want want = callWith("f", [](Want &w) {
        w.open("argument", {{"key", "z"}, {"type", "string"}}).text("last").close("argument");
        w.open("argument", {{"key", "a"}, {"type", "number"}}).text("1").close("argument");
    });
    expectRender(requestWithArguments(R"("{\"z\": \"last\", \"a\": 1}")"), want);
    expectRender(requestWithArguments(R"({"z":"last","a":1})"), want);
}

TEST(K3Rules, Normalise_EmptyWhitespaceOrNullArgumentsAreNoArguments)
{
    for (const char *args : {R"("")", R"(" \n\t ")", "null"})
        expectRender(requestWithArguments(args), callWith("f", [](Want &) {}));
}

TEST(K3Rules, Normalise_ArgumentsThatAreNotJsonKeepTheirRawText)
{
    expectRender(requestWithArguments(R"("{\"city\": \"Par")"), callWith("f", [](Want &w) {
                     w.open("json", {{"type", "object"}}).text("{\"city\": \"Par").close("json");
                 }));
    expectRender(requestWithArguments(R"(" get <weather> & \"more\" ")"), callWith("f", [](Want &w) {
                     w.open("json", {{"type", "object"}}).text(" get <weather> & \"more\" ").close("json");
                 }));
}

TEST(K3Rules, Normalise_ArgumentsThatParseToANonObjectAreAnError)
{
    for (const char *args : {R"("[1,2]")", R"("42")", R"("\"text\"")", R"("true")", R"("null")", "[1,2]", "7"}) {
        const std::string e = errorOf(requestWithArguments(args));
        EXPECT_TRUE(contains(e, "messages[0].tool_calls[0]") && contains(e, "must be a JSON object")) << args << ": " << e;
    }
}

TEST(K3Rules, Normalise_ToolResultsResortedIntoCallOrderByToolCallId)
{
    // Matched by id, written in call order, each named by its call (over its own `name`).
    expectRender(R"({"messages":[{"role":"assistant","content":"","tool_calls":[
        {"id":"a","type":"function","function":{"name":"one","arguments":"{}"}},
        {"id":"b","type":"function","function":{"name":"two","arguments":"{}"}},
        {"id":"c","type":"function","function":{"name":"three","arguments":"{}"}}]},
        {"role":"tool","tool_call_id":"c","name":"wrong","content":"C"},
        {"role":"tool","tool_call_id":"a","content":"A"},
        {"role":"tool","tool_call_id":"b","content":"B"}],"thinking":false,"add_generation_prompt":false})",
                 Want()
                     .open("message", {{"role", "assistant"}})
                     .open("response")
                     .close("response")
                     .open("tools")
                     .open("call", {{"tool", "one"}, {"index", "1"}})
                     .close("call")
                     .open("call", {{"tool", "two"}, {"index", "2"}})
                     .close("call")
                     .open("call", {{"tool", "three"}, {"index", "3"}})
                     .close("call")
                     .close("tools")
                     .end()
                     .message({{"role", "tool"}, {"tool", "one"}, {"index", "1"}}, "A")
                     .message({{"role", "tool"}, {"tool", "two"}, {"index", "2"}}, "B")
                     .message({{"role", "tool"}, {"tool", "three"}, {"index", "3"}}, "C"));
}

namespace {

// An assistant message (thinking off, no text) with calls named `names`, ids "a", "b", ...
Want assistantCalls(const std::vector<std::string> &names)
{
    Want w;
    w.open("message", {{"role", "assistant"}}).open("response").close("response").open("tools");
    for (size_t i = 0; i < names.size(); ++i)
        w.open("call", {{"tool", names[i]}, {"index", std::to_string(i + 1)}}).close("call");
    w.close("tools").end();
    return w;
}
const std::string kThreeCalls = R"({"role":"assistant","content":"","tool_calls":[
    {"id":"a","type":"function","function":{"name":"one"}},
    {"id":"b","type":"function","function":{"name":"two"}},
    {"id":"c","type":"function","function":{"name":"three"}}]})";

} // namespace

TEST(K3Rules, Normalise_PartlyAnsweredCallsResortedAndIndexedByPosition)
{
    // Two of three calls answered, out of order: call order, indices counting the results.
    expectRender(R"({"messages":[)" + kThreeCalls + R"(,
        {"role":"tool","tool_call_id":"c","content":"C"},{"role":"tool","tool_call_id":"a","content":"A"}],
        "thinking":false,"add_generation_prompt":false})",
                 Want(assistantCalls({"one", "two", "three"}))
                     .message({{"role", "tool"}, {"tool", "one"}, {"index", "1"}}, "A")
                     .message({{"role", "tool"}, {"tool", "three"}, {"index", "2"}}, "C"));
}

TEST(K3Rules, Normalise_RunWithAnUnmatchedResultIsLeftAsSent)
{
    // One result without an id: the run stays in its order, each named by its own fields or
    // else by the call at its position.
    expectRender(R"({"messages":[)" + kThreeCalls + R"(,
        {"role":"tool","tool_call_id":"c","content":"C"},{"role":"tool","content":"X"},
        {"role":"tool","tool_call_id":"b","name":"named","content":"B"}],"thinking":false,"add_generation_prompt":false})",
                 Want(assistantCalls({"one", "two", "three"}))
                     .message({{"role", "tool"}, {"tool", "one"}, {"index", "1"}}, "C")
                     .message({{"role", "tool"}, {"tool", "two"}, {"index", "2"}}, "X")
                     .message({{"role", "tool"}, {"tool", "named"}, {"index", "3"}}, "B"));
    // An id that no call has is unmatched too.
    expectRender(R"({"messages":[)" + kThreeCalls + R"(,
        {"role":"tool","tool_call_id":"b","content":"B"},{"role":"tool","tool_call_id":"zzz","tool":"t","content":"Z"}],
        "thinking":false,"add_generation_prompt":false})",
                 Want(assistantCalls({"one", "two", "three"}))
                     .message({{"role", "tool"}, {"tool", "one"}, {"index", "1"}}, "B")
                     .message({{"role", "tool"}, {"tool", "t"}, {"index", "2"}}, "Z"));
}

// ---- Messages --------------------------------------------------------------------------

TEST(K3Rules, Messages_UserAndSystemCarryNameOnlyWhenNonEmpty)
{
    expectRender(R"({"messages":[{"role":"system","name":"","content":"S"},{"role":"user","name":"u","content":"U"},
        {"role":"user","name":"","content":"V"}],"add_generation_prompt":false})",
                 Want()
                     .message({{"role", "system"}}, "S")
                     .message({{"role", "user"}, {"name", "u"}}, "U")
                     .message({{"role", "user"}}, "V"));
}

TEST(K3Rules, Messages_ContentPartsWithImageAndImageUrlBlocks)
{
    expectRender(R"({"messages":[{"role":"user","content":[{"type":"text","text":"a"},
        {"type":"image_url","image_url":{"url":"http://x/1.png"}},{"type":"image"},{"type":"text","text":"b"}]}],
        "image_prompts":["<|media_begin|>one<|media_end|>","<|media_begin|>two<|media_end|>"],
        "add_generation_prompt":false})",
                 Want()
                     .open("message", {{"role", "user"}})
                     .text("a")
                     .markup("<|media_begin|>one<|media_end|>")
                     .markup("<|media_begin|>two<|media_end|>")
                     .text("b")
                     .end());
}

TEST(K3Rules, Messages_ImagePlaceholderInTextTakesTheNextBlock)
{
    // Parts and placeholders draw from the same list of blocks, in order.
    expectRender(R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u"}},
        {"type":"text","text":"x <|kimi_image_placeholder|> y"}]},
        {"role":"user","content":"<|kimi_image_placeholder|>z"}],
        "image_prompts":["[B1]","[B2]","[B3]"],"add_generation_prompt":false})",
                 Want()
                     .open("message", {{"role", "user"}})
                     .markup("[B1]")
                     .text("x ")
                     .markup("[B2]")
                     .text(" y")
                     .end()
                     .open("message", {{"role", "user"}})
                     .markup("[B3]")
                     .text("z")
                     .end());
}

TEST(K3Rules, Messages_SystemMessageWithToolsDeclaresThemMidConversation)
{
    expectRender(R"({"messages":[{"role":"user","content":"Hi"},{"role":"system","tools":[{"type":"function",
        "function":{"name":"s","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}}]}],
        "add_generation_prompt":false})",
                 Want().user("Hi").note(
                     "tool-declare",
                     kLazyHead + fenced(R"([{"function":{"name":"s","parameters":{"properties":{"q":{"type":"string"}},)"
                                        R"("type":"object"}},"type":"function"}])")));
}

TEST(K3Rules, Messages_ToolResultIndexCountsFromTheLastAssistant)
{
    // The count runs on across a user message and starts again at the next assistant message.
    expectRender(R"({"messages":[{"role":"assistant","content":"","tool_calls":[
          {"id":"a","type":"function","function":{"name":"one"}},{"id":"b","type":"function","function":{"name":"two"}}]},
        {"role":"tool","tool_call_id":"a","content":"A"},{"role":"user","content":"wait"},
        {"role":"tool","tool_call_id":"b","content":"B"},
        {"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"three"}}]},
        {"role":"tool","tool_call_id":"c","content":"C"}],"thinking":false,"add_generation_prompt":false})",
                 Want(assistantCalls({"one", "two"}))
                     .message({{"role", "tool"}, {"tool", "one"}, {"index", "1"}}, "A")
                     .user("wait")
                     .message({{"role", "tool"}, {"tool", "two"}, {"index", "2"}}, "B")
                     .open("message", {{"role", "assistant"}})
                     .open("response")
                     .close("response")
                     .open("tools")
                     .open("call", {{"tool", "three"}, {"index", "1"}})
                     .close("call")
                     .close("tools")
                     .end()
                     .message({{"role", "tool"}, {"tool", "three"}, {"index", "1"}}, "C"));
}

TEST(K3Rules, Messages_ToolResultNamedByToolThenNameThenTheNthCall)
{
    expectRender(R"({"messages":[)" + kThreeCalls + R"(,
        {"role":"tool","tool":"by-tool","name":"by-name","content":"1"},{"role":"tool","name":"by-name","content":"2"},
        {"role":"tool","content":"3"}],"thinking":false,"add_generation_prompt":false})",
                 Want(assistantCalls({"one", "two", "three"}))
                     .message({{"role", "tool"}, {"tool", "by-tool"}, {"index", "1"}}, "1")
                     .message({{"role", "tool"}, {"tool", "by-name"}, {"index", "2"}}, "2")
                     .message({{"role", "tool"}, {"tool", "three"}, {"index", "3"}}, "3"));
}

TEST(K3Rules, Messages_ToolResultWithNoNameToBeFoundIsAnError)
{
    // No assistant message before it, and no name of its own.
    std::string e = errorOf(R"({"messages":[{"role":"user","content":"go"},{"role":"tool","content":"x"}]})");
    EXPECT_TRUE(contains(e, "messages[1]") && contains(e, "names no tool")) << e;
    // The second result of a single call.
    e = errorOf(R"({"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"a","type":"function",
        "function":{"name":"one"}}]},{"role":"tool","content":"x"},{"role":"tool","content":"y"}]})");
    EXPECT_TRUE(contains(e, "messages[2]") && contains(e, "names no tool")) << e;
}

TEST(K3Rules, Messages_AssistantWithThinkingAlwaysHasAThinkElement)
{
    expectRender(R"({"messages":[{"role":"assistant","name":"bot","content":"A"},
        {"role":"assistant","content":"B","reasoning_content":"R"},{"role":"assistant","content":"C","reasoning":"Q"}],
        "add_generation_prompt":false})",
                 Want()
                     .open("message", {{"role", "assistant"}, {"name", "bot"}})
                     .open("think")
                     .close("think")
                     .open("response")
                     .text("A")
                     .close("response")
                     .end()
                     .open("message", {{"role", "assistant"}})
                     .open("think")
                     .text("R")
                     .close("think")
                     .open("response")
                     .text("B")
                     .close("response")
                     .end()
                     .open("message", {{"role", "assistant"}})
                     .open("think")
                     .text("Q")
                     .close("think")
                     .open("response")
                     .text("C")
                     .close("response")
                     .end());
}

TEST(K3Rules, Messages_AssistantWithThinkingOffHasNoThinkElement)
{
    expectRender(R"({"messages":[{"role":"assistant","content":"B","reasoning_content":"R"}],"thinking":false,
        "add_generation_prompt":false})",
                 Want().open("message", {{"role", "assistant"}}).open("response").text("B").close("response").end());
}

TEST(K3Rules, Messages_ToolCallsNumberedFromOneWithTypedArguments)
{
    // A boolean is never a number; a string is bare; everything else is JSON as Python
    // writes it (", " and ": ", floats by repr, non-ASCII kept, keys as sent).
    expectRender(
        R"({"messages":[{"role":"assistant","content":"Calling.","tool_calls":[
        {"id":"1","type":"function","function":{"name":"first","arguments":"{}"}},
        {"id":"2","type":"function","function":{"name":"second","arguments":
          "{\"s\":\"say \\\"hi\\\"\\n<b>&\",\"t\":true,\"f\":false,\"n\":null,\"i\":-7,\"x\":2.50,\"e\":1e21,\"o\":{\"b\":[1,{\"z\":\"é\"}],\"a\":null},\"l\":[]}"}}]}],
        "thinking":false,"add_generation_prompt":false})",
        Want()
            .open("message", {{"role", "assistant"}})
            .open("response")
            .text("Calling.")
            .close("response")
            .open("tools")
            .open("call", {{"tool", "first"}, {"index", "1"}})
            .close("call")
            .open("call", {{"tool", "second"}, {"index", "2"}})
            .open("argument", {{"key", "s"}, {"type", "string"}})
            .text("say \"hi\"\n<b>&")
            .close("argument")
            .open("argument", {{"key", "t"}, {"type", "boolean"}})
            .text("true")
            .close("argument")
            .open("argument", {{"key", "f"}, {"type", "boolean"}})
            .text("false")
            .close("argument")
            .open("argument", {{"key", "n"}, {"type", "null"}})
            .text("null")
            .close("argument")
            .open("argument", {{"key", "i"}, {"type", "number"}})
            .text("-7")
            .close("argument")
            .open("argument", {{"key", "x"}, {"type", "number"}})
            .text("2.5")
            .close("argument")
            .open("argument", {{"key", "e"}, {"type", "number"}})
            .text("1e+21")
            .close("argument")
            .open("argument", {{"key", "o"}, {"type", "object"}})
            .text(R"({"b": [1, {"z": "é"}], "a": null})")
            .close("argument")
            .open("argument", {{"key", "l"}, {"type", "array"}})
            .text("[]")
            .close("argument")
            .close("call")
            .close("tools")
            .end());
}
