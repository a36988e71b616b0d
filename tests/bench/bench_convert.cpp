// Conversion throughput: a Kimi-Linear-shaped model (mktiny --size, default 256M of bf16
// weights) is written in the Hugging Face layout, then converted with --jobs 2; and a
// native conversion (a repack of FP8-block experts, nativeThroughput below) against the
// disk's sequential read rate measured in the same run on the same source files.
// Usage: bench_convert [SIZE] [WORK_DIR] [JOBS] [NATIVE_SIZE]. Last line: MB of source
// per second of both (native also with the old table crc32, measured in the same run), and
// the native rate against the disk's direct read and write rates and against a plain direct
// copy of the same shards, all measured in the run.
// Before it: the CPU time the VQ3R conversion took (the figure to
// compare on a loaded machine) and its reconstruction error against the source.
#include "convert/output_file.hpp"
#include "format/crc32.hpp"
#include "io/aligned_buffer.hpp"
#include "io/disk_probe.hpp"
#include "vq3r_error.hpp"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <mutex>
#include <string>
#include <sys/mman.h>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

// CPU time of the calling thread: the conversion runs its serial parts here and takes a
// share of every parallel loop, so on free cores its wall time is close to this.
double threadCpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double processCpuSeconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Drops a file's clean pages from the page cache, so the next read comes from the disk.
void evict(const std::string &path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
}

