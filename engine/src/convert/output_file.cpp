#include "convert/output_file.hpp"

#include "convert/file_io.hpp"

#include <waste/waste.hpp>

#include <cerrno>
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

OutputFile::OutputFile(const std::string &path, int64_t keepBytes, OutputBudget *budget) : m_path(path), m_budget(budget) {
    m_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
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
    int64_t left = allowed;
    while (left > 0) {
        const ssize_t n = ::write(m_fd, p, static_cast<size_t>(left));
        if (n < 0) {
            if (errno == EINTR) continue;
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

} // namespace waste::convert
