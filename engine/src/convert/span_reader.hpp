// Many small byte ranges of the source shards read as few large direct reads. A native
// repack needs six ranges per expert (payload and scales of gate, up and down), and one
// direct read per range left the disk idle between them (200 MB/s where the disk reads
// 1 GB/s). Ranges of one file that lie close together are read as one run of whole pages
// into a staging buffer, several runs at once, and each range is copied to its place.
#pragma once

#include "convert/file_io.hpp"
#include "io/aligned_buffer.hpp"

#include <cstdint>
#include <vector>

namespace waste::convert {

struct ByteRange {
    const InputFile *file = nullptr;
    int64_t offset = 0, bytes = 0;
    uint8_t *dst = nullptr;
};

struct SpanReaderLimits {
    int64_t maxRun = int64_t(4) << 20; // bytes per read: large enough for the disk, several fit a batch
    int64_t maxGap = int64_t(64) << 10; // unused bytes a run may read to join two ranges
    int threads = 8;                    // runs in flight
};

class SpanReader {
public:
    explicit SpanReader(SpanReaderLimits limits = {}) : m_limits(limits) {}
    // Copies every range's bytes to its dst. Throws Error(Io) naming the file when a range
    // lies past the end of its file.
    void read(std::vector<ByteRange> ranges);

private:
    SpanReaderLimits m_limits;
    io::AlignedBuffer m_staging; // kept between calls: fresh pages cost a fault per 4 KiB
};

} // namespace waste::convert
