// What a reply looks like, in a chat format's own layout, when it must be (a) a JSON
// answer or (b) a call of one of N tools: the frame that constrained decoding follows
// (FramedJsonConstraint). Each format writes its frame exactly as its reply parser
// (Model::replyParser) reads it back and as its chat template writes such a turn in a
// history, so a forced answer is read back as content, a forced call as a tool call, and
// reasoning as reasoning:
//   - K3: XTML channels (k3_frame.cpp);
//   - DeepSeek (R1's template), Kimi K2 (K2-Thinking's), Qwen3: their think blocks and
//     tool-call markup (deepseek_frame.cpp, kimi_k2_frame.cpp, qwen3_frame.cpp);
//   - DeepSeek-V3.1: its own call layout, reasoning only when the prompt opened <think>
//     (R1's framer with V3.1's layout, deepseek_frame.cpp); Kimi K2-Instruct: K2's
//     layout with no reasoning (kimi_k2_frame.cpp);
//   - ChatML: <tool_call> blocks (chatml_frame.cpp);
//   - GLM-4.5: its think block, answers, and calls with one <arg_key>/<arg_value> pair per
//     argument (glm45_frame.cpp);
//   - Qwen3.5: its think block, answers, and calls with one <parameter=KEY> block per
//     argument (qwen35_frame.cpp);
//   - DeepSeek-V3.2 and V4: their think block, answers, and DSML calls with one parameter
//     element per argument (dsml_frame.cpp);
//   - Plain: a bare JSON document; a call is {"name": ..., "arguments": ...} (plain_frame.cpp).
// One implementation file per format family; replyFramer() picks one by ChatFormat.
#pragma once

#include "text/framed_json_constraint.hpp"
#include "text/json_schema.hpp"
#include "waste/chat.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace waste::text {

class Tokenizer;

// The frame of one reply: reasoning first (when the format lets the model reason, and
// whether it must), then one of the branches.
struct ReplyFrame {
    FramedJsonConstraint::Reasoning reasoning;
    std::vector<FramedJsonConstraint::Branch> branches;
};

// [reasoning] then `schema`'s document and the `end` token: the answer frame of the
// formats that end a turn with one marker after an optional think block (Qwen3.5,
// DeepSeek-V3.2 and V4).
ReplyFrame reasonedAnswer(const FramedJsonConstraint::Reasoning &reasoning, const std::shared_ptr<const Schema> &schema,
                          int32_t end);

// Functions a forced call may choose from: (name, JSON Schema of its arguments).
using ToolSchemas = std::vector<std::pair<std::string, nlohmann::ordered_json>>;

// One chat format's frames for a reply that continues `prompt` (the prompt decides, for
// instance, whether a think block is already open).
class ReplyFramer {
public:
    virtual ~ReplyFramer() = default;
    // (a) The reply's content is one JSON document matching `schema`.
    virtual ReplyFrame answer(const std::shared_ptr<const Schema> &schema) const = 0;
    // (b) The reply is one call of one of `tools` (not empty), its arguments matching the
    // tool's schema.
    virtual ReplyFrame call(const ToolSchemas &tools) const = 0;
};

// The framer of `format` for a reply to `prompt`; `tok` (the model's tokenizer) must
// outlive it. Throws Error(Unsupported) when the vocabulary lacks the format's markup.
std::unique_ptr<ReplyFramer> replyFramer(ChatFormat format, const Tokenizer &tok, std::span<const int32_t> prompt);

// Token ids of frame text, for the framers: markup is tokenized with specials resolved
// (written by the format), text plainly (a tool name: it can never forge markup). Each
// piece is tokenized on its own, as templates' segments are.
class FrameTokens {
public:
    explicit FrameTokens(const Tokenizer &tok) : m_tok(tok) {}
    FrameTokens &markup(std::string_view s);
    FrameTokens &text(std::string_view s);
    // The id of one markup token; Error(Unsupported) naming it when the vocabulary lacks it.
    int32_t marker(std::string_view s) const;
    std::vector<int32_t> take() { return std::move(m_ids); }

private:
    const Tokenizer &m_tok;
    std::vector<int32_t> m_ids;
};

// A <tool_call> block as Qwen3's and ChatML's templates write a call, after `lead`:
// <tool_call>\n{"name": "NAME", "arguments": JSON}\n</tool_call> then `end`.
FramedJsonConstraint::Branch toolCallBlock(const Tokenizer &tok, std::vector<int32_t> lead, const std::string &name,
                                           const nlohmann::ordered_json &params, int32_t end);

// How a format writes a call's arguments one element each (text/argument_list_constraint.hpp):
// `head` writes what comes before a value (it names the key; `raw`: the value is a string
// written as its characters); the other parts are markup.
struct ArgumentLayout {
    std::function<void(FrameTokens &, const std::string &key, bool raw)> head;
    std::string tail;      // after each value
    std::string separator; // between two arguments
    std::string close;     // after the last argument
    std::string stop;      // text at which the format's parser ends a value
};
// The arguments of a function whose parameters are `params` (a JSON Schema object) in
// `layout`: its required properties first, then the optional ones, in the order it lists
// them; a string-typed property raw, any other as JSON (as the format's template writes a
// call). A property's "$ref"s into the parameters' "$defs"/"definitions" keep resolving.
std::shared_ptr<const ArgumentList> argumentList(const Tokenizer &tok, const nlohmann::ordered_json &params,
                                                 const ArgumentLayout &layout);

// The framers, one per format (replyFramer dispatches to them).
std::unique_ptr<ReplyFramer> plainFramer(const Tokenizer &tok);
std::unique_ptr<ReplyFramer> chatMlFramer(const Tokenizer &tok, std::span<const int32_t> prompt);
std::unique_ptr<ReplyFramer> k3Framer(const Tokenizer &tok, std::span<const int32_t> prompt);
std::unique_ptr<ReplyFramer> deepSeekFramer(const Tokenizer &tok, std::span<const int32_t> prompt);
std::unique_ptr<ReplyFramer> deepSeekV31Framer(const Tokenizer &tok, std::span<const int32_t> prompt);
std::unique_ptr<ReplyFramer> kimiK2Framer(const Tokenizer &tok, std::span<const int32_t> prompt);
std::unique_ptr<ReplyFramer> kimiK2InstructFramer(const Tokenizer &tok, std::span<const int32_t> prompt);
std::unique_ptr<ReplyFramer> qwen3Framer(const Tokenizer &tok, std::span<const int32_t> prompt);
std::unique_ptr<ReplyFramer> harmonyFramer(const Tokenizer &tok);
// oneLine: GLM-4.7's layout (the prompt opens <think> itself; no newline before the answer).
std::unique_ptr<ReplyFramer> glm45Framer(const Tokenizer &tok, std::span<const int32_t> prompt, bool oneLine);
std::unique_ptr<ReplyFramer> qwen35Framer(const Tokenizer &tok, std::span<const int32_t> prompt);
// DeepSeek-V3.2 and V4: `block` is the DSML element that holds the calls (function_calls,
// tool_calls).
std::unique_ptr<ReplyFramer> dsmlFramer(const Tokenizer &tok, std::span<const int32_t> prompt, const char *block);

// The constraint that follows `frame` with `tok`'s ordinary tokens (TokenTrie::fromTokenizer).
std::shared_ptr<TokenConstraint> frameConstraint(const ReplyFrame &frame, const Tokenizer &tok, int maxTokens);

} // namespace waste::text
