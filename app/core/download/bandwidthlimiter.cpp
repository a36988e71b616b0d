#include "download/bandwidthlimiter.h"

#include <algorithm>

void BandwidthLimiter::setRate(qint64 bytesPerSecond)
{
    m_rate = qMax<qint64>(0, bytesPerSecond);
    m_tokens = 0;
    m_clock.start();
}

void BandwidthLimiter::refill()
{
    if (!m_clock.isValid())
        m_clock.start();
    const qint64 ns = m_clock.nsecsElapsed();
    m_clock.restart();
    // A burst of at most a quarter second keeps the rate smooth at any setting.
    const double burst = std::max(16384.0, m_rate / 4.0);
    m_tokens = std::min(burst, m_tokens + m_rate * (ns / 1e9));
}

qint64 BandwidthLimiter::take(qint64 want)
{
    if (m_rate <= 0)
        return want;
    refill();
    const qint64 n = std::min<qint64>(want, static_cast<qint64>(m_tokens));
    m_tokens -= n;
    return n;
}
