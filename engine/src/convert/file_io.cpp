#include "convert/file_io.hpp"

#include "io/aligned_buffer.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <vector>

namespace waste::convert {

namespace {

// Aligned buffers for uncached reads, lent out and taken back: the converter's workers are
// threads made per batch, so buffers of their own would be fresh pages (a page fault per
// 4 KiB) every batch.
class BounceBuffer {
public:
    explicit BounceBuffer(int64_t bytes) {
        {
            std::lock_guard lock(mutex());
            auto &free = pool();
            auto it = std::find_if(free.begin(), free.end(), [&](const io::AlignedBuffer &b) { return b.size() >= bytes; });
            if (it != free.end()) {
                m_buffer = std::move(*it);
                free.erase(it);
            }
        }
        if (m_buffer.size() < bytes) m_buffer = io::AlignedBuffer(bytes);
    }
    ~BounceBuffer() {
        std::lock_guard lock(mutex());
        if (pool().size() < kKept) pool().push_back(std::move(m_buffer));
    }
    BounceBuffer(const BounceBuffer &) = delete;
    BounceBuffer &operator=(const BounceBuffer &) = delete;
    uint8_t *data() const { return m_buffer.data(); }

private:
    static constexpr size_t kKept = 32;
    static std::mutex &mutex() {
        static std::mutex m;
        return m;
    }
    static std::vector<io::AlignedBuffer> &pool() {
        static std::vector<io::AlignedBuffer> p;
        return p;
    }
    io::AlignedBuffer m_buffer;
};

std::string sysError(const std::string &what, const std::string &path) {
    return what + " " + path + ": " + std::strerror(errno);
}
} // namespace

std::string joinPath(const std::string &dir, const std::string &name) {
    if (dir.empty()) return name;
    return dir.back() == '/' ? dir + name : dir + "/" + name;
}

bool fileExists(const std::string &path) {
    struct stat st{};
    return ::stat(path.c_str(), &st) == 0;
}

int64_t fileSize(const std::string &path) {
    struct stat st{};
    if (::stat(path.c_str(), &st) != 0) return -1;
    return static_cast<int64_t>(st.st_size);
}

std::string readWholeFile(const std::string &path) {
    InputFile f(path);
    std::string data(static_cast<size_t>(f.size()), '\0');
    f.readAt(0, data.data(), f.size());
    return data;
}

void fsyncDirectory(const std::string &dir) {
    const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return; // not fatal: some filesystems refuse directory fds
    ::fsync(fd);
    ::close(fd);
}

void renameDurable(const std::string &from, const std::string &to) {
    if (::rename(from.c_str(), to.c_str()) != 0) throw Error(ErrorCode::Io, sysError("cannot rename to", to));
    fsyncDirectory(std::filesystem::path(to).parent_path().string());
}

void writeFileAtomic(const std::string &path, const std::string &data) {
    const std::string tmp = path + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw Error(ErrorCode::Io, sysError("cannot create", tmp));
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            const std::string msg = sysError("cannot write", tmp);
            ::close(fd);
            ::unlink(tmp.c_str());
            throw Error(ErrorCode::Io, msg);
        }
        done += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0) {
        const std::string msg = sysError("cannot flush", tmp);
        ::close(fd);
        ::unlink(tmp.c_str());
        throw Error(ErrorCode::Io, msg);
    }
    ::close(fd);
    renameDurable(tmp, path);
}

int64_t freeBytes(const std::string &dir) {
    struct statvfs vfs{};
    if (::statvfs(dir.c_str(), &vfs) != 0) throw Error(ErrorCode::Io, sysError("cannot query free space of", dir));
    return static_cast<int64_t>(vfs.f_bavail) * static_cast<int64_t>(vfs.f_frsize);
}

void makeDirectories(const std::string &dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw Error(ErrorCode::Io, "cannot create directory " + dir + ": " + ec.message());
}

InputFile::InputFile(const std::string &path) : m_path(path) {
    m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (m_fd < 0) throw Error(ErrorCode::Io, sysError("cannot open", path));
    struct stat st{};
    if (::fstat(m_fd, &st) != 0) {
        ::close(m_fd);
        throw Error(ErrorCode::Io, sysError("cannot stat", path));
    }
    m_size = static_cast<int64_t>(st.st_size);
}

InputFile::~InputFile() {
    if (m_fd >= 0) ::close(m_fd);
}

void InputFile::readAt(int64_t offset, void *dst, int64_t bytes) const {
    if (offset < 0 || bytes < 0 || offset + bytes > m_size)
        throw Error(ErrorCode::Format, m_path + ": read of " + std::to_string(bytes) + " bytes at " + std::to_string(offset) +
                                           " is past the end of the file (" + std::to_string(m_size) + " bytes); the file is truncated");
    auto *p = static_cast<char *>(dst);
    while (bytes > 0) {
        const ssize_t n = ::pread(m_fd, p, static_cast<size_t>(bytes), offset);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw Error(ErrorCode::Io, sysError("cannot read", m_path));
        }
        if (n == 0) throw Error(ErrorCode::Io, m_path + ": unexpected end of file");
        p += n;
        offset += n;
        bytes -= n;
    }
}

int64_t InputFile::readPagesUncached(int64_t offset, void *dst, int64_t bytes) const {
    if (offset < 0 || bytes < 0 || offset % io::kDirectAlign || bytes % io::kDirectAlign)
        throw Error(ErrorCode::Argument, m_path + ": page read of " + std::to_string(bytes) + " bytes at " + std::to_string(offset) +
                                             " is not 4 KiB-aligned");
    std::call_once(m_directOnce, [this] { m_direct = std::make_unique<io::DirectFile>(m_path, true); });
    if (m_direct->directIo()) return m_direct->readAt(dst, bytes, offset);
    const int64_t n = std::max<int64_t>(0, std::min(bytes, m_size - offset));
    readAt(offset, dst, n);
    return n;
}

void InputFile::readAtUncached(int64_t offset, void *dst, int64_t bytes) const {
    if (offset < 0 || bytes < 0 || offset + bytes > m_size)
        throw Error(ErrorCode::Format, m_path + ": read of " + std::to_string(bytes) + " bytes at " + std::to_string(offset) +
                                           " is past the end of the file (" + std::to_string(m_size) + " bytes); the file is truncated");
    std::call_once(m_directOnce, [this] { m_direct = std::make_unique<io::DirectFile>(m_path, true); });
    if (!m_direct->directIo()) {
        readAt(offset, dst, bytes);
        return;
    }
    const int64_t start = offset / io::kDirectAlign * io::kDirectAlign;
    const int64_t span = io::alignUp(offset + bytes) - start;
    BounceBuffer bounce(span);
    // The last piece of a file may end short of a whole page: the read stops at the end.
    const int64_t got = m_direct->readAt(bounce.data(), span, start);
    if (got < offset + bytes - start)
        throw Error(ErrorCode::Io, m_path + ": unexpected end of file");
    std::memcpy(dst, bounce.data() + (offset - start), static_cast<size_t>(bytes));
}

} // namespace waste::convert
