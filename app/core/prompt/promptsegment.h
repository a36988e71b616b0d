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
