#include "chat/markdownblocks.h"

#include <QStringList>

QList<MarkdownBlock> splitMarkdownBlocks(const QString &markdown)
{
    QList<MarkdownBlock> out;
    MarkdownBlock current;
    QString fence; // the opening fence ("```" or "~~~", possibly longer) while in code
    const QStringList lines = markdown.split(QLatin1Char('\n'));
    auto flush = [&] {
        if (current.code || !current.text.trimmed().isEmpty()) {
            if (current.text.endsWith(QLatin1Char('\n')))
                current.text.chop(1);
            out << current;
        }
        current = MarkdownBlock{};
    };
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QString &line = lines.at(i);
        const QString trimmed = line.trimmed();
        if (fence.isEmpty()) {
            if (trimmed.startsWith(QLatin1String("```")) || trimmed.startsWith(QLatin1String("~~~"))) {
                qsizetype n = 0;
                while (n < trimmed.size() && trimmed.at(n) == trimmed.at(0))
                    ++n;
                flush();
                fence = trimmed.left(n);
                current.code = true;
                current.language = trimmed.mid(n).trimmed();
                continue;
            }
        } else if (trimmed.startsWith(fence) && trimmed.mid(fence.size()).trimmed().isEmpty()) {
            flush();
            fence.clear();
            continue;
        }
        current.text += line;
        if (i + 1 < lines.size())
            current.text += QLatin1Char('\n');
    }
    flush();
    return out;
}
