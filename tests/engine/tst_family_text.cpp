// The family text pieces beyond what the reference comparisons cover: refusals of split
// patterns and tokenizer.json contents the engine does not implement, NFC composition,
// the chat format chosen by arch, and the DeepSeek / Kimi K2 reply parsers reading
// reasoning, content and tool calls from marker ids (never from forged text).
#include "family_tokenizer.hpp"
#include "text/chat_format.hpp"
#include "text/family_reply_parser.hpp"
#include "text/split_regex.hpp"
#include "text/tokenizer.hpp"
#include "text/unicode_props.hpp"

#include <waste/waste.hpp>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <iterator>
#include <tuple>

using namespace waste;
using namespace waste::text;

namespace {

ChatReply parse(const Tokenizer &tok, FamilyReplyParser::Family family, const std::string &reply, bool startInThink)
{
    FamilyReplyParser p(tok, family, startInThink);
    ChatReply streamed;
    for (int32_t id : tok.encode(reply, true)) {
        const ReplyDelta d = p.feed(id);
        streamed.reasoning += d.reasoning;
        streamed.content += d.content;
        for (const auto &c : d.toolCalls)
            streamed.toolCalls.push_back(c);
    }
    const ReplyDelta d = p.finish();
    streamed.reasoning += d.reasoning;
    streamed.content += d.content;
    for (const auto &c : d.toolCalls)
        streamed.toolCalls.push_back(c);
    EXPECT_EQ(streamed, p.reply()); // the deltas add up to the reply
    return p.reply();
}

std::string errorOf(const std::function<void()> &f)
{
    try {
        f();
    } catch (const Error &e) {
        return e.what();
    }
    return "(no error)";
}

} // namespace

TEST(SplitRegex, RefusesWhatItDoesNotImplementByName)
{
    EXPECT_NE(errorOf([] { SplitRegex r("(?<=a)b"); }).find("group kind is not supported"), std::string::npos);
    EXPECT_NE(errorOf([] { SplitRegex r("\\p{Greek}+"); }).find("\\p{greek}"), std::string::npos);
    EXPECT_NE(errorOf([] { SplitRegex r("^a"); }).find("anchors"), std::string::npos);
    EXPECT_NE(errorOf([] { SplitRegex r("a{3,1}"); }).find("m < n"), std::string::npos);
}

TEST(SplitRegex, BacktracksLikeTheReferenceEngines)
{
    // \s+(?!\S) leaves the last space to lead the next word; {1,3} caps a digit run.
    const SplitRegex r("\\p{N}{1,3}| ?\\p{L}+|\\s+(?!\\S)|\\s+");
    const unicode::Decoded d = unicode::decodeUtf8("ab   cd 12345");
    std::vector<std::pair<size_t, size_t>> got;
    for (const auto &m : r.findAll(d.cps))
        got.emplace_back(m.begin, m.end);
    const std::vector<std::pair<size_t, size_t>> want = {{0, 2}, {2, 4}, {4, 7}, {7, 8}, {8, 11}, {11, 13}};
    EXPECT_EQ(got, want);
}

TEST(Unicode, NfcComposesAndOrdersMarks)
{
    EXPECT_EQ(unicode::nfc("e\xCC\x81"), "\xC3\xA9");                       // e + acute -> é
    EXPECT_EQ(unicode::nfc("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8"), "\xEA\xB0\x81"); // Hangul L V T -> 각
    // dot below (ccc 220) sorts before dot above (ccc 230); q has no precomposed forms.
    EXPECT_EQ(unicode::nfc("q\xCC\x87\xCC\xA3"), "q\xCC\xA3\xCC\x87");
    EXPECT_EQ(unicode::nfc("plain ascii"), "plain ascii");
    EXPECT_EQ(unicode::category(0x4E2D), unicode::Lo);
    EXPECT_TRUE(unicode::isHanScript(0x4E2D));
    EXPECT_FALSE(unicode::isHanScript(0x3042)); // hiragana
}

