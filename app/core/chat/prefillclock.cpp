#include "chat/prefillclock.h"

#include <QCoreApplication>

#include <cmath>

void PrefillClock::report(int done, int total, double seconds)
{
    if (m_firstDone < 0 || total != m_total || done < m_done) {
        // A new prompt (or one read again from an earlier point): the rate starts over.
        m_firstDone = done;
        m_firstAt = seconds;
    }
    m_done = done;
    m_total = total;
    m_lastAt = seconds;
}

double PrefillClock::secondsLeft() const
{
    const double elapsed = m_lastAt - m_firstAt;
    const int read = m_done - m_firstDone;
    if (m_firstDone < 0 || elapsed < 0.5 || read <= 0)
        return -1;
    return double(m_total - m_done) * elapsed / read;
}

QString PrefillClock::leftText(double seconds)
{
    if (seconds < 10)
        return QCoreApplication::translate("PrefillClock", "a few seconds left");
    if (seconds < 55)
        return QCoreApplication::translate("PrefillClock", "about %1 s left").arg(int(std::lround(seconds / 5)) * 5);
    const long minutes = std::lround(seconds / 60);
    if (minutes < 60)
        return QCoreApplication::translate("PrefillClock", "about %1 min left").arg(std::max(1L, minutes));
    return QCoreApplication::translate("PrefillClock", "about %1 h %2 min left").arg(minutes / 60).arg(minutes % 60);
}

QString PrefillClock::text() const
{
    const int percent = int(std::floor(fraction() * 100));
    QString t = QCoreApplication::translate("PrefillClock", "Reading your message — %1 %").arg(percent);
    const double left = secondsLeft();
    if (left >= 0)
        t += QStringLiteral(", ") + leftText(left);
    return t;
}
