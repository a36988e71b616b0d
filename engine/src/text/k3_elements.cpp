#include "text/k3_elements.hpp"

#include "text/k3_template.hpp"

namespace waste::text {

namespace {
constexpr const char *kOpen = "<|open|>";
constexpr const char *kClose = "<|close|>";
constexpr const char *kSep = "<|sep|>";
} // namespace

std::string k3EscapeAttribute(std::string_view value)
{
    std::string out;
    out.reserve(value.size());
    for (const char c : value) {
        if (c == '&')
            out += "&amp;";
        else if (c == '"')
            out += "&quot;";
        else
            out += c;
    }
    return out;
}

Segments k3OpenSegments(const std::string &tag, const std::vector<std::pair<std::string, std::string>> &attrs)
{
    Segments out;
    auto text = [&](const std::string &t) {
        if (!t.empty())
            out.push_back({t, false});
    };
    out.push_back({kOpen, true});
    text(tag);
    for (const auto &[k, v] : attrs) {
        text(" " + k);
        text("=\"");
        text(k3EscapeAttribute(v));
        text("\"");
    }
    out.push_back({kSep, true});
    return out;
}

Segments k3CloseSegments(const std::string &tag)
{
    Segments out{{kClose, true}};
    if (!tag.empty())
        out.push_back({tag, false});
    out.push_back({kSep, true});
    return out;
}

void K3Writer::markup(const std::string &special) { m_out.push_back({special, true}); }

void K3Writer::text(const std::string &s)
{
    if (!s.empty())
        m_out.push_back({s, false});
}

void K3Writer::open(const std::string &tag, const K3Attrs &attrs) { append(k3OpenSegments(tag, attrs)); }

void K3Writer::close(const std::string &tag) { append(k3CloseSegments(tag)); }

void K3Writer::endMessage()
{
    close("message");
    markup(kK3EndOfMessage);
}

std::string k3UnescapeAttribute(std::string_view value)
{
    std::string out;
    out.reserve(value.size());
    for (size_t i = 0; i < value.size();) {
        if (value.compare(i, 5, "&amp;") == 0) {
            out += '&';
            i += 5;
        } else if (value.compare(i, 6, "&quot;") == 0) {
            out += '"';
            i += 6;
        } else {
            out += value[i++];
        }
    }
    return out;
}

} // namespace waste::text