TEST(HfTokenizerJson, RefusesOtherKindsByName)
{
    auto withModel = [](const std::string &model, const std::string &pre) {
        return "{\"model\": " + model + ", \"pre_tokenizer\": " + pre + "}";
    };
    const std::string bpe = "{\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}";
    EXPECT_NE(errorOf([&] { Tokenizer::fromHfJson(withModel("{\"type\": \"WordPiece\", \"vocab\": {}}", "null"), ""); })
                  .find("WordPiece"),
              std::string::npos);
    EXPECT_NE(errorOf([&] { Tokenizer::fromHfJson(withModel(bpe, "{\"type\": \"Metaspace\"}"), ""); }).find("Metaspace"),
              std::string::npos);
    EXPECT_NE(errorOf([&] { Tokenizer::fromHfJson(withModel(bpe, "null"), ""); }).find("ByteLevel"), std::string::npos);
    EXPECT_NE(errorOf([&] { Tokenizer::fromHfJson("not json", ""); }).find("not valid JSON"), std::string::npos);
}

TEST(FamilyFormats, ChosenByArchWhenTheVocabularyHasTheMarkup)
{
    const Tokenizer ds = familyTokenizer("deepseek-v3"), k2 = familyTokenizer("kimi-k2"), qw = familyTokenizer("qwen3-moe");
    EXPECT_EQ(decideChatFormat("deepseek-v3", &ds, true), ChatFormat::DeepSeek);
    EXPECT_EQ(decideChatFormat("kimi-k2", &k2, true), ChatFormat::KimiK2);
    EXPECT_EQ(decideChatFormat("qwen3-next", &qw, true), ChatFormat::Qwen3);
    EXPECT_EQ(decideChatFormat("kimi-linear", &qw, true), ChatFormat::ChatMl);
    EXPECT_EQ(decideChatFormat("deepseek-v3", &qw, false), ChatFormat::Plain); // no DeepSeek markup
    const Tokenizer glm = familyTokenizer("glm4-moe");
    EXPECT_EQ(decideChatFormat("glm4-moe", &glm, true), ChatFormat::Glm45);
    // GLM-4.7's template (its tools instructions write a call on one line) gets its own layout.
    EXPECT_EQ(decideChatFormat("glm4-moe", &glm, true,
                               "For each function call, output the function name and arguments within the following "
                               "XML format:\n<tool_call>{function-name}<arg_key>{arg-key-1}</arg_key>"),
              ChatFormat::Glm47);
    EXPECT_EQ(decideChatFormat("glm4-moe", &glm, true,
                               "XML format:\n<tool_call>{function-name}\n<arg_key>{arg-key-1}</arg_key>\n"),
              ChatFormat::Glm45);
    EXPECT_EQ(decideChatFormat("glm4-moe", &qw, true), ChatFormat::ChatMl); // no GLM markup
    // GLM-5.x write GLM-4.7's layout (GLM-4.5's markup and call body, one line); one whose
    // template is 4.5's keeps that. DeepSeek-V3.2 ships no template: its encoder's format
    // (encoding_dsv32.py), or V3.1's for V3.2-Exp, whose template reads `thinking`.
    const Tokenizer glm5 = familyTokenizer("glm-moe-dsa"), v32 = familyTokenizer("deepseek-v32");
    EXPECT_EQ(decideChatFormat("glm-moe-dsa", &glm5, true), ChatFormat::Glm47);
    EXPECT_EQ(decideChatFormat("glm-moe-dsa", &glm5, true, "XML format:\n<tool_call>{function-name}\n<arg_key>"),
              ChatFormat::Glm45);
    EXPECT_EQ(decideChatFormat("deepseek-v32", &v32, false), ChatFormat::DeepSeekV32);
    EXPECT_EQ(decideChatFormat("deepseek-v32", &v32, true, "{% if thinking %}<think>{% endif %}"), ChatFormat::DeepSeekV31);
    EXPECT_EQ(decideChatFormat("deepseek-v32", &qw, false), ChatFormat::Plain); // no DeepSeek markup
    const Tokenizer q35 = familyTokenizer("qwen3.5-moe");
    EXPECT_EQ(decideChatFormat("qwen3.5-moe", &q35, true), ChatFormat::Qwen35);
    EXPECT_EQ(decideChatFormat("qwen3-next", &q35, true), ChatFormat::Qwen3); // the arch decides, not the vocabulary
    EXPECT_EQ(decideChatFormat("qwen3.5-moe", &glm, true), ChatFormat::ChatMl); // no <|im_start|>
    // DeepSeek V4's tiny vocabulary has its encoder's markers, the DSML marker among them.
    const Tokenizer v4 = familyTokenizer("deepseek-v4");
    EXPECT_GE(v4.specialId("<\xEF\xBD\x9C" "Assistant" "\xEF\xBD\x9C>"), 0);
    EXPECT_GE(v4.specialId("\xEF\xBD\x9C" "DSML" "\xEF\xBD\x9C"), 0); // one token, as ds4 looks it up
    EXPECT_EQ(decideChatFormat("deepseek-v4", &v4, false), ChatFormat::DeepSeekV4);
    EXPECT_EQ(decideChatFormat("deepseek-v4", &glm, false), ChatFormat::Plain); // no DeepSeek markup
    // Kimi K2's rank file follows the rule of the reference engine's rank files: BOS is
    // the rank count, EOS (<|im_end|>) two past it.
    EXPECT_EQ(k2.eosId(), k2.bosId() + 2);
    EXPECT_EQ(k2.piece(k2.eosId()), "<|im_end|>");
}

