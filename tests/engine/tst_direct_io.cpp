// Direct reads: data comes back intact, the page-cache bypass is reported honestly, the
// reader pool returns every job once, in arrival order, and failures name the file, on
// reader threads and through io_uring alike; where the kernel refuses io_uring (here: a
// seccomp filter, as containers install) the pool reads on threads instead.
#include "io/aligned_buffer.hpp"
#include "io/direct_file.hpp"
#include "io/disk_probe.hpp"
#include "io/reader_pool.hpp"
#include "plan/read_interference.hpp"

#include <waste/waste.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <fstream>
#include <set>

#ifdef __linux__
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <thread>
#include <sys/vfs.h>
#include <unistd.h>
#endif

using namespace waste::io;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kRec = 3 * 4096;

// A bank of `n` records whose bytes encode their record index and offset.
std::string writeBank(const fs::path &dir, const std::string &name, int n)
{
    fs::create_directories(dir);
    fs::path p = dir / name;
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    for (int r = 0; r < n; ++r)
        for (int64_t i = 0; i < kRec; ++i)
            f.put(char((r * 31 + i / 7) & 0xff));
    return p.string();
}

bool recordIntact(const uint8_t *p, int r)
{
    for (int64_t i = 0; i < kRec; ++i)
        if (p[i] != uint8_t((r * 31 + i / 7) & 0xff))
            return false;
    return true;
}

fs::path outDir() { return fs::path(WASTE_TEST_OUTPUT_DIR) / "direct_io"; }

// Whether this kernel lets the pool use io_uring, and why not.
std::string ringRefusal()
{
    ReaderPool probe(1);
    return probe.ring() ? std::string() : probe.ringRefused();
}
bool ringAllowed() { return ringRefusal().empty(); }

// Each depth on reader threads, then (depth > 0, where the kernel allows it) through io_uring.
std::vector<std::pair<int, ReaderPool::Backend>> depthsAndBackends(std::initializer_list<int> depths)
{
    std::vector<std::pair<int, ReaderPool::Backend>> out;
    for (int d : depths)
        out.emplace_back(d, ReaderPool::Backend::Threads);
    if (ringAllowed())
        for (int d : depths)
            if (d > 0)
                out.emplace_back(d, ReaderPool::Backend::Ring);
    return out;
}

#ifdef __linux__
// The filesystems on which O_DIRECT is known to bypass the page cache.
bool directCapableFs(const fs::path &p)
{
    struct statfs st {};
    if (::statfs(p.c_str(), &st) != 0)
        return false;
    const auto type = static_cast<unsigned long>(st.f_type);
    return type == 0xEF53ul /* ext2/3/4 */ || type == 0x58465342ul /* xfs */ || type == 0x9123683Eul /* btrfs */;
}

// Independent of the engine's probe: how many of the file's pages are in the page cache.
int64_t cachedPages(const std::string &path)
{
    const int fd = ::open(path.c_str(), O_RDONLY);
    const int64_t size = int64_t(fs::file_size(path));
    void *map = ::mmap(nullptr, size_t(size), PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED)
        return -1;
    const long page = ::sysconf(_SC_PAGESIZE);
    std::vector<unsigned char> vec(size_t((size + page - 1) / page));
    int64_t n = -1;
    if (::mincore(map, size_t(size), vec.data()) == 0) {
        n = 0;
        for (unsigned char v : vec)
            n += v & 1;
    }
    ::munmap(map, size_t(size));
    return n;
}

void readBuffered(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    std::vector<char> all((std::istreambuf_iterator<char>(f)), {});
}
#endif

} // namespace

TEST(DirectFile, ReadsRecordsExactly)
{
    auto path = writeBank(outDir(), "bank.bin", 5);
    DirectFile f(path);
    EXPECT_EQ(f.size(), 5 * kRec);
    AlignedBuffer buf(kRec);
    for (int r : {4, 0, 2}) {
        ASSERT_EQ(f.readAt(buf.data(), kRec, r * kRec), kRec);
        EXPECT_TRUE(recordIntact(buf.data(), r)) << r;
    }
    EXPECT_EQ(f.readAt(buf.data(), kRec, 5 * kRec), 0) << "at end of file";
}

