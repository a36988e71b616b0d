#include "io/direct_file.hpp"

#include "io/aligned_buffer.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#ifdef _WIN32
#define NOMINMAX
#include <windows.h>
#else
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace waste::io {

namespace {

[[noreturn]] void ioFail(const std::string &path, const std::string &what, int err)
{
    throw Error(ErrorCode::Io, path + ": " + what + ": " + std::strerror(err));
}

#ifndef _WIN32
// True when the first page of the file is in the page cache right after a direct read of
// it, i.e. the "bypass" did not bypass anything.
bool pageCached(int fd)
{
    void *map = ::mmap(nullptr, size_t(kDirectAlign), PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return false; // cannot tell: trust the successful direct read
#ifdef __APPLE__
    char vec = 0;
#else
    unsigned char vec = 0;
#endif
    bool cached = ::mincore(map, size_t(kDirectAlign), &vec) == 0 && (vec & 1);
    ::munmap(map, size_t(kDirectAlign));
    return cached;
}
#endif

} // namespace

DirectFile::DirectFile(const std::string &path, bool wantDirect) : m_path(path)
{
#ifdef _WIN32
    auto openWith = [&](DWORD flags) {
        return ::CreateFileA(path.c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING, flags, nullptr);
    };
    HANDLE h = INVALID_HANDLE_VALUE;
    if (wantDirect)
        h = openWith(FILE_ATTRIBUTE_NORMAL | FILE_FLAG_NO_BUFFERING);
    if (h == INVALID_HANDLE_VALUE)
        h = openWith(FILE_ATTRIBUTE_NORMAL | FILE_FLAG_RANDOM_ACCESS);
    if (h == INVALID_HANDLE_VALUE)
        throw Error(ErrorCode::Io, path + ": cannot open (Windows error " + std::to_string(::GetLastError()) + ")");
    m_handle = h;
    LARGE_INTEGER sz;
    ::GetFileSizeEx(h, &sz);
    m_size = sz.QuadPart;
    m_direct = wantDirect;
    if (wantDirect && m_size > 0) {
        AlignedBuffer probe(kDirectAlign);
        try {
            readAt(probe.data(), kDirectAlign, 0);
        } catch (const Error &) {
            close();
            m_handle = openWith(FILE_ATTRIBUTE_NORMAL | FILE_FLAG_RANDOM_ACCESS);
            m_direct = false;
            m_warning = path + ": the volume refuses unbuffered reads; reading through the system cache";
        }
    }
#else
    if (wantDirect) {
#ifdef __linux__
        m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
        if (m_fd < 0 && errno != EINVAL)
            ioFail(path, "cannot open", errno);
        if (m_fd < 0)
            m_warning = path + ": the filesystem refuses O_DIRECT; reading through the page cache";
#else
        m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (m_fd < 0)
            ioFail(path, "cannot open", errno);
#ifdef __APPLE__
        if (::fcntl(m_fd, F_NOCACHE, 1) != 0)
            m_warning = path + ": F_NOCACHE refused; reading through the page cache";
#else
        m_warning = path + ": no page-cache bypass on this platform";
#endif
#endif
        m_direct = m_fd >= 0 && m_warning.empty();
    }
    if (m_fd < 0) {
        m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (m_fd < 0)
            ioFail(path, "cannot open", errno);
    }
    struct stat st {};
    if (::fstat(m_fd, &st) != 0)
        ioFail(path, "cannot stat", errno);
    m_size = int64_t(st.st_size);

    if (m_direct && m_size > 0) {
        // Drop the first page from the cache (flushing it if dirty), read it directly,
        // then look whether it came back into the cache. Another process may read the
        // same page through the cache between the two steps (a desktop indexer, a second
        // model, parallel tests), so only a page that comes back on every try counts.
        std::string why;
        AlignedBuffer probe(kDirectAlign);
        for (int attempt = 0; attempt < 3; ++attempt) {
#ifdef __linux__
            ::fdatasync(m_fd);
            ::posix_fadvise(m_fd, 0, kDirectAlign, POSIX_FADV_DONTNEED);
#endif
            ssize_t n;
            do
                n = ::pread(m_fd, probe.data(), size_t(kDirectAlign), 0);
            while (n < 0 && errno == EINTR);
            if (n < 0) {
                why = std::string("direct reads fail (") + std::strerror(errno) + ")";
                break;
            }
            if (!pageCached(m_fd)) {
                why.clear();
                break;
            }
            why = "direct reads are still served from RAM (tmpfs or a filesystem that caches anyway)";
        }
        if (!why.empty()) {
            ::close(m_fd);
            m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
            if (m_fd < 0)
                ioFail(path, "cannot reopen", errno);
            m_direct = false;
            m_warning = path + ": " + why + "; reading through the page cache, so hit rates and read speeds include RAM";
        }
    }
#ifdef __linux__
    if (!m_direct)
        ::posix_fadvise(m_fd, 0, 0, POSIX_FADV_RANDOM);
#endif
#endif
}

DirectFile::~DirectFile() { close(); }

DirectFile::DirectFile(DirectFile &&o) noexcept { *this = std::move(o); }

DirectFile &DirectFile::operator=(DirectFile &&o) noexcept
{
    if (this != &o) {
        close();
        m_path = std::move(o.m_path);
        m_size = o.m_size;
        m_direct = o.m_direct;
        m_warning = std::move(o.m_warning);
#ifdef _WIN32
        m_handle = std::exchange(o.m_handle, nullptr);
#else
        m_fd = std::exchange(o.m_fd, -1);
#endif
    }
    return *this;
}

bool DirectFile::isOpen() const
{
#ifdef _WIN32
    return m_handle != nullptr;
#else
    return m_fd >= 0;
#endif
}

void DirectFile::close() noexcept
{
#ifdef _WIN32
    if (m_handle)
        ::CloseHandle(m_handle);
    m_handle = nullptr;
#else
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = -1;
#endif
}

int64_t DirectFile::readAt(void *dst, int64_t bytes, int64_t offset) const
{
    int64_t done = 0;
    auto *out = static_cast<uint8_t *>(dst);
    while (done < bytes) {
#ifdef _WIN32
        OVERLAPPED ov{};
        const int64_t at = offset + done;
        ov.Offset = DWORD(uint64_t(at) & 0xffffffffu);
        ov.OffsetHigh = DWORD(uint64_t(at) >> 32);
        DWORD got = 0;
        DWORD want = DWORD(std::min<int64_t>(bytes - done, int64_t(1) << 30));
        if (!::ReadFile(m_handle, out + done, want, &got, &ov)) {
            if (::GetLastError() == ERROR_HANDLE_EOF)
                break;
            throw Error(ErrorCode::Io, m_path + ": read of " + std::to_string(bytes) + " bytes at offset " +
                                           std::to_string(offset) + " failed (Windows error " +
                                           std::to_string(::GetLastError()) + ")");
        }
        int64_t n = got;
#else
        ssize_t n = ::pread(m_fd, out + done, size_t(bytes - done), off_t(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw Error(ErrorCode::Io, m_path + ": read of " + std::to_string(bytes) + " bytes at offset " +
                                           std::to_string(offset) + " failed: " + std::strerror(errno));
#endif
        if (n == 0)
            break;
        done += n;
        // A direct read that stops short inside the file ends on an unaligned length:
        // the remainder is read by the next iteration only if still aligned.
        if (m_direct && done % kDirectAlign != 0)
            break;
    }
    return done;
}

} // namespace waste::io
