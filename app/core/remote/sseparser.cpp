#include "remote/sseparser.h"

QList<QByteArray> SseParser::feed(const QByteArray &bytes)
{
    QList<QByteArray> events;
    m_buffer += bytes;
    qsizetype start = 0;
    for (;;) {
        const qsizetype nl = m_buffer.indexOf('\n', start);
        if (nl < 0)
            break;
        QByteArray line = m_buffer.mid(start, nl - start);
        start = nl + 1;
        if (line.endsWith('\r'))
            line.chop(1);
        if (line.isEmpty()) { // the blank line ends an event
            if (m_hasData)
                events << m_data;
            m_data.clear();
            m_hasData = false;
            continue;
        }
        if (line.startsWith("data:")) {
            QByteArray value = line.mid(5);
            if (value.startsWith(' '))
                value.remove(0, 1);
            if (m_hasData)
                m_data += '\n';
            m_data += value;
            m_hasData = true;
        }
        // ":" comments (keep-alives), "event:", "id:" and "retry:" carry nothing we read.
    }
    m_buffer.remove(0, start);
    return events;
}
