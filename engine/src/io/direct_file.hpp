// A read-only file for expert records: positional reads, page cache bypassed where the
// platform and filesystem allow it (Linux O_DIRECT, macOS F_NOCACHE, Windows
// FILE_FLAG_NO_BUFFERING).
//
// "Probe, then trust": a filesystem may accept O_DIRECT at open and refuse it at the
// first transfer, or accept it and still serve from RAM (tmpfs keeps every file in the
// page cache). So on Linux open() flushes and drops the file's cached pages, takes a page
// mincore() shows uncached, reads it with O_DIRECT and checks that it is still uncached.
// A page that cannot be dropped (tmpfs) means reads come from RAM: false too. If the probe
// fails the file is reopened for ordinary buffered reads, directIo() says false and
// warning() says why — never silently, because a hit rate measured through the page cache
// is fiction.
#pragma once

#include <cstdint>
#include <string>

namespace waste::io {

class DirectFile {
public:
    DirectFile() = default;
    // wantDirect = false keeps the page cache on purpose (WASTE_DIRECT=0). Throws Error(Io).
    DirectFile(const std::string &path, bool wantDirect = true);
    ~DirectFile();
    DirectFile(DirectFile &&other) noexcept;
    DirectFile &operator=(DirectFile &&other) noexcept;
    DirectFile(const DirectFile &) = delete;
    DirectFile &operator=(const DirectFile &) = delete;

    bool isOpen() const;
    const std::string &path() const { return m_path; }
    int64_t size() const { return m_size; }
    bool directIo() const { return m_direct; }
    const std::string &warning() const { return m_warning; } // "<path>: <reason>", empty when direct
    const std::string &reason() const { return m_reason; }   // why direct I/O is off, without the path

    // Reads exactly `bytes` at `offset` into `dst` (all three 4 KiB-aligned when directIo()).
    // Returns the bytes read (less only at end of file). Throws Error(Io) naming the file.
    int64_t readAt(void *dst, int64_t bytes, int64_t offset) const;
#ifndef _WIN32
    // The descriptor, for reads submitted through io_uring (io/uring.hpp); -1 when closed.
    int fd() const { return m_fd; }
#endif

private:
    void close() noexcept;
    std::string m_path;
    int64_t m_size = 0;
    bool m_direct = false;
    std::string m_warning;
    std::string m_reason;
#ifdef _WIN32
    void *m_handle = nullptr;
#else
    int m_fd = -1;
#endif
};

} // namespace waste::io