TEST(DirectFile, BypassIsReportedHonestly)
{
    // The test output lives on the build filesystem; on ext4/xfs/btrfs O_DIRECT works and
    // the probe must say so. Whatever it says, it must explain a false.
    auto path = writeBank(outDir(), "bank2.bin", 2);
    DirectFile f(path);
    if (!f.directIo())
        EXPECT_FALSE(f.warning().empty());
    else
        EXPECT_TRUE(f.warning().empty());
#ifdef __linux__
    // tmpfs serves every read from RAM: whether it accepts O_DIRECT (Linux >= 6.6) or not,
    // direct_io must be false, with a warning, and the data must still be right.
    if (fs::exists("/dev/shm") && fs::space("/dev/shm").available > uint64_t(10 * kRec)) {
        auto shm = writeBank("/dev/shm", "waste-tst-direct-io.bin", 2);
        DirectFile t(shm);
        EXPECT_FALSE(t.directIo()) << "tmpfs must not be reported as bypassing the page cache";
        EXPECT_NE(t.warning().find("page cache"), std::string::npos) << t.warning();
        AlignedBuffer buf(kRec);
        ASSERT_EQ(t.readAt(buf.data(), kRec, kRec), kRec);
        EXPECT_TRUE(recordIntact(buf.data(), 1));
        fs::remove(shm);
    }
#endif
    DirectFile cached(path, false);
    EXPECT_FALSE(cached.directIo()) << "asked to keep the page cache";
}

#ifdef __linux__
TEST(DirectFile, FreshOrCachedFilesOnADirectCapableFilesystemReportTrue)
{
    if (!directCapableFs(outDir().parent_path()))
        GTEST_SKIP() << "the build directory is not on ext4/xfs/btrfs";
    // Freshly written (dirty pages, large folios in the page cache): the old probe dropped
    // one 4 KiB page of a larger folio, saw it still cached and blamed O_DIRECT.
    for (int records : {1, 2, 64, 700}) { // 12 KiB to 8.6 MB
        auto path = writeBank(outDir(), "fresh.bin", records);
        DirectFile f(path);
        EXPECT_TRUE(f.directIo()) << records << " records: " << f.warning();
        EXPECT_TRUE(f.warning().empty()) << f.warning();
    }
    // Fully cached by an ordinary read just before the open.
    auto path = writeBank(outDir(), "cached.bin", 64);
    readBuffered(path);
    ASSERT_GT(cachedPages(path), 0) << "the buffered read should have cached it";
    DirectFile f(path);
    EXPECT_TRUE(f.directIo()) << f.warning();
}

TEST(DirectFile, ATrueReportMeansReadsLeaveThePageCacheAlone)
{
    // Check the claim independently of the probe: after the open, reading records through
    // a file that says directIo() must not put them in the page cache.
    auto path = writeBank(outDir(), "claim.bin", 32);
    DirectFile f(path);
    if (!f.directIo())
        GTEST_SKIP() << f.warning();
    ASSERT_EQ(cachedPages(path), 0) << "the probe drops the file's cached pages";
    AlignedBuffer buf(kRec);
    for (int r : {31, 3, 17}) {
        ASSERT_EQ(f.readAt(buf.data(), kRec, r * kRec), kRec);
        EXPECT_TRUE(recordIntact(buf.data(), r));
    }
    EXPECT_EQ(cachedPages(path), 0) << "a direct read landed in the page cache";
    // The same reads through the page cache do show up: the measurement can see them.
    DirectFile buffered(path, false);
    ASSERT_EQ(buffered.readAt(buf.data(), kRec, 5 * kRec), kRec);
    EXPECT_GT(cachedPages(path), 0);
}
#endif

