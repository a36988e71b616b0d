// A minimal parallel-for over a fixed number of work items. Work items are claimed
// from an atomic counter, so the split between threads varies from run to run; callers
// keep results per item (never per thread) so the output does not depend on it.
// The workers are a pool kept for the whole process (convert/parallel.cpp): a VQ3R
// conversion runs thousands of short loops (each k-means pass is one), and starting
// threads for each left most of the work to the calling thread on a loaded machine.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
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
// share one, so callers can keep scratch buffers per worker from call to call. The first
// exception thrown stops the handing out of items and is rethrown here.
void parallelForWorkers(size_t items, int threads, const std::function<void(size_t, int)> &fn);

inline void parallelFor(size_t items, int threads, const std::function<void(size_t)> &fn) {
    parallelForWorkers(items, threads, [&](size_t i, int) { fn(i); });
}

} // namespace waste::convert
