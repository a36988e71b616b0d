// A K3 reply read back from its text: the thinking channel and the response channel
// (<|close|>think<|sep|> ends the first, <|open|>response<|sep|> ... <|close|>response<|sep|>
// holds the second). Used to show a reply and to render it back into the next prompt.
#pragma once

#include <QString>

struct K3ReplyParts {
    QString reasoning;
    QString content;
};

// openedThinking: the prompt ended inside the thinking channel. Text after the response
// channel (the message's closing markers) is not part of either.
K3ReplyParts splitK3Reply(const QString &raw, bool openedThinking);

// While a reply streams: `text` without a trailing partial channel marker ("<|clo"), so a
// marker never flashes on screen before it is complete.
QString withoutPartialMarker(const QString &text);
