// DeepSeek V4's DSML tool-call block, the text between <｜DSML｜tool_calls> and
// </｜DSML｜tool_calls> (encoding_dsv4.py's parse_tool_calls): one or more
//   <｜DSML｜invoke name="NAME">
//   <｜DSML｜parameter name="KEY" string="true|false">VALUE</｜DSML｜parameter>
//   </｜DSML｜invoke>
// A string="true" value is the string as written, a string="false" one the JSON text it is;
// a call's arguments are the JSON object {"KEY": value, ...} in the order written.
#pragma once

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

} // namespace waste::text
