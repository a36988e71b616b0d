// Append-only output file for the converter. Counts bytes against an optional limit
// (to test disk-full handling) and turns ENOSPC into a message that says what to do.
#pragma once

#include <cstdint>
#include <string>

namespace waste::convert {

struct OutputBudget {
    int64_t written = 0;
    int64_t failAfter = -1; // simulate a full disk after this many bytes (-1: never)
};

class OutputFile {
public:
    // Opens (creating) `path` for appending after truncating it to `keepBytes`. direct:
    // write past the page cache (Linux O_DIRECT) while every append is 4 KiB-aligned in
    // address, length and offset (expert banks are), buffered from the first one that is
    // not or where the filesystem refuses it. Buffered writes and the fsync at close ran at
    // a third of the disk's direct write rate here.
    OutputFile(const std::string &path, int64_t keepBytes, OutputBudget *budget, bool direct = false);
    ~OutputFile();
    OutputFile(const OutputFile &) = delete;
    OutputFile &operator=(const OutputFile &) = delete;
    void append(const void *data, int64_t bytes);
    void sync();
    void close();
    int64_t size() const { return m_size; }
    const std::string &path() const { return m_path; }

private:
    void stopDirect();
    std::string m_path;
    int m_fd = -1;
    bool m_direct = false;
    int64_t m_size = 0;
    OutputBudget *m_budget;
};

// The disk's direct sequential write rate in `dir` (or, when it does not exist yet, its
// nearest existing parent), through this writer as a conversion uses it: `bytes` in 8 MiB
// appends from huge-page buffers, then fsync; the probe file is removed. Bytes per second, 0
// when it cannot be measured there (read-only, or less than 4x `bytes` free). A repack
// writes every byte it reads, so on most disks this bounds it more than the read rate does.
double directWriteBytesPerSecond(const std::string &dir, int64_t bytes);

} // namespace waste::convert