// The fastest this disk moves the shards' bytes to new files: a plain copy of every shard
// with direct reads and direct writes in 16 MiB pieces (huge-page buffers, as the converter
// uses), a reader thread running ahead of the writer by up to four pieces, then fsync. A
// native conversion writes every byte it reads, so this is what "at the disk's speed"
// means for it on a disk whose reads and writes share one device (or one host cache).
double directCopyMbPerS(const std::vector<std::string> &shards, const std::string &dir) {
    constexpr int64_t kPiece = int64_t(16) << 20;
    constexpr int kRing = 4;
    std::array<waste::io::AlignedBuffer, kRing> ring;
    for (auto &b : ring) b = waste::io::AlignedBuffer(kPiece);
    int64_t bytes = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto &src : shards) {
        const int in = ::open(src.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
        const std::string dst = dir + "/copy-probe";
        const int out = ::open(dst.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, 0644);
        if (in < 0 || out < 0) {
            if (in >= 0) ::close(in);
            if (out >= 0) ::close(out);
            return 0;
        }
        // Slot i holds piece i % kRing: `got` is the reader's count of pieces read, `put` the writer's.
        std::mutex m;
        std::condition_variable cv;
        std::array<int64_t, kRing> length{};
        int64_t got = 0, put = 0;
        bool end = false, failed = false;
        std::thread reader([&] {
            for (int64_t off = 0;; off += kPiece) {
                std::unique_lock lock(m);
                cv.wait(lock, [&] { return got - put < kRing || failed; });
                if (failed) return;
                lock.unlock();
                const ssize_t n = ::pread(in, ring[size_t(got % kRing)].data(), size_t(kPiece), off_t(off));
                lock.lock();
                if (n <= 0) {
                    end = true, failed = failed || n < 0;
                    cv.notify_all();
                    return;
                }
                length[size_t(got % kRing)] = n;
                ++got;
                cv.notify_all();
            }
        });
        for (int64_t off = 0;;) {
            std::unique_lock lock(m);
            cv.wait(lock, [&] { return put < got || end; });
            if (put == got) break;
            const int64_t n = length[size_t(put % kRing)];
            lock.unlock();
            // The last piece of a shard may end off the 4 KiB grid: write it rounded up, then
            // cut the file back, as the converter's last record does.
            const int64_t rounded = (n + 4095) & ~int64_t(4095);
            const bool ok = ::pwrite(out, ring[size_t(put % kRing)].data(), size_t(rounded), off_t(off)) == rounded;
            lock.lock();
            failed = failed || !ok;
            off += n, bytes += n, ++put;
            cv.notify_all();
            if (failed) break;
        }
        reader.join();
        const bool ok = !failed && ::fsync(out) == 0;
        ::close(in);
        ::close(out);
        std::filesystem::remove(dst);
        if (!ok) return 0;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return s > 0 ? double(bytes) / 1e6 / s : 0;
}

// The same shards' direct sequential read rate with buffers in 4 KiB pages (huge pages
// refused), as `fio` and `dd` measure a disk: 8 MiB reads, four threads in flight. On this
// VM a direct read into 4 KiB pages costs the host one descriptor per page, so the same
// host-cached bytes arrive at about 1.1 GB/s instead of 3-6 GB/s into huge pages.
double smallPageReadMbPerS(const std::vector<std::string> &shards) {
    constexpr int64_t kPiece = int64_t(8) << 20;
    constexpr int kThreads = 4;
    int64_t bytes = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto &src : shards) {
        const int fd = ::open(src.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
        if (fd < 0) return 0;
        const int64_t size = int64_t(std::filesystem::file_size(src));
        std::vector<std::thread> threads;
        std::vector<int64_t> got(kThreads, 0);
        for (int t = 0; t < kThreads; ++t)
            threads.emplace_back([&, t] {
                void *buf = std::aligned_alloc(4096, size_t(kPiece));
#ifdef MADV_NOHUGEPAGE
                ::madvise(buf, size_t(kPiece), MADV_NOHUGEPAGE);
#endif
                for (int64_t off = int64_t(t) * kPiece; off < size; off += kThreads * kPiece) {
                    const ssize_t n = ::pread(fd, buf, size_t(kPiece), off_t(off));
                    if (n <= 0) break;
                    got[size_t(t)] += n;
                }
                std::free(buf);
            });
        for (auto &th : threads) th.join();
        ::close(fd);
        for (int64_t g : got) bytes += g;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return s > 0 ? double(bytes) / 1e6 / s : 0;
}

struct NativeFigure {
    double mbPerS = 0, diskMbPerS = 0, writeMbPerS = 0;
    double copyMbPerS = 0; // a plain direct copy of the same shards, in the same run
    double smallPageReadMbPerS = 0; // the shards' direct read into 4 KiB pages
    double scalarCrcMbPerS = 0; // the same conversion with the table crc32 (the old one)
    bool diskDirect = false;
};

// A Kimi-Linear-shaped model of `size` source bytes with FP8 experts (128x128 blocks, as
// DeepSeek-V3 and Kimi K2 ship them; the K3 shape's experts are too small to reach 1 GB),
// converted with --experts native: the records are copies of the
// shards' bytes, so the rate should approach the disk's. The disk is measured first on
// the same shards with direct reads; both runs start with the shards out of the cache.
NativeFigure nativeThroughput(int64_t size, const std::string &work, int jobs) {
    const std::string hf = work + "/native-hf", out = work + "/native-out";
    waste::TinyModelOptions t;
    t.experts = waste::TinyExperts::FP8B128;
    t.targetBytes = size;
    t.jobs = jobs;
    waste::makeTinyHf(hf, t);
    std::vector<std::string> shards;
    for (const auto &e : std::filesystem::directory_iterator(hf))
        if (e.path().extension() == ".safetensors") shards.push_back(e.path().string());
    NativeFigure f;
    int64_t bytes = 0;
    double seconds = 0;
    f.diskDirect = true;
    for (const auto &s : shards) {
        if (std::filesystem::file_size(s) < (8 << 20)) continue; // below one probe chunk: nothing to time
        evict(s);
        const waste::io::DiskSpeed d = waste::io::probeSequential(s);
        bytes += d.bytes;
        seconds += d.seconds;
        f.diskDirect = f.diskDirect && d.directIo;
        evict(s);
    }
    f.diskMbPerS = seconds > 0 ? bytes / seconds / 1e6 : 0;
    // 512 MiB through the converter's writer. On this VM the direct reads of a freshly
    // written source come from the host's cache (3-6 GB/s into huge-page buffers, about 1.1
    // GB/s into 4 KiB pages; the same files read cold, hours later: 560-670 MB/s) while
    // writes reach the disk (540-740 MB/s).
    f.writeMbPerS = waste::convert::directWriteBytesPerSecond(work, 512ll << 20) / 1e6;
    for (const auto &sh : shards) evict(sh);
    f.smallPageReadMbPerS = smallPageReadMbPerS(shards);
    for (const auto &sh : shards) evict(sh);
    f.copyMbPerS = directCopyMbPerS(shards, work);
    waste::ConvertOptions o;
    o.jobs = jobs;
    o.experts = waste::ExpertEncoding::Native;
    // Twice from a cold cache: with the record checksums the CPU's fastest way, then with
    // the slice-by-8 tables, so the two figures come from the same disk at the same time.
    for (const bool scalarCrc : {false, true}) {
        for (const auto &sh : shards) evict(sh);
        std::filesystem::remove_all(out);
        waste::format::forceCrc32Scalar(scalarCrc);
        const auto t0 = std::chrono::steady_clock::now();
        const auto r = waste::convertModel(hf, out, o);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        (scalarCrc ? f.scalarCrcMbPerS : f.mbPerS) = r.sourceBytesRead / 1e6 / s;
        std::fprintf(stderr, "native (crc32 %s): source %.1f MB (%s records of %lld B) in %.1f s; disk %.0f MB/s%s\n",
                     waste::format::crc32Name(), r.sourceBytesRead / 1e6, r.plan.expertFormat.c_str(),
                     static_cast<long long>(r.plan.recordBytes), s, f.diskMbPerS,
                     f.diskDirect ? "" : " (page cache not bypassed: not the disk's figure)");
    }
    waste::format::forceCrc32Scalar(false);
    std::filesystem::remove_all(hf);
    std::filesystem::remove_all(out);
    return f;
}

// One thread's crc32 rate over 64 MiB, MB/s, with the tables or the CPU's fastest way.
double crcMbPerS(bool scalar) {
    const std::vector<uint8_t> bytes(64u << 20, 0xa5);
    waste::format::forceCrc32Scalar(scalar);
    const auto t0 = std::chrono::steady_clock::now();
    uint32_t c = 0;
    for (int i = 0; i < 4; ++i) c = waste::format::crc32(bytes.data(), bytes.size(), c);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    waste::format::forceCrc32Scalar(false);
    return c == 1 ? 0 : 4.0 * double(bytes.size()) / 1e6 / s; // c read so the loop is not dropped
}

} // namespace

int main(int argc, char **argv) {
    const int64_t size = argc > 1 ? waste::parseSize(argv[1]) : (256ll << 20);
    const std::string work = argc > 2 ? argv[2] : (std::filesystem::temp_directory_path() / "waste-bench-convert").string();
    const int jobs = argc > 3 ? std::stoi(argv[3]) : 2;
    std::filesystem::remove_all(work);
    const std::string hf = work + "/hf", out = work + "/out";
    waste::TinyModelOptions t;
    t.targetBytes = size;
    t.jobs = jobs;
    auto t0 = std::chrono::steady_clock::now();
    waste::makeTinyHf(hf, t);
    const double genSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto plan = waste::planConversion(hf, out);
    std::fprintf(stderr, "source %.1f MB (%d MoE layers x %d experts, record %lld B), generated in %.1f s\n",
                 plan.sourceBytes / 1e6, plan.moeLayers, plan.experts, static_cast<long long>(plan.recordBytes), genSeconds);
    waste::ConvertOptions o;
    o.jobs = jobs;
    t0 = std::chrono::steady_clock::now();
    const double cpu0 = processCpuSeconds(), main0 = threadCpuSeconds();
    const auto r = waste::convertModel(hf, out, o);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = processCpuSeconds() - cpu0, mainCpu = threadCpuSeconds() - main0;
    std::fprintf(stderr, "container %.1f MB in %.1f s, %.1f s of CPU (%.1f MB of source per CPU second)\n", plan.outputBytes / 1e6, s,
                 cpu, r.sourceBytesRead / 1e6 / cpu);
    // On a loaded machine the wall time is mostly other processes'; the calling thread's CPU
    // time is the critical path when each worker has a core of its own.
    std::fprintf(stderr, "calling thread %.2f s of CPU: about %.1f MB/s of source when the %d jobs have free cores\n", mainCpu,
                 r.sourceBytesRead / 1e6 / std::max(mainCpu, cpu / jobs), jobs);
    std::fprintf(stderr, "VQ3R relative reconstruction error of the experts: %.2f %%\n", 100 * bench::vq3rRelativeError(hf, out));
    const int64_t nativeSize = argc > 4 ? waste::parseSize(argv[4]) : (1ll << 30);
    const NativeFigure nf = nativeThroughput(nativeSize, work, jobs);
    const double fastCrc = crcMbPerS(false), tableCrc = crcMbPerS(true);
    std::fprintf(stderr, "crc32, one thread: %s %.0f MB/s, tables %.0f MB/s\n", waste::format::crc32Name(), fastCrc, tableCrc);
    std::filesystem::remove_all(work);
    const auto share = [&](double mbPerS) { return nf.diskMbPerS > 0 ? 100 * mbPerS / nf.diskMbPerS : 0.0; };
    std::printf("convert throughput (%d jobs): %.1f MB of source per second; native %.1f MB/s = %.0f %% of the disk's %.0f MB/s "
                "read (%.0f %% of %.0f MB/s into 4 KiB pages), %.0f %% of its %.0f MB/s write, %.0f %% of a direct copy of "
                "the same shards at %.0f MB/s (table crc32: %.1f MB/s = %.0f %% of the read)\n",
                jobs, r.sourceBytesRead / 1e6 / s, nf.mbPerS, share(nf.mbPerS), nf.diskMbPerS,
                nf.smallPageReadMbPerS > 0 ? 100 * nf.mbPerS / nf.smallPageReadMbPerS : 0.0, nf.smallPageReadMbPerS,
                nf.writeMbPerS > 0 ? 100 * nf.mbPerS / nf.writeMbPerS : 0.0, nf.writeMbPerS,
                nf.copyMbPerS > 0 ? 100 * nf.mbPerS / nf.copyMbPerS : 0.0, nf.copyMbPerS, nf.scalarCrcMbPerS,
                share(nf.scalarCrcMbPerS));
    return 0;
}
