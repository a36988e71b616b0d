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
    // Opens (creating) `path` for appending after truncating it to `keepBytes`.
    OutputFile(const std::string &path, int64_t keepBytes, OutputBudget *budget);
    ~OutputFile();
    OutputFile(const OutputFile &) = delete;
    OutputFile &operator=(const OutputFile &) = delete;
    void append(const void *data, int64_t bytes);
    void sync();
    void close();
    int64_t size() const { return m_size; }
    const std::string &path() const { return m_path; }

private:
    std::string m_path;
    int m_fd = -1;
    int64_t m_size = 0;
    OutputBudget *m_budget;
};

} // namespace waste::convert
