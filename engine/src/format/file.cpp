#include "format/file.hpp"

#include "waste/waste.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace waste::format {

File::File(const std::string &path) : m_path(path)
{
    m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (m_fd < 0)
        throw Error(ErrorCode::Io, path + ": cannot open (" + std::strerror(errno) + ")");
    struct stat st{};
    if (::fstat(m_fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(m_fd);
        m_fd = -1;
        throw Error(ErrorCode::Io, path + ": not a regular file");
    }
    m_size = static_cast<int64_t>(st.st_size);
}

File::~File()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

File::File(File &&other) noexcept : m_fd(other.m_fd), m_size(other.m_size), m_path(std::move(other.m_path))
{
    other.m_fd = -1;
}

File &File::operator=(File &&other) noexcept
{
    if (this != &other) {
        if (m_fd >= 0)
            ::close(m_fd);
        m_fd = other.m_fd;
        m_size = other.m_size;
        m_path = std::move(other.m_path);
        other.m_fd = -1;
    }
    return *this;
}

void File::readAt(void *dst, int64_t size, int64_t offset) const
{
    if (offset < 0 || size < 0 || offset > m_size || size > m_size - offset)
        throw Error(ErrorCode::Io, m_path + ": read of " + std::to_string(size) + " bytes at " + std::to_string(offset) +
                                       " is past the end of the file (" + std::to_string(m_size) + " bytes); the file is truncated");
    auto *p = static_cast<char *>(dst);
    while (size > 0) {
        const ssize_t n = ::pread(m_fd, p, static_cast<size_t>(size), static_cast<off_t>(offset));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throw Error(ErrorCode::Io, m_path + ": read failed (" + std::strerror(errno) + ")");
        }
        if (n == 0)
            throw Error(ErrorCode::Io, m_path + ": short read at " + std::to_string(offset) + "; the file is truncated");
        p += n;
        size -= n;
        offset += n;
    }
}

std::string readWholeFile(const std::string &path, int64_t maxBytes)
{
    File f(path);
    if (f.size() > maxBytes)
        throw Error(ErrorCode::Format, path + ": file is larger than " + std::to_string(maxBytes) + " bytes");
    std::string s(static_cast<size_t>(f.size()), '\0');
    f.readAt(s.data(), f.size(), 0);
    return s;
}

bool fileExists(const std::string &path)
{
    struct stat st{};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

} // namespace waste::format
