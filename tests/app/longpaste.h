// A pasted document for the tests of long prompts: about 12,000 tokens on the reference
// container r3's small vocabulary for the default 240 paragraphs (r3 reads it in half a second
// to two), starting with `title` so that each test's document differs (the engine would reuse a
// state that holds the same one).
#pragma once

#include <QString>

inline QString longPaste(const QString &title, int paragraphs = 240)
{
    QString text = title + QStringLiteral("\n");
    for (int i = 0; i < paragraphs; ++i)
        text += QStringLiteral("Paragraph %1: the quick brown fox jumps over the lazy dog. ").arg(i);
    return text;
}