TEST(DirectFile, MissingFileIsAnIoErrorNamingIt)
{
    try {
        DirectFile f((outDir() / "nope.bin").string());
        FAIL();
    } catch (const waste::Error &e) {
        EXPECT_EQ(e.code(), waste::ErrorCode::Io);
        EXPECT_NE(std::string(e.what()).find("nope.bin"), std::string::npos);
    }
}

TEST(ReaderPool, EveryJobCompletesOnceWithItsData)
{
    auto path = writeBank(outDir(), "bank3.bin", 16);
    DirectFile f(path);
    for (auto [threads, backend] : depthsAndBackends({0, 1, 4, 16})) {
        ReaderPool pool(threads, backend);
        std::vector<AlignedBuffer> bufs;
        for (int r = 0; r < 16; ++r)
            bufs.emplace_back(kRec);
        for (int r = 15; r >= 0; --r)
            pool.submit(readJob(&f, r * kRec, kRec, bufs[r].data(), uint64_t(r)));
        std::set<uint64_t> seen;
        while (auto d = pool.next()) {
            EXPECT_TRUE(d->ok) << d->error;
            EXPECT_TRUE(seen.insert(d->tag).second) << "tag returned twice";
            EXPECT_TRUE(recordIntact(bufs[d->tag].data(), int(d->tag)));
        }
        EXPECT_EQ(seen.size(), 16u) << threads << " in flight, " << (pool.ring() ? "io_uring" : "threads");
        EXPECT_EQ(pool.outstanding(), 0);
    }
}

// A batch (one submit for a layer's misses) wakes one reader and each passes the wake-up
// on: every job of a batch no larger than the pool is in flight at once, batch after batch
// (each job's finish step waits, up to 30 s, until all of its batch have started), and
// batches larger than the pool, or on a pool of none or one thread, all complete.
TEST(ReaderPool, ABatchHasEveryReadInFlightTogether)
{
    auto path = writeBank(outDir(), "bank5.bin", 16);
    DirectFile f(path);
    for (int threads : {2, 8, 16}) {
        ReaderPool pool(threads, ReaderPool::Backend::Threads);
        std::vector<AlignedBuffer> bufs;
        for (int r = 0; r < 16; ++r)
            bufs.emplace_back(kRec);
        for (int round = 0; round < 5; ++round) {
            const int size = threads;
            std::mutex m;
            std::condition_variable cv;
            int started = 0;
            std::vector<ReadJob> batch;
            for (int r = 0; r < size; ++r) {
                ReadJob j = readJob(&f, r * kRec, kRec, bufs[r].data(), uint64_t(r));
                j.finish = [&, size](ReadDone &d) {
                    std::unique_lock lock(m);
                    ++started;
                    cv.notify_all();
                    if (!cv.wait_for(lock, std::chrono::seconds(30), [&] { return started >= size; })) {
                        d.ok = false;
                        d.error = "only " + std::to_string(started) + " of " + std::to_string(size) + " reads in flight";
                    }
                };
                batch.push_back(std::move(j));
            }
            pool.submit(std::move(batch));
            int done = 0;
            while (auto d = pool.next()) {
                EXPECT_TRUE(d->ok) << threads << " threads, round " << round << ": " << d->error;
                EXPECT_TRUE(recordIntact(bufs[d->tag].data(), int(d->tag)));
                ++done;
            }
            EXPECT_EQ(done, size);
        }
    }
    for (auto [threads, backend] : depthsAndBackends({0, 1, 4})) {
        ReaderPool pool(threads, backend);
        std::vector<AlignedBuffer> bufs;
        std::vector<ReadJob> batch;
        for (int r = 0; r < 16; ++r) {
            bufs.emplace_back(kRec);
            batch.push_back(readJob(&f, r * kRec, kRec, bufs[r].data(), uint64_t(r)));
        }
        pool.submit(std::move(batch));
        std::set<uint64_t> seen;
        while (auto d = pool.next()) {
            EXPECT_TRUE(d->ok) << d->error;
            EXPECT_TRUE(seen.insert(d->tag).second);
        }
        EXPECT_EQ(seen.size(), 16u) << threads << " threads";
    }
}

