#include "compute/thread_pool.hpp"
#include "compute/thread_name.hpp"

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WASTE_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define WASTE_CPU_RELAX() asm volatile("yield")
#else
#define WASTE_CPU_RELAX() ((void)0)
#endif

namespace waste::compute {

thread_local bool ThreadPool::t_insidePiece = false;

namespace {

// Decode issues hundreds of short loops per token back to back: a worker that has just
// finished one spins this long for the next before it sleeps on the condition variable
// (a futex wake costs tens of microseconds, about as much as a small loop's work).
constexpr auto kSpin = std::chrono::microseconds(20);

// Spins until ready() or kSpin has passed (the clock is read every 64 pauses: reading it
// costs more than a pause). Returns ready().
template <typename Ready> bool spinUntil(Ready &&ready)
{
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (;;) {
        for (int i = 0; i < 64; ++i) {
            if (ready())
                return true;
            WASTE_CPU_RELAX();
        }
        if (std::chrono::steady_clock::now() >= until)
            return ready();
    }
}

} // namespace

ThreadPool::ThreadPool(int threads)
{
    if (threads <= 0) {
        const unsigned hw = std::thread::hardware_concurrency();
        threads = hw ? static_cast<int>(hw) : 1;
    }
    m_threads = std::min(threads, 256);
    m_workers.reserve(static_cast<size_t>(m_threads - 1));
    for (int i = 1; i < m_threads; ++i)
        m_workers.emplace_back([this] {
            nameThisThread("waste-compute");
            workerLoop();
        });
}

ThreadPool::~ThreadPool()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
        m_generation.fetch_add(1, std::memory_order_release);
    }
    m_wake.notify_all();
    for (std::thread &t : m_workers)
        t.join();
}

int64_t ThreadPool::grainFor(int64_t n, int64_t workPerItem) const
{
    if (n <= 1)
        return 1;
    const double total = double(n) * double(std::max<int64_t>(workPerItem, 1));
    // About four pieces per thread, so a thread that another process slows down does not
    // hold the whole loop back; fewer when the pieces would get too small to pay off.
    const int64_t pieces = std::min<int64_t>(4 * int64_t(m_threads), int64_t(total / double(m_minWork)));
    if (pieces <= 1)
        return n; // one piece: run inline
    return (n + pieces - 1) / pieces;
}

void ThreadPool::doPieces()
{
    t_insidePiece = true;
    for (;;) {
        const int64_t p = m_next.fetch_add(1, std::memory_order_relaxed);
        if (p >= m_pieces)
            break;
        const int64_t b = p * m_grain, e = std::min(m_n, b + m_grain);
        try {
            m_fn(m_ctx, b, e);
        } catch (...) {
            std::lock_guard lock(m_mutex);
            if (!m_failure)
                m_failure = std::current_exception();
        }
        if (m_finished.fetch_add(1, std::memory_order_acq_rel) + 1 == m_pieces) {
            std::lock_guard lock(m_mutex); // pairs with the caller's wait
            m_done.notify_all();
        }
    }
    t_insidePiece = false;
}

void ThreadPool::run(int64_t n, int64_t grain, PieceFn fn, void *ctx)
{
    {
        std::unique_lock lock(m_mutex);
        // A worker that woke for the previous loop after it had ended may still be on its
        // way out of doPieces(); the next loop's counters must not be reset under it.
        // Workers join a loop only while holding m_mutex, so none can join meanwhile.
        while (m_active.load(std::memory_order_acquire) > 0) {
            lock.unlock();
            WASTE_CPU_RELAX();
            lock.lock();
        }
        m_fn = fn;
        m_ctx = ctx;
        m_n = n;
        m_grain = grain;
        m_pieces = (n + grain - 1) / grain;
        m_next.store(0, std::memory_order_relaxed);
        m_finished.store(0, std::memory_order_relaxed);
        m_failure = nullptr;
        m_generation.fetch_add(1, std::memory_order_release);
    }
    m_splitLoops.fetch_add(1, std::memory_order_relaxed);
    m_wake.notify_all();
    doPieces();
    // Wait for the pieces other threads claimed: spin briefly, then sleep.
    if (!spinUntil([&] { return m_finished.load(std::memory_order_acquire) >= m_pieces; })) {
        std::unique_lock lock(m_mutex);
        m_done.wait(lock, [&] { return m_finished.load(std::memory_order_acquire) >= m_pieces; });
    }
    std::exception_ptr failure;
    {
        std::lock_guard lock(m_mutex);
        failure = m_failure;
        m_failure = nullptr;
    }
    if (failure)
        std::rethrow_exception(failure);
}

void ThreadPool::workerLoop()
{
    uint64_t seen = 0;
    for (;;) {
        // Spin a little for the next loop, then sleep until one is posted.
        spinUntil([&] { return m_generation.load(std::memory_order_acquire) != seen; });
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] { return m_generation.load(std::memory_order_acquire) != seen; });
            seen = m_generation.load(std::memory_order_acquire);
            if (m_stop)
                return;
            m_active.fetch_add(1, std::memory_order_acq_rel); // joins this loop (see run())
        }
        doPieces();
        m_active.fetch_sub(1, std::memory_order_acq_rel);
    }
}

} // namespace waste::compute
