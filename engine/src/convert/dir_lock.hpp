// The output folder's lock (.waste-convert.lock): an exclusive flock held for the whole
// conversion, so two converters never write the same container; removed on release.
#pragma once

#include <string>

namespace waste::convert {

class DirLock {
public:
    explicit DirLock(const std::string &out);
    ~DirLock();
    DirLock(const DirLock &) = delete;
    DirLock &operator=(const DirLock &) = delete;

private:
    int m_fd = -1;
    std::string m_path;
};

} // namespace waste::convert
