// Small POSIX file helpers for the converter: whole-file reads, positional reads,
// durable writes (temp + fsync + rename), free-space queries. All throw waste::Error
// with the path in the message.
#pragma once

#include "io/direct_file.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace waste::convert {

std::string readWholeFile(const std::string &path);
bool fileExists(const std::string &path);
int64_t fileSize(const std::string &path); // -1 if absent
// Writes `data` to path via path.tmp, fsync, rename, fsync of the directory.
void writeFileAtomic(const std::string &path, const std::string &data);
void fsyncDirectory(const std::string &dir);
void renameDurable(const std::string &from, const std::string &to);
int64_t freeBytes(const std::string &dir);
void makeDirectories(const std::string &dir);
std::string joinPath(const std::string &dir, const std::string &name);

// A read-only file descriptor with pread that loops over short reads.
class InputFile {
public:
    explicit InputFile(const std::string &path);
    ~InputFile();
    InputFile(const InputFile &) = delete;
    InputFile &operator=(const InputFile &) = delete;
    void readAt(int64_t offset, void *dst, int64_t bytes) const;
    // The same bytes, read past the page cache (io::DirectFile, opened at the first call) in
    // one aligned read through a per-thread buffer. For bytes read once, in large pieces: a
    // native repack reads each expert's tensors once, and buffered reads on a cold cache ran
    // at a fifth of the disk's direct rate here. Falls back to buffered reads where the
    // filesystem has no direct I/O. Thread-safe.
    void readAtUncached(int64_t offset, void *dst, int64_t bytes) const;
    // Whole pages past the page cache straight into `dst`, with no bounce copy: offset,
    // bytes and dst are 4 KiB-aligned. Returns the bytes read, fewer only where the file
    // ends. Buffered where the filesystem has no direct I/O. Thread-safe.
    int64_t readPagesUncached(int64_t offset, void *dst, int64_t bytes) const;
    int64_t size() const { return m_size; }
    const std::string &path() const { return m_path; }

private:
    std::string m_path;
    int m_fd = -1;
    int64_t m_size = 0;
    mutable std::once_flag m_directOnce;
    mutable std::unique_ptr<io::DirectFile> m_direct;
};

} // namespace waste::convert
