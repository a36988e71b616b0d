// PromptSegment: what every prompt renderer (chat page, API server) produces and the engine
// thread tokenises. It lives with the renderers so that prompt/ needs nothing from engine/.
#pragma once

#include <QList>
#include <QMetaType>
#include <QString>

// One piece of a rendered prompt. Markup segments may contain special markers (they come
// from a template); text segments are tokenised as plain text so user text can never forge
// markup. Segments are tokenised one by one and never joined (BPE is not associative).
struct PromptSegment {
    QString text;
    bool markup = false;
};

Q_DECLARE_METATYPE(PromptSegment)

// How many leading segments two renderings share, segment for segment. A prompt rendered
// again with only its last message changed shares everything before that message: the
// system prompt, the tools and the earlier turns, which the next request is likely to start
// with too (the prompt cache keeps the state after them; GenerationRequest::reusableSegments).
inline int sharedLeadingSegments(const QList<PromptSegment> &a, const QList<PromptSegment> &b)
{
    int n = 0;
    while (n < a.size() && n < b.size() && a.at(n).text == b.at(n).text && a.at(n).markup == b.at(n).markup)
        ++n;
    return n;
}

// The mark a probe rendering appends to the last message (a character no message ends with
// by chance twice): what differs between the two renderings is where that message starts.
inline constexpr QChar kProbeMark = QChar(0x2063); // INVISIBLE SEPARATOR
