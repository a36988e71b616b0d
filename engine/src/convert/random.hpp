// Deterministic, counter-based random numbers: value i of stream `key` is a pure
// function of (key, i), so any slice of a generated tensor can be produced on its own
// and the converter's sampling does not depend on thread scheduling.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

namespace waste::convert {

inline uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

inline uint64_t hashString(std::string_view s, uint64_t h = 0xcbf29ce484222325ull) {
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
    return h;
}

// Uniform in (0, 1), never exactly 0 or 1.
inline double uniform01(uint64_t key, uint64_t i) {
    return (static_cast<double>(mix64(key ^ mix64(i)) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

// Standard normal via Box-Muller on two counter-derived uniforms.
inline double gaussian(uint64_t key, uint64_t i) {
    const double u1 = uniform01(key, 2 * i), u2 = uniform01(key, 2 * i + 1);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// Sequential generator for loops that need a stream (k-means seeding, sampling).
class Rng {
public:
    explicit Rng(uint64_t seed) : m_key(mix64(seed)) {}
    uint64_t next() { return mix64(m_key ^ mix64(m_counter++)); }
    // Uniform integer in [0, n).
    uint64_t below(uint64_t n) { return n ? next() % n : 0; }

private:
    uint64_t m_key;
    uint64_t m_counter = 0;
};

} // namespace waste::convert
