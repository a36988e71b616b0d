// A minimal io_uring (Linux 5.6 or later) for the reader pool: positional reads and a
// wake-up, queued and reaped by one thread (ReaderPool's ring thread, which alone touches
// the rings). Raw syscalls through <linux/io_uring.h>, so no liburing dependency.
//
// Why: one blocking pread per reader thread costs a thread wake-up per read on both ends;
// a 4-stream step reads ~115 records, and on a 2-core machine those wake-ups and switches
// took 16-23 % of the CPU the step needed. One thread submitting a layer's reads in one
// system call and reaping them as they land does the same work with a fraction of that.
//
// open() returns null with the reason when the kernel is too old or refuses io_uring
// (containers' seccomp profiles often do; io_uring_disabled sysctl); the reader pool then
// falls back to reader threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace waste::io {

class Uring {
public:
    // Room for `entries` requests in flight (rounded up to a power of two by the kernel).
    static std::unique_ptr<Uring> open(unsigned entries, std::string &whyNot);
    ~Uring();
    Uring(const Uring &) = delete;
    Uring &operator=(const Uring &) = delete;

    // Queues a read of `bytes` at `offset` into `dst`; false when the submission ring is full.
    bool queueRead(int fd, void *dst, uint32_t bytes, int64_t offset, uint64_t userData);
    // Queues a one-shot wait for wake(): its completion carries `userData`; queue it again
    // after each (clearWake() first).
    bool queueWakeWatch(uint64_t userData);
    // Submits what was queued and, with wait, blocks until at least one completion is there.
    // 0, or -errno (-EINTR and -EAGAIN mean: try again).
    int submit(bool wait);
    // Hands every completion there is to fn(userData, result): result is bytes or -errno.
    void reap(const std::function<void(uint64_t, int)> &fn);
    // From any thread: makes the watch queued by queueWakeWatch() complete.
    void wake();
    void clearWake();

private:
    Uring() = default;
    struct Rings;
    std::unique_ptr<Rings> m_r;
};

} // namespace waste::io
