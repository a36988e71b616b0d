#include "prefill_meter.h"

#include <algorithm>
#include <cstdio>
#include <unistd.h>

namespace cli {

PrefillMeter::PrefillMeter(const waste::Model &model, bool quiet)
    : m_model(model), m_quiet(quiet), m_tty(::isatty(STDERR_FILENO) != 0), m_bytesBefore(model.stats().bytesRead),
      m_start(std::chrono::steady_clock::now()), m_lastDraw(m_start)
{
}

waste::PrefillCallback PrefillMeter::callback()
{
    return [this](int done, int total) {
        m_done = done;
        m_total = total;
        const auto now = std::chrono::steady_clock::now();
        if (m_quiet || !m_tty || now - m_lastDraw < std::chrono::milliseconds(200) || done >= total)
            return true;
        m_lastDraw = now;
        const double secs = std::chrono::duration<double>(now - m_start).count();
        const double rate = secs > 0 ? done / secs : 0;
        const double left = rate > 0 ? (total - done) / rate : 0;
        std::fprintf(stderr, "\r\033[Kreading the prompt: %d %% (%d of %d tokens), %.0f tok/s, about %.0f s left",
                     int(100.0 * done / std::max(total, 1)), done, total, rate, left);
        m_drawn = true;
        return true;
    };
}

void PrefillMeter::finish()
{
    if (m_drawn)
        std::fprintf(stderr, "\r\033[K");
    m_drawn = false;
    if (m_quiet || m_total <= 64)
        return;
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    const double gb = double(m_model.stats().bytesRead - m_bytesBefore) / 1e9;
    std::fprintf(stderr, "read %d prompt tokens in %.2f s (%.0f tok/s); %.3f GB of experts read from disk\n", m_total,
                 secs, secs > 0 ? m_total / secs : 0.0, gb);
}

} // namespace cli
