// Server-sent events as they arrive in pieces from a socket: bytes go in as they come (a
// piece may end mid-line, even mid-character), and every complete event's data comes out
// once its blank line has arrived. Only what OpenAI-compatible streams use is read: "data:"
// lines (joined with newlines when an event has several), comments and other fields skipped.
#pragma once

#include <QByteArray>
#include <QList>

class SseParser {
public:
    // The data of each event completed by `bytes`, in order.
    QList<QByteArray> feed(const QByteArray &bytes);
    // Bytes held back: an event the stream has not finished (a cut stream leaves some).
    bool hasPartialEvent() const { return !m_buffer.trimmed().isEmpty() || !m_data.isEmpty(); }

private:
    QByteArray m_buffer; // the current, unfinished line
    QByteArray m_data;   // the data lines of the current event
    bool m_hasData = false;
};
