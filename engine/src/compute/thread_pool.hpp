// The engine's compute pool: a few persistent threads that split one loop at a time.
//
// forRange(n, grain, fn) cuts [0, n) into contiguous pieces of `grain` (the last may be
// shorter) and runs fn(begin, end) for each, on the workers and the calling thread.
// Pieces are claimed from a counter, so which thread runs a piece varies; callers must
// make each index's result depend on the index only (split by output rows, never a
// reduction), which is what keeps logits bit-identical for any thread count.
//
// Small loops run inline (n <= grain or a one-thread pool), and so does a loop started
// from inside a piece: nesting never deadlocks, it just does not fan out twice.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace waste::compute {

class ThreadPool {
public:
    // threads: all threads that compute, the caller included (0: one per hardware thread).
    explicit ThreadPool(int threads = 0);
    ~ThreadPool();
    ThreadPool(const ThreadPool &) = delete;
    ThreadPool &operator=(const ThreadPool &) = delete;

    int threads() const { return m_threads; }

    template <typename F> void forRange(int64_t n, int64_t grain, F &&fn)
    {
        if (grain < 1)
            grain = 1;
        if (n <= 0)
            return;
        if (m_threads <= 1 || n <= grain || t_insidePiece) {
            fn(int64_t(0), n);
            return;
        }
        using Fn = std::remove_reference_t<F>;
        run(n, grain, [](void *ctx, int64_t b, int64_t e) { (*static_cast<Fn *>(ctx))(b, e); },
            const_cast<void *>(static_cast<const void *>(&fn)));
    }

    // The grain for a loop of n items of `workPerItem` units each. A unit is about a
    // nanosecond of one core's work (callers estimate: a LUT gather ~0.5, a SIMD
    // multiply-add ~0.1); a loop gets at most four pieces per thread and no piece under
    // minWork units, so short loops (a tiny model's) stay on the calling thread, where
    // waking a worker would cost more than the work. Tests set minWork to 1 to make every
    // loop fan out.
    int64_t grainFor(int64_t n, int64_t workPerItem) const;
    void setMinWork(int64_t units) { m_minWork = units < 1 ? 1 : units; }

    // Loops that were split over more than one piece (tests check that splitting happened).
    int64_t splitLoops() const { return m_splitLoops.load(std::memory_order_relaxed); }

private:
    using PieceFn = void (*)(void *ctx, int64_t begin, int64_t end);
    void run(int64_t n, int64_t grain, PieceFn fn, void *ctx);
    void workerLoop();
    void doPieces();

    int m_threads = 1;
    // About 8 microseconds. Measured on the mid-size model (hidden 512) and the tiny ones
    // (demo, tiny K3), 2026-12-04: 15 us kept most of the mid-size model's loops on one thread
    // (one stream 126 tok/s at 8 threads on a 16-core machine, 210 at 4 us, 180 at 8 us; on
    // this 2-core VM 120 -> 139-145 tok/s at 4-8 us); at 4 us and below, the tiny models' loops
    // split too, and their decode fell by 8-10 % (at 2 us by a third); 8 us left them as
    // they were.
    int64_t m_minWork = 8000;
    std::vector<std::thread> m_workers;

    // The current loop (written by the caller under m_mutex before bumping m_generation).
    PieceFn m_fn = nullptr;
    void *m_ctx = nullptr;
    int64_t m_n = 0, m_grain = 1, m_pieces = 0;
    std::atomic<int64_t> m_next{0};     // next piece to claim
    std::atomic<int64_t> m_finished{0}; // pieces done
    std::atomic<int> m_active{0};       // workers inside doPieces()
    std::exception_ptr m_failure;       // first exception of the loop (under m_mutex)

    std::mutex m_mutex;
    std::condition_variable m_wake, m_done;
    std::atomic<uint64_t> m_generation{0};
    bool m_stop = false;
    std::atomic<int64_t> m_splitLoops{0};

    static thread_local bool t_insidePiece;
};

} // namespace waste::compute
