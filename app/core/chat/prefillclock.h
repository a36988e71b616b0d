// What the chat says while a prompt is read: "Reading your message — 43 %, about 2 min left".
// The engine reports positions done of total after every layer of a pass (images expanded,
// so a picture counts as what it costs); the time left is the rate seen since the first
// report, so a prefix reused from before (done > 0 at the start) does not make it optimistic.
#pragma once

#include <QString>

class PrefillClock {
public:
    // A progress report at `seconds` on any steady clock.
    void report(int done, int total, double seconds);
    void reset() { *this = PrefillClock(); }

    double fraction() const { return m_total > 0 ? double(m_done) / m_total : 0; }
    // Seconds left at the rate seen so far; negative while too little has been seen to say
    // (under half a second, or no position read since the first report).
    double secondsLeft() const;
    // "Reading your message — 43 %" and, once the rate is known, ", about 2 min left".
    QString text() const;
    // "about 2 min left", "about 40 s left", "a few seconds left", "about 1 h 10 min left".
    static QString leftText(double seconds);

private:
    int m_done = 0, m_total = 0;
    int m_firstDone = -1;
    double m_firstAt = 0, m_lastAt = 0;
};
