#include "io/aligned_buffer.hpp"

#include <waste/waste.hpp>

#include <string>

namespace waste::io {

AlignedBuffer::AlignedBuffer(int64_t bytes) : m_size(alignUp(bytes))
{
    if (m_size > 0) {
        m_data.reset(static_cast<uint8_t *>(std::aligned_alloc(kDirectAlign, size_t(m_size))));
        if (!m_data)
            throw Error(ErrorCode::OutOfMemory, "cannot allocate a " + std::to_string(m_size) + "-byte read buffer");
    }
}

} // namespace waste::io
