#include "prompt/k3reply.h"

namespace {

const QString kCloseThink = QStringLiteral("<|close|>think<|sep|>");
const QString kOpenResponse = QStringLiteral("<|open|>response<|sep|>");
const QString kCloseResponse = QStringLiteral("<|close|>response<|sep|>");

} // namespace

K3ReplyParts splitK3Reply(const QString &raw, bool openedThinking)
{
    K3ReplyParts parts;
    QString rest = raw;
    if (openedThinking) {
        const qsizetype end = rest.indexOf(kCloseThink);
        if (end < 0) {
            parts.reasoning = rest;
            return parts;
        }
        parts.reasoning = rest.left(end);
        rest = rest.mid(end + kCloseThink.size());
        if (rest.startsWith(kOpenResponse))
            rest = rest.mid(kOpenResponse.size());
    }
    const qsizetype end = rest.indexOf(kCloseResponse);
    parts.content = end < 0 ? rest : rest.left(end);
    return parts;
}

QString withoutPartialMarker(const QString &text)
{
    // Every K3 marker starts with "<|"; a tail that could still grow into one is held back.
    const qsizetype at = text.lastIndexOf(QLatin1String("<|"));
    if (at < 0) {
        return text.endsWith(QLatin1Char('<')) ? text.chopped(1) : text;
    }
    return text.indexOf(QLatin1String("|>"), at) < 0 ? text.left(at) : text;
}
