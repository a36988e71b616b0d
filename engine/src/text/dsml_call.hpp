// The DSML tool-call block of DeepSeek-V3.2 and V4, the text between <｜DSML｜function_calls>
// (V3.2) or <｜DSML｜tool_calls> (V4) and its closing tag (encoding_dsv32.py's and
// encoding_dsv4.py's parse_tool_calls and encode_arguments_to_dsml): one or more
//   <｜DSML｜invoke name="NAME">
//   <｜DSML｜parameter name="KEY" string="true|false">VALUE</｜DSML｜parameter>
//   </｜DSML｜invoke>
// A string="true" value is the string as written, a string="false" one the JSON text it is;
// a call's arguments are the JSON object {"KEY": value, ...} in the order written.
#pragma once

#include "text/segment_writer.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace waste::text {

struct DsmlCall {
    std::string name;
    std::string arguments; // a JSON object
};

// The calls in `body` (whitespace between elements allowed); none when an element is
// malformed, a parameter is named twice or there is no call (the block then stays text).
std::optional<std::vector<DsmlCall>> parseDsmlCalls(std::string_view body);

// Writes one OpenAI-style call ({function: {name, arguments}}) as an invoke: its arguments'
// members as parameters in their order, strings as written and anything else as JSON; the
// name, keys and values as text, the DSML tags as markup. Arguments that are not a JSON
// object (where the release's encoder would stop) go as one `arguments` parameter.
void writeDsmlInvoke(SegmentWriter &w, const nlohmann::ordered_json &call);

// Writes an assistant turn's calls as "\n\n" and one block, <｜DSML｜BLOCK> (function_calls
// for V3.2, tool_calls for V4) with the invokes one a line; nothing when there are none.
void writeDsmlCalls(SegmentWriter &w, const nlohmann::ordered_json &calls, const std::string &block);

} // namespace waste::text
