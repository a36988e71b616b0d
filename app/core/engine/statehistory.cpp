#include "engine/statehistory.h"

#include <QJsonObject>

#include <algorithm>
#include <functional>

qsizetype StateHistory::tokenCount() const
{
    qsizetype n = 0;
    for (const Chunk &c : m_chunks)
        n += qsizetype(c.tokens.size());
    return n;
}

void StateHistory::appendPrompt(std::span<const int32_t> tokens)
{
    if (tokens.empty())
        return;
    if (!m_chunks.empty() && !m_chunks.back().generated) {
        m_chunks.back().tokens.insert(m_chunks.back().tokens.end(), tokens.begin(), tokens.end());
        return;
    }
    m_chunks.push_back(Chunk{{tokens.begin(), tokens.end()}, {}, {}, false});
}

void StateHistory::appendGenerated(std::span<const int32_t> tokens, const std::string &text, const std::string &visible)
{
    if (tokens.empty())
        return;
    m_chunks.push_back(Chunk{{tokens.begin(), tokens.end()}, text, visible.empty() ? text : visible, true});
}

namespace {

// How many prompt tokens from `at` spell `text` exactly (their bytes, or nothing for the
// tokens `skip` says to pass over), or -1.
qsizetype spelled(std::span<const int32_t> prompt, size_t at, const std::string &text,
                  const std::function<std::string(int32_t)> &bytes, const std::function<bool(int32_t)> &skip)
{
    // Text that cannot be checked (tokens without bytes) never matches.
    if (text.empty())
        return -1;
    const size_t from = at;
    std::string seen;
    while (seen.size() < text.size()) {
        if (at >= prompt.size())
            return -1;
        const int32_t t = prompt[at++];
        if (skip && skip(t))
            continue;
        seen += bytes(t);
        if (seen.size() > text.size() || text.compare(0, seen.size(), seen) != 0)
            return -1;
    }
    return qsizetype(at - from);
}

} // namespace

qsizetype StateHistory::matchPrefix(std::span<const int32_t> prompt, const TokenBytes &bytes) const
{
    size_t at = 0;
    for (const Chunk &c : m_chunks) {
        if (!c.generated) {
            if (at + c.tokens.size() > prompt.size()
                || !std::equal(c.tokens.begin(), c.tokens.end(), prompt.begin() + qsizetype(at)))
                return -1;
            at += c.tokens.size();
            continue;
        }
        // As the model wrote it (specials as markup or spelled as text), else without them.
        qsizetype n = spelled(prompt, at, c.text, bytes.text, {});
        if (n < 0)
            n = spelled(prompt, at, c.visible, bytes.text, bytes.special);
        if (n < 0)
            return -1;
        at += size_t(n);
    }
    return qsizetype(at);
}

qsizetype StateHistory::trailingGenerated() const
{
    return !m_chunks.empty() && m_chunks.back().generated ? qsizetype(m_chunks.back().tokens.size()) : 0;
}

StateHistory StateHistory::withoutTrailingGenerated() const
{
    StateHistory h = *this;
    if (!h.m_chunks.empty() && h.m_chunks.back().generated)
        h.m_chunks.pop_back();
    return h;
}

qsizetype StateHistory::countPromptToken(int32_t token) const
{
    qsizetype n = 0;
    for (const Chunk &c : m_chunks)
        if (!c.generated)
            n += std::count(c.tokens.begin(), c.tokens.end(), token);
    return n;
}

QJsonArray StateHistory::toJson() const
{
    QJsonArray out;
    for (const Chunk &c : m_chunks) {
        QJsonArray ids;
        for (int32_t t : c.tokens)
            ids.append(t);
        QJsonObject o{{QStringLiteral("tokens"), ids}};
        if (c.generated) {
            o.insert(QStringLiteral("generated"), true);
            o.insert(QStringLiteral("text"), QString::fromStdString(c.text));
            if (c.visible != c.text)
                o.insert(QStringLiteral("visible"), QString::fromStdString(c.visible));
        }
        out.append(o);
    }
    return out;
}

std::optional<StateHistory> StateHistory::fromJson(const QJsonArray &json)
{
    StateHistory h;
    for (const QJsonValue &v : json) {
        if (!v.isObject())
            return std::nullopt;
        const QJsonObject o = v.toObject();
        const QJsonValue ids = o.value(QStringLiteral("tokens"));
        if (!ids.isArray())
            return std::nullopt;
        std::vector<int32_t> tokens;
        tokens.reserve(size_t(ids.toArray().size()));
        for (const QJsonValue &t : ids.toArray()) {
            if (!t.isDouble() || t.toDouble() < 0 || t.toDouble() > 2147483647.0)
                return std::nullopt;
            tokens.push_back(int32_t(t.toDouble()));
        }
        if (o.value(QStringLiteral("generated")).toBool()) {
            // QString round trip: the text is valid UTF-8 (the engine releases nothing else).
            h.appendGenerated(tokens, o.value(QStringLiteral("text")).toString().toStdString(),
                              o.value(QStringLiteral("visible")).toString().toStdString());
        } else {
            h.appendPrompt(tokens);
        }
    }
    return h;
}

std::vector<int32_t> StateHistory::tokens() const
{
    std::vector<int32_t> out;
    for (const Chunk &c : m_chunks)
        out.insert(out.end(), c.tokens.begin(), c.tokens.end());
    return out;
}
