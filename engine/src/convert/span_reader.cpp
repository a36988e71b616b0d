#include "convert/span_reader.hpp"

#include "convert/parallel.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <cstring>

namespace waste::convert {

namespace {

// One direct read: pages [begin, end) of a file, landing at `staging` in the buffer, and
// the ranges [first, last) of the sorted list that it serves.
struct Run {
    const InputFile *file;
    int64_t begin, end, staging;
    size_t first, last;
};

} // namespace

void SpanReader::read(std::vector<ByteRange> ranges) {
    std::sort(ranges.begin(), ranges.end(), [](const ByteRange &a, const ByteRange &b) {
        return a.file != b.file ? a.file < b.file : a.offset < b.offset;
    });
    std::vector<Run> runs;
    int64_t staging = 0;
    for (size_t i = 0; i < ranges.size(); ++i) {
        const ByteRange &r = ranges[i];
        if (r.offset < 0 || r.bytes < 0 || r.offset + r.bytes > r.file->size())
            throw Error(ErrorCode::Format, r.file->path() + ": " + std::to_string(r.bytes) + " bytes at " + std::to_string(r.offset) +
                                               " lie past the end of the file (" + std::to_string(r.file->size()) +
                                               " bytes); the shard is truncated, download it again");
        const int64_t begin = r.offset / io::kDirectAlign * io::kDirectAlign, end = io::alignUp(r.offset + r.bytes);
        if (!runs.empty()) {
            Run &last = runs.back();
            if (last.file == r.file && begin <= last.end + m_limits.maxGap && std::max(end, last.end) - last.begin <= m_limits.maxRun) {
                const int64_t grown = std::max(end, last.end);
                staging += grown - last.end;
                last.end = grown;
                last.last = i + 1;
                continue;
            }
        }
        runs.push_back({r.file, begin, end, staging, i, i + 1});
        staging += end - begin;
    }
    if (m_staging.size() < staging) m_staging = io::AlignedBuffer(staging);
    uint8_t *base = m_staging.data();
    parallelFor(runs.size(), m_limits.threads, [&](size_t k) {
        const Run &run = runs[k];
        const int64_t got = run.file->readPagesUncached(run.begin, base + run.staging, run.end - run.begin);
        for (size_t i = run.first; i < run.last; ++i) {
            const ByteRange &r = ranges[i];
            if (r.offset + r.bytes > run.begin + got)
                throw Error(ErrorCode::Io, r.file->path() + ": unexpected end of file at " + std::to_string(run.begin + got));
            std::memcpy(r.dst, base + run.staging + (r.offset - run.begin), size_t(r.bytes));
        }
    });
}

} // namespace waste::convert
