#include "io/aligned_buffer.hpp"

#include <waste/waste.hpp>

#include <string>
#ifdef __linux__
#include <sys/mman.h>
#endif

namespace waste::io {

AlignedBuffer::AlignedBuffer(int64_t bytes) : m_size(alignUp(bytes))
{
    if (m_size <= 0)
        return;
    // Large buffers on 2 MiB boundaries, advised into huge pages where the kernel leaves that
    // to the program (THP "madvise"): a converter's batch buffers took one page fault per
    // 4 KiB at first touch, and every direct transfer pins the pages it moves.
    constexpr int64_t kHuge = int64_t(2) << 20;
    const bool huge = m_size >= kHuge;
    const int64_t align = huge ? kHuge : kDirectAlign;
    const int64_t allocated = (m_size + align - 1) / align * align;
    m_data.reset(static_cast<uint8_t *>(std::aligned_alloc(size_t(align), size_t(allocated))));
    if (!m_data)
        throw Error(ErrorCode::OutOfMemory, "cannot allocate a " + std::to_string(m_size) + "-byte read buffer");
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (huge)
        ::madvise(m_data.get(), size_t(allocated), MADV_HUGEPAGE); // advice only: ignored where THP is off
#endif
}

} // namespace waste::io
