#include "io/disk_probe.hpp"

#include "io/aligned_buffer.hpp"
#include "io/direct_file.hpp"
#include "io/reader_pool.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <sys/resource.h>
#include <vector>

namespace waste::io {

namespace {

// User and system time of the whole process: the readers' system calls land on their own
// threads, and the kernel's work for a direct read (pinning pages, and in a virtual machine
// the exits to the host) is charged to the thread that issued it.
double processCpuSeconds()
{
    rusage u{};
    if (getrusage(RUSAGE_SELF, &u) != 0)
        return 0;
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// Keeps `threads` reads in flight over the given offsets, each into its own slot of one
// block, reused. The block is laid out as the engine's expert cache is (one allocation of
// 4 KiB-aligned slots, in huge pages from 2 MiB up) and touched before the clock starts, as
// the cache's slots are once filled: with a fresh buffer per reader, on 4 KiB pages, the
// development VM's reads of 600 KB records measured 0.7 GB/s and 40-60 us of CPU each, half
// of it the kernel zeroing and pinning pages the engine's steady reads never meet.
struct RecordRead {
    const DirectFile *file = nullptr;
    int64_t offset = 0;
};

DiskSpeed timeReads(const std::vector<RecordRead> &reads, int64_t bytes, int threads)
{
    threads = std::max(1, threads);
    const int64_t slot = alignUp(bytes);
    AlignedBuffer block(slot * threads);
    std::fill(block.data(), block.data() + block.size(), uint8_t(0));
    auto buffer = [&](uint64_t i) { return block.data() + int64_t(i) * slot; };
    ReaderPool pool(threads);
    DiskSpeed s;
    s.directIo = !reads.empty();
    for (const RecordRead &r : reads) {
        s.directIo = s.directIo && r.file->directIo();
        if (s.warning.empty())
            s.warning = r.file->warning();
    }
    const double cpu0 = processCpuSeconds();
    auto t0 = std::chrono::steady_clock::now();
    size_t issued = 0;
    for (; issued < reads.size() && int(issued) < threads; ++issued)
        pool.submit(readJob(reads[issued].file, reads[issued].offset, bytes, buffer(issued), issued));
    while (auto d = pool.next()) {
        if (!d->ok)
            throw Error(ErrorCode::Io, d->error);
        s.bytes += d->bytes;
        ++s.reads;
        if (issued < reads.size()) {
            // reuse the finished job's buffer
            pool.submit(readJob(reads[issued].file, reads[issued].offset, bytes, buffer(d->tag % uint64_t(threads)),
                                d->tag % uint64_t(threads)));
            ++issued;
        }
    }
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    s.cpuSeconds = std::max(0.0, processCpuSeconds() - cpu0);
    s.gbPerSecond = s.seconds > 0 ? double(s.bytes) / s.seconds / 1e9 : 0;
    return s;
}

} // namespace

DiskSpeed probeSequential(const std::string &path, int64_t maxBytes, int64_t chunkBytes, int threads)
{
    DirectFile file(path, true);
    chunkBytes = alignUp(std::max<int64_t>(chunkBytes, kDirectAlign));
    int64_t total = maxBytes > 0 ? std::min(maxBytes, file.size()) : file.size();
    std::vector<RecordRead> reads;
    for (int64_t off = 0; off + chunkBytes <= total; off += chunkBytes)
        reads.push_back({&file, off});
    if (reads.empty())
        throw Error(ErrorCode::Argument, path + ": too small to measure (" + std::to_string(file.size()) +
                                             " bytes; need at least " + std::to_string(chunkBytes) + ")");
    return timeReads(reads, chunkBytes, threads);
}

DiskSpeed probeRecords(const std::vector<std::string> &paths, int64_t recordBytes, int records, int threads,
                       uint64_t seed)
{
    if (recordBytes <= 0 || recordBytes % kDirectAlign != 0)
        throw Error(ErrorCode::Argument, "record size must be a positive multiple of 4096 (got " +
                                             std::to_string(recordBytes) + ")");
    if (paths.empty())
        throw Error(ErrorCode::Argument, "no file to read records from");
    std::vector<std::unique_ptr<DirectFile>> files;
    std::vector<int64_t> counts;
    for (const std::string &path : paths) {
        files.push_back(std::make_unique<DirectFile>(path, true));
        counts.push_back(files.back()->size() / recordBytes);
        if (counts.back() == 0)
            throw Error(ErrorCode::Argument, path + ": smaller than one record");
    }
    std::vector<RecordRead> reads;
    uint64_t x = 0x2545F4914F6CDD1Dull ^ (seed * 0x9E3779B97F4A7C15ull);
    if (x == 0)
        x = 1; // xorshift's one fixed point
    for (int i = 0; i < records; ++i) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        const uint64_t pick = x * 0x9E3779B97F4A7C15ull;
        const size_t f = size_t((pick >> 32) % files.size());
        reads.push_back({files[f].get(), int64_t((pick & 0xffffffffull) % uint64_t(counts[f])) * recordBytes});
    }
    return timeReads(reads, recordBytes, threads);
}

} // namespace waste::io