TEST(ReaderPool, ShortReadIsAFailureNamingTheFile)
{
    auto path = writeBank(outDir(), "bank4.bin", 2);
    DirectFile f(path);
    for (auto [threads, backend] : depthsAndBackends({2})) {
        ReaderPool pool(threads, backend);
        AlignedBuffer buf(kRec), two(2 * kRec);
        pool.submit(readJob(&f, 2 * kRec, kRec, buf.data(), 7)); // past the end
        auto d = pool.next();
        ASSERT_TRUE(d);
        EXPECT_FALSE(d->ok);
        EXPECT_EQ(d->tag, 7u);
        EXPECT_EQ(d->bytes, 0);
        EXPECT_NE(d->error.find("bank4.bin"), std::string::npos);
        pool.submit(readJob(&f, kRec, 2 * kRec, two.data(), 8)); // half of it past the end
        d = pool.next();
        ASSERT_TRUE(d);
        EXPECT_FALSE(d->ok);
        EXPECT_EQ(d->bytes, kRec);
        EXPECT_NE(d->error.find("short read"), std::string::npos) << d->error;
        EXPECT_TRUE(recordIntact(two.data(), 1));
    }
}

// A guess must not share the disk with a read compute is waiting on: while a demand
// read is in progress (held open here by its finish step, which runs on the reader
// thread), a speculative job stays queued even with idle threads, and starts as soon as
// the demand read ends.
TEST(ReaderPool, SpeculativeReadsWaitWhileADemandReadIsInProgress)
{
    auto path = writeBank(outDir(), "bank6.bin", 4);
    DirectFile f(path);
    for (auto [threads, backend] : depthsAndBackends({4})) {
        SCOPED_TRACE(backend == ReaderPool::Backend::Ring ? "io_uring" : "threads");
        ReaderPool pool(threads, backend);
        AlignedBuffer demandBuf(kRec), guessBuf(kRec);
        std::mutex m;
        std::condition_variable cv;
        bool demandStarted = false, releaseDemand = false, guessDone = false;
        ReadJob demand = readJob(&f, 0, kRec, demandBuf.data(), 1);
        demand.finish = [&](ReadDone &) {
            std::unique_lock lock(m);
            demandStarted = true;
            cv.notify_all();
            cv.wait(lock, [&] { return releaseDemand; });
        };
        ReadJob guess = readJob(&f, kRec, kRec, guessBuf.data(), 2);
        guess.report = false;
        guess.finish = [&](ReadDone &d) {
            EXPECT_TRUE(d.ok) << d.error;
            std::lock_guard lock(m);
            guessDone = true;
            cv.notify_all();
        };
        pool.submit(demand);
        {
            std::unique_lock lock(m);
            ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return demandStarted; }));
        }
        pool.submit(guess);
        {
            std::unique_lock lock(m);
            EXPECT_FALSE(cv.wait_for(lock, std::chrono::milliseconds(200), [&] { return guessDone; }))
                << "a guess was read while a demand read was in progress";
            releaseDemand = true;
            cv.notify_all();
        }
        auto d = pool.next();
        ASSERT_TRUE(d);
        EXPECT_EQ(d->tag, 1u);
        std::unique_lock lock(m);
        EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return guessDone; }))
            << "the guess never started after the demand read ended";
        EXPECT_TRUE(recordIntact(guessBuf.data(), 1));
    }
}

