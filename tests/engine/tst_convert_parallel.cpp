// The converter's parallel-for on its worker pool (convert/parallel.cpp): every item runs
// once; a worker index is never used by two items at the same time; loops started from
// inside a loop and from two threads at once finish (they must not wait on the busy pool);
// an exception reaches the caller and the pool still works after it.
#include "convert/parallel.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

using waste::convert::parallelFor;
using waste::convert::parallelForWorkers;

TEST(ConvertParallel, EachItemOnceAndWorkersNotShared) {
    for (int threads : {1, 2, 3, 8}) {
        for (int round = 0; round < 50; ++round) { // many loops: the pool is reused
            const size_t items = 1 + size_t(round) * 7;
            std::vector<std::atomic<int>> runs(items);
            std::vector<std::atomic<int>> busy(static_cast<size_t>(threads));
            std::atomic<bool> shared{false}, outOfRange{false};
            parallelForWorkers(items, threads, [&](size_t i, int worker) {
                if (worker < 0 || worker >= threads) {
                    outOfRange = true;
                    return;
                }
                if (busy[size_t(worker)].fetch_add(1) != 0) shared = true;
                runs[i].fetch_add(1);
                busy[size_t(worker)].fetch_sub(1);
            });
            ASSERT_FALSE(outOfRange) << threads << " threads";
            ASSERT_FALSE(shared) << threads << " threads";
            for (size_t i = 0; i < items; ++i) ASSERT_EQ(runs[i].load(), 1) << "item " << i << ", " << threads << " threads";
        }
    }
}

TEST(ConvertParallel, NestedAndConcurrentLoopsFinish) {
    std::atomic<int> inner{0};
    parallelFor(4, 2, [&](size_t) { parallelFor(8, 2, [&](size_t) { inner.fetch_add(1); }); });
    EXPECT_EQ(inner.load(), 32);
    std::atomic<int> total{0};
    auto loops = [&] {
        for (int k = 0; k < 200; ++k) parallelFor(16, 2, [&](size_t) { total.fetch_add(1); });
    };
    std::thread a(loops), b(loops);
    a.join();
    b.join();
    EXPECT_EQ(total.load(), 2 * 200 * 16);
}

TEST(ConvertParallel, ExceptionReachesTheCallerAndThePoolStillWorks) {
    EXPECT_THROW(parallelFor(100, 2, [](size_t i) {
                     if (i == 37) throw std::runtime_error("item 37");
                 }),
                 std::runtime_error);
    std::atomic<int> n{0};
    parallelFor(100, 2, [&](size_t) { n.fetch_add(1); });
    EXPECT_EQ(n.load(), 100);
}