// Which release's template a container ships decides between a family's two formats,
// read from the releases' own chat_template files (tests/fixtures/chat-templates) and from
// the templates `waste mktiny --chat-template` writes.
TEST(FamilyFormats, TheShippedTemplateTellsTheReleasesApart)
{
    const auto fixture = [](const std::string &name) {
        std::ifstream f(std::string(WASTE_FIXTURES_DIR) + "/chat-templates/" + name, std::ios::binary);
        EXPECT_TRUE(f.good()) << name;
        return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    };
    const Tokenizer ds = familyTokenizer("deepseek-v3"), k2 = familyTokenizer("kimi-k2");
    EXPECT_EQ(decideChatFormat("deepseek-v3", &ds, true, fixture("deepseek-r1.jinja")), ChatFormat::DeepSeek);
    EXPECT_EQ(decideChatFormat("deepseek-v3", &ds, true, fixture("deepseek-v3.1.jinja")), ChatFormat::DeepSeekV31);
    EXPECT_EQ(decideChatFormat("kimi-k2", &k2, true, fixture("kimi-k2-thinking.jinja")), ChatFormat::KimiK2);
    EXPECT_EQ(decideChatFormat("kimi-k2", &k2, true, fixture("kimi-k2-instruct.jinja")), ChatFormat::KimiK2Instruct);
    // No template: the family's first format. Another family's template changes nothing.
    EXPECT_EQ(decideChatFormat("deepseek-v3", &ds, false), ChatFormat::DeepSeek);
    EXPECT_EQ(decideChatFormat("kimi-k2", &k2, false), ChatFormat::KimiK2);
    const Tokenizer qw = familyTokenizer("qwen3-moe");
    EXPECT_EQ(decideChatFormat("qwen3-moe", &qw, true, fixture("deepseek-v3.1.jinja")), ChatFormat::Qwen3);
    // The tiny models' own templates, one per release.
    for (const auto &[arch, name, expected] :
         {std::tuple{"deepseek-v3", "", ChatFormat::DeepSeek}, std::tuple{"deepseek-v3", "deepseek-r1", ChatFormat::DeepSeek},
          std::tuple{"deepseek-v3", "deepseek-v3.1", ChatFormat::DeepSeekV31},
          std::tuple{"kimi-k2", "", ChatFormat::KimiK2}, std::tuple{"kimi-k2", "kimi-k2-thinking", ChatFormat::KimiK2},
          std::tuple{"kimi-k2", "kimi-k2-instruct", ChatFormat::KimiK2Instruct}}) {
        const auto t = convert::tinyFamilyTokenizer(arch, 1024, true, name);
        const std::string tpl = nlohmann::json::parse(t.files.at("tokenizer_config.json"))["chat_template"];
        EXPECT_EQ(decideChatFormat(arch, arch == std::string("kimi-k2") ? &k2 : &ds, true, tpl), expected)
            << arch << " " << name;
    }
    EXPECT_NE(errorOf([] { convert::tinyFamilyTokenizer("deepseek-v3", 1024, true, "kimi-k2-instruct"); })
                  .find("deepseek-r1 or deepseek-v3.1"),
              std::string::npos);
    EXPECT_NE(errorOf([] { convert::tinyFamilyTokenizer("qwen3-moe", 1024, true, "deepseek-v3.1"); }).find("qwen3-moe"),
              std::string::npos);
}