// Through io_uring a batch no larger than the depth goes to the kernel at once: when its
// first read lands (its finish step runs), none of the batch still waits in the queue.
TEST(ReaderPool, ARingSubmitsEveryReadOfABatchTogether)
{
    if (!ringAllowed())
        GTEST_SKIP() << "io_uring refused here: " << ringRefusal();
    auto path = writeBank(outDir(), "bank7.bin", 16);
    DirectFile f(path);
    for (int depth : {2, 8, 16}) {
        ReaderPool pool(depth, ReaderPool::Backend::Ring);
        ASSERT_TRUE(pool.ring());
        std::vector<AlignedBuffer> bufs;
        for (int r = 0; r < 16; ++r)
            bufs.emplace_back(kRec);
        for (int round = 0; round < 5; ++round) {
            std::atomic<int> queuedAtFirst{-1};
            std::vector<ReadJob> batch;
            for (int r = 0; r < depth; ++r) {
                ReadJob j = readJob(&f, r * kRec, kRec, bufs[size_t(r)].data(), uint64_t(r));
                j.finish = [&](ReadDone &) {
                    int none = -1;
                    queuedAtFirst.compare_exchange_strong(none, pool.queued());
                };
                batch.push_back(std::move(j));
            }
            pool.submit(std::move(batch));
            int done = 0;
            while (auto d = pool.next()) {
                EXPECT_TRUE(d->ok) << d->error;
                EXPECT_TRUE(recordIntact(bufs[d->tag].data(), int(d->tag)));
                ++done;
            }
            EXPECT_EQ(done, depth);
            EXPECT_EQ(queuedAtFirst.load(), 0) << "depth " << depth << ", round " << round;
        }
        // More jobs than the depth: the rest wait for a place and all complete.
        std::vector<ReadJob> many;
        for (int r = 0; r < 16; ++r)
            many.push_back(readJob(&f, r * kRec, kRec, bufs[size_t(r)].data(), uint64_t(r)));
        pool.submit(std::move(many));
        std::set<uint64_t> seen;
        while (auto d = pool.next()) {
            EXPECT_TRUE(d->ok) << d->error;
            EXPECT_TRUE(seen.insert(d->tag).second);
            EXPECT_TRUE(recordIntact(bufs[d->tag].data(), int(d->tag)));
        }
        EXPECT_EQ(seen.size(), 16u);
    }
}

// A container's seccomp profile often refuses io_uring_setup: the pool must then read on
// threads, say why, and read correctly; asked for the ring alone, it must refuse clearly.
// The filter is installed on a thread of its own (seccomp filters are per thread and pass
// to the threads it starts), so the rest of this process keeps io_uring.
TEST(ReaderPool, FallsBackToThreadsWhereIoUringIsRefused)
{
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
    auto path = writeBank(outDir(), "bank8.bin", 8);
    std::string failure;
    std::thread confined([&] {
#if defined(__x86_64__)
        constexpr uint32_t arch = AUDIT_ARCH_X86_64;
#else
        constexpr uint32_t arch = AUDIT_ARCH_AARCH64;
#endif
        sock_filter filter[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
            failure = std::string("cannot install the seccomp filter: ") + std::strerror(errno);
            return;
        }
        try {
            ReaderPool pool(4);
            if (pool.ring() || pool.threads() != 4)
                failure = "the pool did not fall back to 4 reader threads";
            else if (pool.ringRefused().find("io_uring_setup") == std::string::npos)
                failure = "no reason given for the fallback: '" + pool.ringRefused() + "'";
            DirectFile f(path);
            std::vector<AlignedBuffer> bufs;
            std::vector<ReadJob> batch;
            for (int r = 0; r < 8; ++r) {
                bufs.emplace_back(kRec);
                batch.push_back(readJob(&f, r * kRec, kRec, bufs.back().data(), uint64_t(r)));
            }
            pool.submit(std::move(batch));
            int done = 0;
            while (auto d = pool.next())
                if (d->ok && recordIntact(bufs[d->tag].data(), int(d->tag)))
                    ++done;
            if (done != 8)
                failure += " only " + std::to_string(done) + " of 8 reads came back intact";
        } catch (const std::exception &e) {
            failure = std::string("Auto threw: ") + e.what();
        }
        try {
            ReaderPool ring(4, ReaderPool::Backend::Ring);
            failure += " a Ring pool opened under the filter";
        } catch (const waste::Error &e) {
            if (e.code() != waste::ErrorCode::Io || std::string(e.what()).find("io_uring") == std::string::npos)
                failure += std::string(" unclear refusal: ") + e.what();
        }
    });
    confined.join();
    EXPECT_TRUE(failure.empty()) << failure;
#else
    GTEST_SKIP() << "seccomp filter written for Linux on x86-64 and aarch64";
#endif
}

