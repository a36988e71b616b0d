// The parallel-for's worker pool: threads started once and woken for each loop. One loop
// uses the pool at a time; a loop started while it is busy (another thread converting) or
// from inside a loop's body starts threads of its own as before, so nothing waits on it.
#include "convert/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <vector>

namespace waste::convert {
namespace {

// Set on pool threads and on the thread running a loop through the pool: a loop started
// there must not wait for the pool it is part of.
thread_local bool t_inPoolLoop = false;

class WorkerPool {
public:
    ~WorkerPool() {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_wake.notify_all();
        for (auto &t : m_threads) t.join();
    }

    // Runs body(0) here and body(1) .. body(workers - 1) on pool threads; false (nothing
    // run) when the pool is busy.
    bool run(int workers, const std::function<void(int)> &body) {
        std::unique_lock job(m_jobMutex, std::try_to_lock);
        if (!job.owns_lock()) return false;
        {
            std::lock_guard lock(m_mutex);
            while (static_cast<int>(m_threads.size()) < workers - 1) {
                const int index = static_cast<int>(m_threads.size()) + 1;
                m_threads.emplace_back([this, index] { loop(index); });
            }
            m_body = &body;
            m_workers = workers;
            m_pending = workers - 1;
            ++m_generation;
        }
        m_wake.notify_all();
        t_inPoolLoop = true;
        body(0); // catches what fn throws (parallelForWorkers)
        t_inPoolLoop = false;
        std::unique_lock lock(m_mutex);
        m_done.wait(lock, [&] { return m_pending == 0; });
        m_body = nullptr;
        return true;
    }

private:
    void loop(int index) {
        t_inPoolLoop = true;
        uint64_t seen = 0;
        std::unique_lock lock(m_mutex);
        for (;;) {
            m_wake.wait(lock, [&] { return m_stop || m_generation != seen; });
            if (m_stop) return;
            seen = m_generation;
            if (index >= m_workers) continue; // this loop needs fewer workers
            const std::function<void(int)> *body = m_body;
            lock.unlock();
            (*body)(index);
            lock.lock();
            if (--m_pending == 0) m_done.notify_one();
        }
    }

    std::mutex m_jobMutex; // held by the loop using the pool
    std::mutex m_mutex;
    std::condition_variable m_wake, m_done;
    std::vector<std::thread> m_threads; // pool thread i runs body(i + 1)
    const std::function<void(int)> *m_body = nullptr;
    int m_workers = 0, m_pending = 0;
    uint64_t m_generation = 0;
    bool m_stop = false;
};

WorkerPool &pool() {
    static WorkerPool p;
    return p;
}

} // namespace

void parallelForWorkers(size_t items, int threads, const std::function<void(size_t, int)> &fn) {
    const size_t workers = std::min<size_t>(static_cast<size_t>(std::max(1, threads)), items);
    if (workers <= 1) {
        for (size_t i = 0; i < items; ++i) fn(i, 0);
        return;
    }
    std::atomic<size_t> next{0};
    std::exception_ptr failure;
    std::mutex failureMutex;
    const std::function<void(int)> body = [&](int worker) {
        for (;;) {
            const size_t i = next.fetch_add(1);
            if (i >= items) return;
            try {
                fn(i, worker);
            } catch (...) {
                std::lock_guard lock(failureMutex);
                if (!failure) failure = std::current_exception();
                next.store(items); // stop handing out work
                return;
            }
        }
    };
    if (t_inPoolLoop || !pool().run(static_cast<int>(workers), body)) {
        std::vector<std::thread> own;
        own.reserve(workers - 1);
        for (size_t t = 1; t < workers; ++t) own.emplace_back(body, static_cast<int>(t));
        body(0);
        for (auto &t : own) t.join();
    }
    if (failure) std::rethrow_exception(failure);
}

} // namespace waste::convert
