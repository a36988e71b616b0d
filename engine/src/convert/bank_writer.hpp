// One experts-L{n}.bin written from records built in parallel: batches of experts are
// built by the worker threads while the batch before is appended by a writer thread, so
// reading and encoding overlap the write instead of waiting for it. Records reach the file
// in id order whatever the thread count, so the bank is the same bytes on every run.
#pragma once

#include "convert/output_file.hpp"
#include "io/aligned_buffer.hpp"

#include <cstdint>
#include <functional>

namespace waste::convert {

struct BankBatches {
    int experts = 0;
    int64_t recordBytes = 0;
    int threads = 1;
    int64_t writeBytes = int64_t(32) << 20; // the write size a batch aims at
};

// Experts per batch: at least one per thread, and enough to make each write about
// writeBytes.
int bankBatchSize(const BankBatches &b);

// The two page-aligned batch buffers (the writer appends one while the workers fill the
// other). Kept by the caller from bank to bank: fresh pages for every bank cost a page fault
// per 4 KiB, which took half the CPU time of a native repack.
struct BankBuffers {
    io::AlignedBuffer buffer[2];
};

// Builds every record with build(expert, record) (recordBytes each, on the worker threads)
// and appends them to `bank`, through `buffers` (grown when too small). After each batch is built, and while no write is running,
// batchDone(expertsBuilt) runs on the calling thread (progress, cancel: it may throw).
// Errors from build, batchDone or the write are rethrown once the writer has stopped.
void writeBankRecords(OutputFile &bank, const BankBatches &b, BankBuffers &buffers,
                      const std::function<void(int, uint8_t *)> &build, const std::function<void(int)> &batchDone);

// The same with a whole batch built by one call, build(firstExpert, count, records), on the
// calling thread: for builders that plan their reads across the batch (a native repack).
void writeBankBatches(OutputFile &bank, const BankBatches &b, BankBuffers &buffers,
                      const std::function<void(int, int, uint8_t *)> &build, const std::function<void(int)> &batchDone);

} // namespace waste::convert
