#include "convert/dir_lock.hpp"

#include "convert/file_io.hpp"

#include <waste/waste.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace waste::convert {

namespace {

constexpr const char *kLock = ".waste-convert.lock";

} // namespace

DirLock::DirLock(const std::string &out) {
    const std::string p = joinPath(out, kLock);
    m_fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (m_fd < 0) throw Error(ErrorCode::Io, "cannot create " + p);
    if (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(m_fd);
        throw Error(ErrorCode::Io, "another conversion is writing to " + out + "; wait for it or cancel it");
    }
    m_path = p;
}

DirLock::~DirLock() {
    if (m_fd >= 0) {
        ::unlink(m_path.c_str());
        ::close(m_fd);
    }
}

} // namespace waste::convert
