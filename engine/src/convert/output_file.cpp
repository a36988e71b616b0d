#include "convert/output_file.hpp"

#include "convert/file_io.hpp"
#include "io/aligned_buffer.hpp"

#include <waste/waste.hpp>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

namespace waste::convert {

namespace {
std::string diskFullMessage(const std::string &path) {
    std::string dir = std::filesystem::path(path).parent_path().string();
    int64_t free = 0;
    try {
        free = freeBytes(dir.empty() ? "." : dir);
    } catch (...) {
    }
    return "disk full while writing " + path + " (" + std::to_string(free / (1 << 20)) + " MiB free)";
}
} // namespace

OutputFile::OutputFile(const std::string &path, int64_t keepBytes, OutputBudget *budget, bool direct)
    : m_path(path), m_budget(budget) {
#ifdef O_DIRECT
    if (direct) {
        m_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_DIRECT, 0644);
        m_direct = m_fd >= 0;
    }
#else
    (void)direct;
#endif
    if (m_fd < 0) m_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (m_fd < 0) throw Error(ErrorCode::Io, "cannot create " + path + ": " + std::strerror(errno));
    if (::ftruncate(m_fd, keepBytes) != 0 || ::lseek(m_fd, keepBytes, SEEK_SET) < 0) {
        const std::string msg = "cannot truncate " + path + ": " + std::strerror(errno);
        ::close(m_fd);
        m_fd = -1;
        throw Error(ErrorCode::Io, msg);
    }
    m_size = keepBytes;
}

OutputFile::~OutputFile() {
    if (m_fd >= 0) ::close(m_fd);
}

void OutputFile::append(const void *data, int64_t bytes) {
    const auto *p = static_cast<const char *>(data);
    int64_t allowed = bytes;
    bool simulateFull = false;
    if (m_budget && m_budget->failAfter >= 0 && m_budget->written + bytes > m_budget->failAfter) {
        allowed = std::max<int64_t>(0, m_budget->failAfter - m_budget->written);
        simulateFull = true;
    }
    constexpr uintptr_t kAlign = 4096;
    if (m_direct && (reinterpret_cast<uintptr_t>(p) % kAlign || allowed % int64_t(kAlign) || m_size % int64_t(kAlign)))
        stopDirect();
    int64_t left = allowed;
    while (left > 0) {
        const ssize_t n = ::write(m_fd, p, static_cast<size_t>(left));
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EINVAL && m_direct) { // the filesystem takes no direct writes after all
                stopDirect();
                continue;
            }
            if (errno == ENOSPC || errno == EDQUOT) throw Error(ErrorCode::Io, diskFullMessage(m_path));
            throw Error(ErrorCode::Io, "cannot write " + m_path + ": " + std::strerror(errno));
        }
        p += n;
        left -= n;
        m_size += n;
        if (m_budget) m_budget->written += n;
    }
    if (simulateFull) throw Error(ErrorCode::Io, "disk full while writing " + m_path + " (simulated: write limit reached)");
}

void OutputFile::stopDirect() {
#ifdef O_DIRECT
    const int flags = ::fcntl(m_fd, F_GETFL);
    if (flags < 0 || ::fcntl(m_fd, F_SETFL, flags & ~O_DIRECT) != 0)
        throw Error(ErrorCode::Io, "cannot switch " + m_path + " to buffered writes: " + std::strerror(errno));
#endif
    m_direct = false;
}

void OutputFile::sync() {
    if (m_fd >= 0 && ::fsync(m_fd) != 0) {
        if (errno == ENOSPC || errno == EDQUOT) throw Error(ErrorCode::Io, diskFullMessage(m_path));
        throw Error(ErrorCode::Io, "cannot flush " + m_path + ": " + std::strerror(errno));
    }
}

void OutputFile::close() {
    if (m_fd >= 0) {
        sync();
        ::close(m_fd);
        m_fd = -1;
    }
}

double directWriteBytesPerSecond(const std::string &dir, int64_t bytes) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path at = fs::absolute(dir.empty() ? fs::path(".") : fs::path(dir), ec);
    while (!at.empty() && !fs::is_directory(at, ec) && at != at.parent_path()) at = at.parent_path();
    constexpr int64_t kPiece = int64_t(8) << 20;
    bytes = std::max<int64_t>(kPiece, bytes / kPiece * kPiece);
    const std::string path = (at / ".waste-write-probe").string();
    try {
        if (freeBytes(at.string()) < 4 * bytes) return 0;
        io::AlignedBuffer buf(kPiece);
        std::memset(buf.data(), 0x5a, size_t(kPiece));
        const auto t0 = std::chrono::steady_clock::now();
        {
            OutputFile f(path, 0, nullptr, true);
            for (int64_t done = 0; done < bytes; done += kPiece) f.append(buf.data(), kPiece);
            f.close();
        }
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        fs::remove(path, ec);
        return s > 0 ? double(bytes) / s : 0;
    } catch (const std::exception &) {
        fs::remove(path, ec);
        return 0;
    }
}

} // namespace waste::convert
