// The command line's clock for reading a prompt: on a terminal, one line redrawn as a
// prompt's passes go ("reading the prompt: 43 % (1480 of 3445 tokens), 380 tok/s, about
// 5 s left"); at the end, for a prompt of more than a pass, one line with what it took.
// Quiet (-q) prints nothing.
#pragma once

#include <waste/waste.hpp>

#include <chrono>

namespace cli {

class PrefillMeter {
public:
    PrefillMeter(const waste::Model &model, bool quiet);
    // The callback to hand Model::eval / generate (it never stops the read).
    waste::PrefillCallback callback();
    // The prompt has been read: clears the line, says what it took when that is worth saying.
    void finish();

private:
    const waste::Model &m_model;
    bool m_quiet;
    bool m_tty;
    bool m_drawn = false;
    int m_total = 0, m_done = 0;
    int64_t m_bytesBefore = 0;
    std::chrono::steady_clock::time_point m_start, m_lastDraw;
};

} // namespace cli
