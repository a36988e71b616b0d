// Splits a Markdown answer into prose and fenced code blocks, so the view can render
// prose as Markdown and give each code block its own monospace frame with a Copy button.
// An unclosed fence (the answer is still streaming) is a code block up to the end.
#pragma once

#include <QList>
#include <QString>

struct MarkdownBlock {
    bool code = false;
    QString language; // the fence's info string, for code
    QString text;
};

QList<MarkdownBlock> splitMarkdownBlocks(const QString &markdown);
