// Disk speed for the planner and the GUI's "Measure disk speed": reads a file with the
// same direct I/O the engine uses and reports GB/s, labelled honestly when the page
// cache could not be bypassed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace waste::io {

struct DiskSpeed {
    double gbPerSecond = 0; // 1e9 bytes per second
    int64_t bytes = 0;
    double seconds = 0;
    bool directIo = false;  // false: the figure is (partly) RAM, not the disk
    int64_t reads = 0;
    double cpuSeconds = 0;  // the process's CPU time (user and system) while the reads ran
    std::string warning;
};

// Sequential reads of `chunkBytes` (4 KiB-aligned) with `threads` in flight, up to
// `maxBytes` of `path` (0: the whole file).
DiskSpeed probeSequential(const std::string &path, int64_t maxBytes = 0, int64_t chunkBytes = 8 << 20,
                          int threads = 4);
// Random whole-record reads, the engine's pattern: `records` reads of `recordBytes`, each
// from one of `paths` at a record-aligned offset, both chosen by a generator of the given
// seed (the same seed, the same reads).
DiskSpeed probeRecords(const std::vector<std::string> &paths, int64_t recordBytes, int records, int threads = 8,
                       uint64_t seed = 0);
inline DiskSpeed probeRecords(const std::string &path, int64_t recordBytes, int records, int threads = 8,
                              uint64_t seed = 0)
{
    return probeRecords(std::vector<std::string>{path}, recordBytes, records, threads, seed);
}

} // namespace waste::io
