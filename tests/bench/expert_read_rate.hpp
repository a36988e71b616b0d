// The engine's expert reader at full speed, for the benches that compare a decode or a raw
// reader against it: io::ReaderPool (io_uring or reader threads, as asked) keeping `depth`
// direct reads of whole records in flight, in the order given, each landing in a free buffer.
//
// Buffers matter on a virtual disk: this VM serves direct reads into huge pages several times
// faster than into 4 KiB pages (one descriptor per page). CacheSlots lays the buffers out as
// the expert cache lays out its slots (one io::AlignedBuffer of depth x stride: 2 MiB-aligned
// and advised into huge pages from 2 MiB up, the allocation ExpertCache makes); Separate gives
// each read its own buffer (4 KiB pages below 2 MiB, as fio and dd read).
#pragma once

#include "io/aligned_buffer.hpp"
#include "io/direct_file.hpp"
#include "io/reader_pool.hpp"

#include <waste/waste.hpp>

#include <chrono>
#include <cstdint>
#include <vector>

struct RecordRead {
    const waste::io::DirectFile *file = nullptr;
    int64_t offset = 0;
    int64_t bytes = 0; // 0: the call's recordBytes (banks of one container may differ)
};

enum class ReadBuffers { CacheSlots, Separate };

struct ReadRate {
    int64_t bytes = 0;
    int reads = 0;
    double seconds = 0;
    bool ring = false; // the pool read through io_uring
    double gbPerSecond() const { return seconds > 0 ? double(bytes) / seconds / 1e9 : 0; }
};

// Reads `reads` in order, at most `depth` in flight, until all have landed or, with
// maxSeconds > 0, until that long has passed (no read starts after it; those in flight
// finish and count). recordBytes is the largest read (the slot stride is it rounded up to
// 4 KiB, as in the cache). Throws waste::Error with the reader's message on a failed read.
inline ReadRate engineReadRate(const std::vector<RecordRead> &reads, int64_t recordBytes, int depth,
                               ReadBuffers buffers, double maxSeconds = 0,
                               waste::io::ReaderPool::Backend backend = waste::io::ReaderPool::Backend::Auto)
{
    using namespace waste::io;
    if (depth < 1 || recordBytes <= 0)
        throw waste::Error(waste::ErrorCode::Argument, "engineReadRate: depth and record bytes must be positive");
    const int64_t stride = alignUp(recordBytes);
    std::vector<AlignedBuffer> separate;
    AlignedBuffer slots;
    std::vector<uint8_t *> buf;
    if (buffers == ReadBuffers::CacheSlots) {
        slots = AlignedBuffer(stride * depth);
        for (int i = 0; i < depth; ++i)
            buf.push_back(slots.data() + int64_t(i) * stride);
    } else {
        for (int i = 0; i < depth; ++i)
            buf.push_back(separate.emplace_back(stride).data());
    }
    ReaderPool pool(depth, backend);
    ReadRate r;
    r.ring = pool.ring();
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
    size_t issued = 0;
    auto issue = [&](uint64_t b) {
        const RecordRead &x = reads[issued++];
        const int64_t bytes = x.bytes > 0 ? x.bytes : recordBytes;
        if (bytes > recordBytes)
            throw waste::Error(waste::ErrorCode::Argument, "engineReadRate: a read larger than the slot");
        pool.submit(readJob(x.file, x.offset, bytes, buf[b], b));
    };
    for (int b = 0; b < depth && issued < reads.size(); ++b)
        issue(uint64_t(b));
    while (auto d = pool.next()) {
        if (!d->ok)
            throw waste::Error(d->code, d->error);
        r.bytes += d->bytes;
        ++r.reads;
        if (issued < reads.size() && (maxSeconds <= 0 || elapsed() < maxSeconds))
            issue(d->tag);
    }
    r.seconds = elapsed();
    return r;
}
