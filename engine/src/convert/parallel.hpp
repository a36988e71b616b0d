// A minimal parallel-for over a fixed number of work items. Work items are claimed
// from an atomic counter, so the split between threads varies from run to run; callers
// keep results per item (never per thread) so the output does not depend on it.
#pragma once

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace waste::convert {

inline int resolveThreads(int requested) {
    if (requested > 0) return requested;
    const unsigned hw = std::thread::hardware_concurrency();
    return hw ? static_cast<int>(hw) : 1;
}

// fn(item, worker): worker is in [0, min(threads, items)) and no two calls running at once
// share one, so callers can keep scratch buffers per worker from call to call.
inline void parallelForWorkers(size_t items, int threads, const std::function<void(size_t, int)> &fn) {
    const size_t workers = std::min<size_t>(static_cast<size_t>(std::max(1, threads)), items);
    if (workers <= 1) {
        for (size_t i = 0; i < items; ++i) fn(i, 0);
        return;
    }
    std::atomic<size_t> next{0};
    std::exception_ptr failure;
    std::mutex failureMutex;
    auto body = [&](int worker) {
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
    std::vector<std::thread> pool;
    pool.reserve(workers - 1);
    for (size_t t = 1; t < workers; ++t) pool.emplace_back(body, static_cast<int>(t));
    body(0);
    for (auto &t : pool) t.join();
    if (failure) std::rethrow_exception(failure);
}

inline void parallelFor(size_t items, int threads, const std::function<void(size_t)> &fn) {
    parallelForWorkers(items, threads, [&](size_t i, int) { fn(i); });
}

} // namespace waste::convert
