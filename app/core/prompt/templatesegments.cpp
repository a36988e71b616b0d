#include "prompt/templatesegments.h"

QList<PromptSegment> toPromptSegments(const waste::ChatSegments &segments)
{
    QList<PromptSegment> out;
    out.reserve(qsizetype(segments.size()));
    for (const waste::ChatSegment &s : segments)
        out.append(PromptSegment{QString::fromStdString(s.text), s.markup});
    return out;
}
