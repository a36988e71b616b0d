// DeepSeek's special markers, spelled once: the name between full-width bars (U+FF5C),
// U+2581 (▁) for each of its spaces. R1's and V3.1's templates write them, the framer
// forces them, the reply parser and the format decision look them up, and the tiny
// generator puts them in its vocabulary.
#pragma once

#include <string>
#include <string_view>

namespace waste::text::deepseek {

// "<｜" + `name` with each space as ▁ + "｜>".
inline std::string marker(std::string_view name)
{
    std::string s = "<\xEF\xBD\x9C";
    for (const char c : name)
        s += c == ' ' ? std::string_view("\xE2\x96\x81") : std::string_view(&c, 1);
    return s + "\xEF\xBD\x9C>";
}

inline const std::string kBos = marker("begin of sentence");
inline const std::string kEos = marker("end of sentence");
inline const std::string kUser = marker("User");
inline const std::string kAssistant = marker("Assistant");
// DeepSeek V4 (encoding_dsv4.py): the latest-reminder role and the DSML tool-call marker
// ("｜DSML｜", bars without angle brackets), one token each.
inline const std::string kLatestReminder = marker("latest_reminder");
inline const std::string kDsml = "\xEF\xBD\x9C" "DSML" "\xEF\xBD\x9C";
inline const std::string kCallsBegin = marker("tool calls begin");
inline const std::string kCallsEnd = marker("tool calls end");
inline const std::string kCallBegin = marker("tool call begin");
inline const std::string kCallEnd = marker("tool call end");
inline const std::string kSep = marker("tool sep");
// R1 wraps tool results in an outputs section; V3.1 writes each result alone.
inline const std::string kOutputsBegin = marker("tool outputs begin");
inline const std::string kOutputsEnd = marker("tool outputs end");
inline const std::string kOutputBegin = marker("tool output begin");
inline const std::string kOutputEnd = marker("tool output end");

} // namespace waste::text::deepseek
