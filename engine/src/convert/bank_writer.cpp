#include "convert/bank_writer.hpp"

#include "convert/parallel.hpp"

#include <algorithm>
#include <exception>
#include <thread>

namespace waste::convert {

int bankBatchSize(const BankBatches &b)
{
    const int64_t forWrites = b.recordBytes > 0 ? b.writeBytes / b.recordBytes : 1;
    return int(std::clamp<int64_t>(std::max<int64_t>(forWrites, b.threads), 1, std::max(1, b.experts)));
}

void writeBankRecords(OutputFile &bank, const BankBatches &b, BankBuffers &buffers,
                      const std::function<void(int, uint8_t *)> &build, const std::function<void(int)> &batchDone)
{
    writeBankBatches(bank, b, buffers, [&](int e0, int n, uint8_t *buf) {
        parallelFor(size_t(n), b.threads, [&](size_t i) { build(e0 + int(i), buf + i * size_t(b.recordBytes)); });
    }, batchDone);
}

void writeBankBatches(OutputFile &bank, const BankBatches &b, BankBuffers &buffers,
                      const std::function<void(int, int, uint8_t *)> &build, const std::function<void(int)> &batchDone)
{
    const int batch = bankBatchSize(b);
    const int64_t batchBytes = int64_t(batch) * b.recordBytes;
    // Two buffers: the writer appends one while the workers fill the other.
    for (int k = 0; k < (b.experts > batch ? 2 : 1); ++k)
        if (buffers.buffer[k].size() < batchBytes)
            buffers.buffer[k] = io::AlignedBuffer(batchBytes);
    std::thread writer;
    std::exception_ptr writeError;
    auto joinWriter = [&] {
        if (writer.joinable())
            writer.join();
    };
    struct JoinOnExit { // a throw from build or batchDone must not leave the writer running
        std::thread &t;
        ~JoinOnExit()
        {
            if (t.joinable())
                t.join();
        }
    } joinOnExit{writer};
    for (int e0 = 0, k = 0; e0 < b.experts; e0 += batch, ++k) {
        const int n = std::min(batch, b.experts - e0);
        uint8_t *buf = buffers.buffer[k % 2].data();
        build(e0, n, buf);
        joinWriter();
        if (writeError)
            std::rethrow_exception(writeError);
        batchDone(e0 + n);
        writer = std::thread([&bank, &writeError, buf, bytes = int64_t(n) * b.recordBytes] {
            try {
                bank.append(buf, bytes);
            } catch (...) {
                writeError = std::current_exception();
            }
        });
    }
    joinWriter();
    if (writeError)
        std::rethrow_exception(writeError);
}

} // namespace waste::convert