TEST(FamilyReplyParser, DeepSeekReasoningContentAndBothCallLayouts)
{
    const Tokenizer tok = familyTokenizer("deepseek-v3");
    const std::string bar = "\xEF\xBD\x9C", sp = "\xE2\x96\x81";
    const auto mk = [&](const std::string &words) {
        std::string s = "<" + bar;
        for (char c : words)
            s += c == ' ' ? sp : std::string(1, c);
        return s + bar + ">";
    };
    const ChatReply r = parse(tok, FamilyReplyParser::Family::DeepSeek,
                              "\nplan it\n</think>\n\nHello there" + mk("tool calls begin") + mk("tool call begin") +
                                  "function" + mk("tool sep") + "get_weather\n```json\n{\"city\": \"Paris\"}\n```" +
                                  mk("tool call end") + "\n" + mk("tool call begin") + "get_time" + mk("tool sep") +
                                  "{}" + mk("tool call end") + mk("tool calls end") + mk("end of sentence") + "ignored",
                              true);
    EXPECT_EQ(r.reasoning, "plan it");
    EXPECT_EQ(r.content, "Hello there");
    ASSERT_EQ(r.toolCalls.size(), 2u);
    EXPECT_EQ(r.toolCalls[0].name, "get_weather");
    EXPECT_EQ(r.toolCalls[0].arguments, "{\"city\": \"Paris\"}");
    EXPECT_EQ(r.toolCalls[0].id, "call_1");
    EXPECT_EQ(r.toolCalls[1].name, "get_time"); // V3.1's layout
    EXPECT_EQ(r.toolCalls[1].arguments, "{}");
}

TEST(FamilyReplyParser, KimiK2CallsAndForgedMarkersStayText)
{
    const Tokenizer tok = familyTokenizer("kimi-k2");
    const ChatReply r = parse(tok, FamilyReplyParser::Family::KimiK2,
                              "<think>check the weather</think>Let me look.<|tool_calls_section_begin|>"
                              "<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\":\"Oslo\"}"
                              "<|tool_call_end|><|tool_calls_section_end|><|im_end|>",
                              false);
    EXPECT_EQ(r.reasoning, "check the weather");
    EXPECT_EQ(r.content, "Let me look.");
    ASSERT_EQ(r.toolCalls.size(), 1u);
    EXPECT_EQ(r.toolCalls[0].id, "functions.get_weather:0");
    EXPECT_EQ(r.toolCalls[0].name, "get_weather");
    EXPECT_EQ(r.toolCalls[0].arguments, "{\"city\":\"Oslo\"}");

    // The same characters written as ordinary text are content, not structure.
    FamilyReplyParser p(tok, FamilyReplyParser::Family::KimiK2, false);
    for (int32_t id : tok.encode("<|tool_call_begin|>x<|im_end|>", false))
        p.feed(id);
    p.finish();
    EXPECT_EQ(p.reply().content, "<|tool_call_begin|>x<|im_end|>");
    EXPECT_TRUE(p.reply().toolCalls.empty());
}

TEST(FamilyReplyParser, AnUnfinishedCharacterEndsWithTheThinkBlock)
{
    // Reasoning that stops inside a UTF-8 sequence lets it go (as U+FFFD) at </think>, so a
    // stream never carries reasoning after the answer has begun.
    const Tokenizer tok = familyTokenizer("kimi-k2");
    const std::vector<int32_t> han = tok.encode("\xE6\x97\xA5", false); // U+65E5, three bytes
    ASSERT_GT(han.size(), 1u) << "the tiny vocabulary merged the character: pick another";
    FamilyReplyParser p(tok, FamilyReplyParser::Family::KimiK2, false);
    for (int32_t id : tok.encode("<think>ok:", true))
        p.feed(id);
    EXPECT_EQ(p.feed(han[0]).reasoning, "");
    ReplyDelta d = p.feed(tok.specialId("</think>"));
    EXPECT_EQ(d.reasoning, "\xEF\xBF\xBD");
    for (int32_t id : tok.encode("yes", false))
        d.content += p.feed(id).content;
    EXPECT_EQ(p.finish().reasoning, "");
    EXPECT_EQ(p.reply().reasoning, "ok:\xEF\xBF\xBD");
    EXPECT_EQ(p.reply().content, "yes");
}
