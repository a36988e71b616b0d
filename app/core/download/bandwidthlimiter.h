// A token bucket shared by every transfer of one downloader: the sum of their reads stays under
// the limit. A transfer that gets no allowance stops reading (TCP flow control then slows the
// sender) and tries again after wakeMs().
#pragma once

#include <QElapsedTimer>
#include <QtGlobal>

class BandwidthLimiter {
public:
    void setRate(qint64 bytesPerSecond);
    qint64 rate() const { return m_rate; }
    // Up to `want` bytes that may be read now (all of them when unlimited).
    qint64 take(qint64 want);
    static constexpr int wakeMs() { return 25; }

private:
    void refill();
    qint64 m_rate = 0;
    double m_tokens = 0;
    QElapsedTimer m_clock;
};
