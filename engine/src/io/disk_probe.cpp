#include "io/disk_probe.hpp"

#include "io/aligned_buffer.hpp"
#include "io/direct_file.hpp"
#include "io/reader_pool.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <chrono>
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
DiskSpeed timeReads(const DirectFile &file, const std::vector<int64_t> &offsets, int64_t bytes, int threads)
{
    threads = std::max(1, threads);
    const int64_t slot = alignUp(bytes);
    AlignedBuffer block(slot * threads);
    std::fill(block.data(), block.data() + block.size(), uint8_t(0));
    auto buffer = [&](uint64_t i) { return block.data() + int64_t(i) * slot; };
    ReaderPool pool(threads);
    DiskSpeed s;
    s.directIo = file.directIo();
    s.warning = file.warning();
    const double cpu0 = processCpuSeconds();
    auto t0 = std::chrono::steady_clock::now();
    size_t issued = 0;
    for (; issued < offsets.size() && int(issued) < threads; ++issued)
        pool.submit(readJob(&file, offsets[issued], bytes, buffer(issued), issued));
    while (auto d = pool.next()) {
        if (!d->ok)
            throw Error(ErrorCode::Io, d->error);
        s.bytes += d->bytes;
        ++s.reads;
        if (issued < offsets.size()) {
            // reuse the finished job's buffer
            pool.submit(readJob(&file, offsets[issued], bytes, buffer(d->tag % uint64_t(threads)),
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
    std::vector<int64_t> offsets;
    for (int64_t off = 0; off + chunkBytes <= total; off += chunkBytes)
        offsets.push_back(off);
    if (offsets.empty())
        throw Error(ErrorCode::Argument, path + ": too small to measure (" + std::to_string(file.size()) +
                                             " bytes; need at least " + std::to_string(chunkBytes) + ")");
    return timeReads(file, offsets, chunkBytes, threads);
}

DiskSpeed probeRecords(const std::string &path, int64_t recordBytes, int records, int threads)
{
    DirectFile file(path, true);
    if (recordBytes <= 0 || recordBytes % kDirectAlign != 0)
        throw Error(ErrorCode::Argument, "record size must be a positive multiple of 4096 (got " +
                                             std::to_string(recordBytes) + ")");
    const int64_t n = file.size() / recordBytes;
    if (n == 0)
        throw Error(ErrorCode::Argument, path + ": smaller than one record");
    std::vector<int64_t> offsets;
    uint64_t x = 0x2545F4914F6CDD1Dull;
    for (int i = 0; i < records; ++i) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        offsets.push_back(int64_t((x * 0x9E3779B97F4A7C15ull) % uint64_t(n)) * recordBytes);
    }
    return timeReads(file, offsets, recordBytes, threads);
}

} // namespace waste::io