TEST(DiskProbe, MeasuresAPositiveSpeed)
{
    auto path = writeBank(outDir(), "bank5.bin", 64);
    auto seq = probeSequential(path, 0, kRec, 2);
    EXPECT_EQ(seq.bytes, 64 * kRec);
    EXPECT_GT(seq.gbPerSecond, 0);
    auto rnd = probeRecords(path, kRec, 100, 4);
    EXPECT_EQ(rnd.bytes, 100 * kRec);
    EXPECT_EQ(rnd.reads, 100);
    EXPECT_GT(rnd.gbPerSecond, 0);
    // The reads' CPU time is the process's, counted while they ran: never negative, and less
    // than the reads' whole time on every thread.
    EXPECT_GE(rnd.cpuSeconds, 0);
    EXPECT_LT(rnd.cpuSeconds, rnd.seconds * (4 + 2) + 0.05);
    EXPECT_THROW(probeRecords(path, 1000, 1), waste::Error);
}

// The forecast's probe reads every bank, as the engine does: each file is opened and read
// from, a file too small for one record is refused by name, and no file at all is an error.
TEST(DiskProbe, ReadsRecordsAcrossEveryBank)
{
    const std::string a = writeBank(outDir(), "bank6.bin", 16), b = writeBank(outDir(), "bank7.bin", 16);
    const auto both = probeRecords(std::vector<std::string>{a, b}, kRec, 64, 4, 1);
    EXPECT_EQ(both.bytes, 64 * kRec);
    EXPECT_EQ(both.reads, 64);
    EXPECT_GT(both.gbPerSecond, 0);
    const std::string tiny = (outDir() / "short-bank.bin").string();
    {
        std::ofstream f(tiny, std::ios::binary);
        f << "not a record";
    }
    try {
        probeRecords(std::vector<std::string>{a, tiny}, kRec, 8);
        ADD_FAILURE() << "a file smaller than a record was probed";
    } catch (const waste::Error &e) {
        EXPECT_NE(std::string(e.what()).find("short-bank.bin"), std::string::npos) << e.what();
    }
    EXPECT_THROW(probeRecords(std::vector<std::string>{}, kRec, 8), waste::Error);
}

// What a read costs a decode: the decode kernel alone and beside reads of every bank, in
// turns. Reads happen and are timed (the speed is real, the cost never negative); nothing
// to read is no measurement, not an error.
TEST(DiskProbe, MeasuresWhatReadsCostTheDecodeBesideThem)
{
    const std::string a = writeBank(outDir(), "bank8.bin", 16), b = writeBank(outDir(), "bank9.bin", 16);
    const waste::plan::ReadInterference r = waste::plan::measureReadInterference({a, b}, kRec, 4, 2);
    EXPECT_GT(r.rounds, 0);
    EXPECT_GT(r.gbps, 0);
    EXPECT_GE(r.secondsPerRead, 0);
    EXPECT_LT(r.secondsPerRead, 0.1); // a tenth of a second of compute lost per read: no plausible cost
    EXPECT_EQ(waste::plan::measureReadInterference({}, kRec, 4).rounds, 0);
    EXPECT_EQ(waste::plan::measureReadInterference({a}, kRec + 1, 4).rounds, 0);
}
