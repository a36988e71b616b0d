// A heap buffer aligned for direct I/O (offset, length and address all 4 KiB multiples).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace waste::io {

inline constexpr int64_t kDirectAlign = 4096;

inline int64_t alignUp(int64_t n) { return (n + kDirectAlign - 1) / kDirectAlign * kDirectAlign; }

struct FreeDeleter {
    void operator()(void *p) const noexcept { std::free(p); }
};

class AlignedBuffer {
public:
    AlignedBuffer() = default;
    explicit AlignedBuffer(int64_t bytes);
    uint8_t *data() const { return m_data.get(); }
    int64_t size() const { return m_size; }

private:
    std::unique_ptr<uint8_t, FreeDeleter> m_data;
    int64_t m_size = 0;
};

} // namespace waste::io
