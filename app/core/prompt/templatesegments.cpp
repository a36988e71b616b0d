#include "prompt/templatesegments.h"

#include <stdexcept>

namespace {
// The marker the engine's ChatML renderer writes where an image part was.
const QString kImagePlaceholder = QStringLiteral("<|kimi_image_placeholder|>");
} // namespace

QList<PromptSegment> toPromptSegments(const waste::text::Segments &segments)
{
    QList<PromptSegment> out;
    out.reserve(qsizetype(segments.size()));
    for (const waste::text::Segment &s : segments)
        out.append(PromptSegment{QString::fromStdString(s.text), s.markup});
    return out;
}

void placeImageBlocks(QList<PromptSegment> &segments, const QStringList &blocks)
{
    qsizetype image = 0;
    for (PromptSegment &s : segments) {
        if (!s.markup || s.text != kImagePlaceholder)
            continue;
        if (image >= blocks.size())
            throw std::runtime_error("the chat template placed more images than the conversation has");
        s.text = blocks.at(image++);
    }
    if (image != blocks.size())
        throw std::runtime_error("the chat template left out an image of the conversation");
}
