// Reader threads: one blocking positional read per job, as many jobs in flight as there
// are threads, completions handed back in the order they finish (not the order issued),
// so compute can start on whichever expert arrived first. Reported (demand) jobs start
// before unreported (speculative) ones still queued, and a speculative job waits for a
// thread while any demand read is in progress: a guess never delays a need. Why the
// second rule: a disk whose throughput hardly grows with queue depth (this project's
// test machines: 1.15 GB/s at one 299 KB read in flight, 1.35 GB/s at four) splits its
// bandwidth between the reads in flight, so a guess started beside a demand read made
// that read (which compute waits on) up to twice as slow. On a disk that scales with
// depth it costs a guess at most one demand read's time, and a layer's demand reads
// still all run at once.
//
// Two ways to read, the same rules: by default one thread drives an io_uring (io/uring.hpp)
// with up to `depth` reads in flight, submitting a layer's reads in one system call and
// reaping them as they land; where the kernel refuses io_uring (old kernels, containers'
// seccomp profiles) or on other systems, `depth` reader threads each make one blocking
// read at a time.
//
// The threads are not on the compute pool (they block in the kernel) and are stopped
// and joined before any file they read may close: destroy the pool before the files.
#pragma once

#include "io/direct_file.hpp"

#include <waste/waste.hpp>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace waste::io {

struct ReadDone;

struct ReadJob {
    const DirectFile *file = nullptr;
    int64_t offset = 0;
    int64_t bytes = 0;
    uint8_t *dst = nullptr;
    uint64_t tag = 0; // the caller's id for the job (e.g. the cache slot)
    // Runs on the reader thread right after the read (e.g. check the record, mark the
    // cache slot ready) and may turn the result into a failure.
    std::function<void(ReadDone &)> finish;
    bool report = true; // false: fire and forget (speculative reads); next() never sees it
};

inline ReadJob readJob(const DirectFile *file, int64_t offset, int64_t bytes, uint8_t *dst, uint64_t tag)
{
    ReadJob j;
    j.file = file;
    j.offset = offset;
    j.bytes = bytes;
    j.dst = dst;
    j.tag = tag;
    return j;
}

struct ReadDone {
    uint64_t tag = 0;
    int64_t bytes = 0;   // bytes read; < job bytes on a short read
    bool ok = false;
    std::string error;   // one line naming the file and offset when !ok
    // Io for failed reads; a record that arrived but failed its checks keeps its own code.
    ErrorCode code = ErrorCode::Io;
    double seconds = 0;  // time the read itself took
};

class Uring;

class ReaderPool {
public:
    // Auto: io_uring if the kernel allows it, else reader threads. Ring: io_uring or throw
    // Error(Io) saying why not. Threads: reader threads.
    enum class Backend { Auto, Ring, Threads };
    // depth <= 0: read synchronously in submit() (still completes through next()); else
    // at most `depth` reads in flight (on threads: one thread each).
    explicit ReaderPool(int depth, Backend backend = Backend::Auto);
    ~ReaderPool();
    ReaderPool(const ReaderPool &) = delete;
    ReaderPool &operator=(const ReaderPool &) = delete;

    int threads() const { return m_depth; } // reads in flight at most
    bool ring() const { return m_ring != nullptr; }
    // Why an Auto pool reads on threads instead of io_uring; empty when it uses io_uring or
    // was asked for threads.
    const std::string &ringRefused() const { return m_ringRefused; }
    void submit(const ReadJob &job);
    // Several jobs at once (a layer's misses): queued under one lock and one reader woken;
    // each reader that takes a job wakes up to two more while more wait, so the caller
    // (the compute thread) pays one wake-up, not one per read.
    void submit(std::vector<ReadJob> jobs);
    // Blocks for the next finished read; nullopt when nothing is queued or in flight.
    std::optional<ReadDone> next();
    // Returns a finished read without blocking, if there is one.
    std::optional<ReadDone> poll();
    int outstanding() const;
    // Reads waiting for a thread or being read now, reported or not: below threads(), a
    // reader is idle.
    int busy() const;
    // Reads waiting for a thread (or a place in the ring), not yet started.
    int queued() const;
    // Jobs still waiting for a thread (never those already reading): `decide` returns
    // Keep, Promote (move to the front of the queue) or Drop (removed and returned, not
    // run: the caller settles them). For speculative reads the router has ruled on.
    enum class Queued { Keep, Promote, Drop };
    std::vector<ReadJob> sweepQueued(const std::function<Queued(const ReadJob &)> &decide);

private:
    void run();
    void runRing();
    void enqueue(const ReadJob &job); // under m_mutex
    bool takeable() const;            // under m_mutex
    static ReadDone execute(const ReadJob &job);

    int m_depth = 0;
    std::unique_ptr<Uring> m_ring;
    std::string m_ringRefused;
    bool m_wakePending = false; // the ring thread has been woken and not yet run
    std::vector<std::thread> m_threads;
    std::deque<ReadJob> m_queue;
    std::deque<ReadDone> m_done;
    int m_inFlight = 0;
    int m_reading = 0;  // jobs a thread has taken and not finished
    int m_demandReading = 0; // of those, reported (demand) jobs
    int m_idle = 0;          // threads waiting for a job
    int m_waking = 0;        // of those, woken for a batch's jobs and not running yet
    bool m_stop = false;
    mutable std::mutex m_mutex;
    std::condition_variable m_work;
    std::condition_variable m_finished;
};

} // namespace waste::io
