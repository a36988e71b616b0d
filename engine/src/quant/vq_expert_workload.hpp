// A routed VQ3R expert as decoding runs it, on random records: the decode's largest kernel,
// for measurements that need the engine's real work rather than a stand-in. The compute
// calibration times it (quant/kernel_calibration.cpp); the disk measurement runs it beside
// expert reads to see what a read costs the compute (plan/read_interference.cpp).
#pragma once

#include "compute/thread_pool.hpp"
#include "format/codebooks.hpp"
#include "quant/lut.hpp"

#include <cstdint>
#include <random>
#include <vector>

namespace waste::quant {

// Codebooks of random values, through a temporary codebooks.bin: the loader is the only way
// the engine makes them, and the tables must come from the same layout it uses.
format::Codebooks randomCodebooks(int books, std::mt19937 &rng);

// How many copies of a `bytes` operand a timing cycles through so that together they
// overflow the last-level cache (64 MiB: more than a laptop's L3), at most 512.
int rotationCopies(int64_t bytes);

class VqExpertWorkload {
public:
    // An expert of `inter` x `width` (three 8-bit stages), input `x` (width values, kept by
    // pointer), its copies enough to overflow the caches.
    VqExpertWorkload(int64_t inter, int64_t width, const format::Codebooks &books, const float *x,
                     compute::ThreadPool &pool, std::mt19937 &rng);
    int64_t recordBytes() const { return m_gateBytes * 2 + m_downBytes; }
    // The gate and up applies split over the pool, the activation, the down table, the down
    // apply: on the first copy each time (warm) or the next copy in turn (cold, as a decoded
    // token meets each routed expert's indices once, from memory).
    void runWarm() { run(m_indices.data()); }
    void runCold();

private:
    void run(const uint8_t *record);

    int64_t m_inter, m_width, m_gateBytes, m_downBytes;
    int m_copies, m_turn = 0;
    const format::Codebooks &m_books;
    compute::ThreadPool &m_pool;
    std::vector<uint8_t> m_indices, m_scales;
    std::vector<float> m_g, m_u, m_out;
    Lut m_gate, m_up, m_down;
};

} // namespace waste::quant
