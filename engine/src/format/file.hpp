// A read-only file with positional reads; errors become waste::Error naming the file.
#pragma once

#include <cstdint>
#include <string>

namespace waste::format {

class File {
public:
    File() = default;
    explicit File(const std::string &path); // throws Error(Io) when the file cannot be opened
    ~File();
    File(const File &) = delete;
    File &operator=(const File &) = delete;
    File(File &&other) noexcept;
    File &operator=(File &&other) noexcept;

    bool isOpen() const { return m_fd >= 0; }
    int fd() const { return m_fd; }
    int64_t size() const { return m_size; }
    const std::string &path() const { return m_path; }

    // Reads exactly `size` bytes at `offset`; a short read or an I/O error throws Error(Io).
    void readAt(void *dst, int64_t size, int64_t offset) const;

private:
    int m_fd = -1;
    int64_t m_size = 0;
    std::string m_path;
};

std::string readWholeFile(const std::string &path, int64_t maxBytes);
bool fileExists(const std::string &path);

} // namespace waste::format
