#include "io/direct_file.hpp"

#include "io/aligned_buffer.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

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
// Page-cache residency of the 4 KiB page at `offset`: 1 cached, 0 not, -1 cannot tell.
int pageCached(int fd, int64_t offset)
{
    const long pageSize = ::sysconf(_SC_PAGESIZE);
    const int64_t mapAt = offset / pageSize * pageSize;
    const size_t span = size_t(offset - mapAt + kDirectAlign);
    void *map = ::mmap(nullptr, span, PROT_READ, MAP_SHARED, fd, off_t(mapAt));
    if (map == MAP_FAILED)
        return -1;
    const size_t pages = (span + size_t(pageSize) - 1) / size_t(pageSize);
#ifdef __APPLE__
    std::vector<char> vec(pages);
#else
    std::vector<unsigned char> vec(pages);
#endif
    int cached = -1;
    if (::mincore(map, span, vec.data()) == 0) {
        cached = 0;
        for (auto v : vec)
            cached |= v & 1;
    }
    ::munmap(map, span);
    return cached;
}

// Drops the file's clean pages from the page cache, writing dirty ones first: a freshly
// written bank is all dirty pages. The whole file, not one page: the page cache holds
// files in large folios (up to 2 MiB), and a folio is only dropped when the range
// covers all of it, so a one-page request drops nothing.
void dropCached(int fd)
{
#ifdef __linux__
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
#else
    (void)fd; // macOS has no portable way: F_NOCACHE serves already-cached pages from RAM
#endif
}

// Does a direct read bypass the page cache? Take a page that is not cached, read it with
// O_DIRECT, and look again: a bypassing read leaves it uncached. Returns an empty string
// when it does, the reason when it does not. Several pages are tried, because another
// program reading the file through the cache at the same moment (an indexer, a second
// model, parallel tests) can cache a page between two steps; only a consistent answer
// counts.
std::string probeBypass(int fd, int64_t size)
{
    const int64_t pages = std::max<int64_t>(1, size / kDirectAlign);
    std::vector<int64_t> candidates;
    for (int64_t page : {pages - 1, pages / 2, int64_t(0)}) // the first page is the likeliest read by others
        if (std::find(candidates.begin(), candidates.end(), page) == candidates.end())
            candidates.push_back(page);
    AlignedBuffer buffer(kDirectAlign);
    int cachedAfter = 0;
    for (int64_t page : candidates) {
        const int64_t offset = page * kDirectAlign;
        int before = pageCached(fd, offset);
        if (before == 1) { // someone read it since: drop again once
            dropCached(fd);
            before = pageCached(fd, offset);
        }
        if (before == 1)
            continue; // the cache keeps this page whatever we ask
        ssize_t n;
        do
            n = ::pread(fd, buffer.data(), size_t(kDirectAlign), off_t(offset));
        while (n < 0 && errno == EINTR);
        if (n < 0)
            return std::string("direct reads fail (") + std::strerror(errno) + ")";
        if (before < 0)
            return {}; // residency cannot be observed here: the direct read worked, trust it
        if (pageCached(fd, offset) == 0)
            return {};
        ++cachedAfter;
    }
    if (cachedAfter > 0)
        return "direct reads land in the page cache (the filesystem caches them anyway)";
    return "the page cache keeps this file's pages (tmpfs, pages cached before the bypass, or pages another program "
           "locks), so reads come from RAM";
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
            m_reason = "the volume refuses unbuffered reads; reading through the system cache";
        }
    }
#else
    if (wantDirect) {
#ifdef __linux__
        m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
        if (m_fd < 0 && errno != EINVAL)
            ioFail(path, "cannot open", errno);
        if (m_fd < 0)
            m_reason = "the filesystem refuses O_DIRECT; reading through the page cache";
#else
        m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (m_fd < 0)
            ioFail(path, "cannot open", errno);
#ifdef __APPLE__
        if (::fcntl(m_fd, F_NOCACHE, 1) != 0)
            m_reason = "F_NOCACHE refused; reading through the page cache";
#else
        m_reason = "no page-cache bypass on this platform";
#endif
#endif
        m_direct = m_fd >= 0 && m_reason.empty();
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
        dropCached(m_fd);
        const std::string why = probeBypass(m_fd, m_size);
        if (!why.empty()) {
            ::close(m_fd);
            m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
            if (m_fd < 0)
                ioFail(path, "cannot reopen", errno);
            m_direct = false;
            m_reason = why + "; reading through the page cache, so hit rates and read speeds include RAM";
        }
    }
#ifdef __linux__
    if (!m_direct)
        ::posix_fadvise(m_fd, 0, 0, POSIX_FADV_RANDOM);
#endif
#endif
    if (!m_reason.empty())
        m_warning = path + ": " + m_reason;
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
        m_reason = std::move(o.m_reason);
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
