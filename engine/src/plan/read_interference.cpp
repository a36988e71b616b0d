#include "plan/read_interference.hpp"

#include "compute/thread_pool.hpp"
#include "io/aligned_buffer.hpp"
#include "io/direct_file.hpp"
#include "io/reader_pool.hpp"
#include "quant/vq_expert_workload.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <thread>

namespace waste::plan {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kRounds = 6; // windows beside the reads: thirteen windows in all, about 0.8 s
constexpr double kWindowSeconds = 0.06;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Random records read on a thread of its own, `depth` in flight, until destroyed.
class BackgroundReads {
public:
    BackgroundReads(const std::vector<std::unique_ptr<io::DirectFile>> &files, const std::vector<int64_t> &records,
                    int64_t recordBytes, int depth, uint64_t seed)
        : m_files(files), m_records(records), m_bytes(recordBytes), m_depth(std::max(1, depth)),
          m_block(io::alignUp(recordBytes) * m_depth), m_rng(seed)
    {
        std::fill(m_block.data(), m_block.data() + m_block.size(), uint8_t(0)); // as a cache's filled slots
        m_thread = std::thread([this] { run(); });
    }
    ~BackgroundReads()
    {
        m_stop = true;
        m_thread.join();
    }
    int64_t reads() const { return m_reads.load(); }
    int64_t bytes() const { return m_read.load(); }
    bool failed() const { return m_failed.load(); }

private:
    io::ReadJob job(uint64_t slot)
    {
        const size_t f = size_t(m_rng() % m_files.size());
        const int64_t offset = int64_t(m_rng() % uint64_t(m_records[f])) * m_bytes;
        return io::readJob(m_files[f].get(), offset, m_bytes, m_block.data() + int64_t(slot) * io::alignUp(m_bytes), slot);
    }
    void run()
    {
        io::ReaderPool pool(m_depth);
        for (int i = 0; i < m_depth; ++i)
            pool.submit(job(uint64_t(i)));
        while (auto d = pool.next()) { // drains what is in flight once stopped
            if (!d->ok) {
                m_failed = true;
                m_stop = true;
                continue;
            }
            m_read += d->bytes;
            ++m_reads;
            if (!m_stop)
                pool.submit(job(d->tag));
        }
    }

    const std::vector<std::unique_ptr<io::DirectFile>> &m_files;
    const std::vector<int64_t> &m_records;
    const int64_t m_bytes;
    const int m_depth;
    io::AlignedBuffer m_block;
    std::mt19937_64 m_rng;
    std::atomic<bool> m_stop{false}, m_failed{false};
    std::atomic<int64_t> m_reads{0}, m_read{0};
    std::thread m_thread;
};

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

} // namespace

ReadInterference measureReadInterference(const std::vector<std::string> &banks, int64_t recordBytes, int queueDepth,
                                         int threads)
{
    ReadInterference out;
    if (banks.empty() || recordBytes <= 0 || recordBytes % io::kDirectAlign != 0)
        return out;
    std::vector<std::unique_ptr<io::DirectFile>> files;
    std::vector<int64_t> records;
    for (const std::string &path : banks) {
        auto f = std::make_unique<io::DirectFile>(path, true);
        if (f->size() / recordBytes == 0)
            continue;
        records.push_back(f->size() / recordBytes);
        files.push_back(std::move(f));
    }
    if (files.empty())
        return out;

    // The decode's largest kernel at a mid-size width, on copies past the caches.
    compute::ThreadPool pool(threads);
    std::mt19937 rng(2024);
    const format::Codebooks books = quant::randomCodebooks(9, rng);
    std::vector<float> x(1024);
    for (float &v : x)
        v = float(int(rng() % 200) - 100) * 0.01f;
    quant::VqExpertWorkload expert(512, 1024, books, x.data(), pool, rng);
    for (int i = 0; i < 8; ++i)
        expert.runCold(); // wake the pool, touch the copies

    // The kernel's time a call in a window of its own.
    auto window = [&] {
        const auto t0 = Clock::now();
        int64_t calls = 0;
        do {
            expert.runCold();
            ++calls;
        } while (since(t0) < kWindowSeconds);
        return std::make_pair(since(t0), calls);
    };
    // Windows alone and beside the reads in turn, each beside-window between two alone ones:
    // its cost is counted against their mean, so a slow phase of a shared VM that spans it
    // slows a neighbour too. Set against the window before it only, three runs on Kimi-Linear-
    // 48B's 2.6 MB records measured 0.06-0.35 ms a read; against the fastest windows of each
    // kind, the mid-size container's 600 KB reads cost no more than their CPU time, where its
    // bench's token lost 35-50 us a read to them.
    auto [aloneSeconds, aloneCalls] = window();
    double before = aloneSeconds / double(aloneCalls);
    std::vector<double> perRead, gbps;
    for (int round = 0; round < kRounds; ++round) {
        int64_t n = 0, bytes = 0;
        std::pair<double, int64_t> loaded;
        {
            BackgroundReads reads(files, records, recordBytes, queueDepth, uint64_t(round) * 0x9E3779B97F4A7C15ull + 1);
            const auto wait0 = Clock::now();
            while (reads.reads() == 0 && !reads.failed() && since(wait0) < 1.0)
                std::this_thread::yield(); // the first records landing: the reads are under way
            if (reads.reads() == 0 || reads.failed())
                return out;
            const int64_t r0 = reads.reads(), b0 = reads.bytes();
            loaded = window();
            n = reads.reads() - r0, bytes = reads.bytes() - b0;
        } // the reads in flight land before the next alone window
        const auto [afterSeconds, afterCalls] = window();
        const double after = afterSeconds / double(afterCalls);
        if (n > 0) {
            const double lost = loaded.first - double(loaded.second) * (before + after) / 2;
            perRead.push_back(std::max(0.0, lost / double(n)));
            gbps.push_back(double(bytes) / loaded.first / 1e9);
        }
        before = after;
    }
    out.rounds = int(perRead.size());
    out.secondsPerRead = median(perRead);
    out.gbps = median(gbps);
    return out;
}

} // namespace waste::plan
