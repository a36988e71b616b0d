// Direct-I/O expert read throughput: the engine's reader (DirectFile + ReaderPool, as the
// cache uses it) against a raw O_DIRECT pread loop and, when installed, fio — same file,
// same record size, same reads in flight, random record-aligned offsets. The engine's reader
// reads into a buffer per read (4 KiB pages below 2 MiB, as the raw loop and fio do) and
// into one block laid out like the expert cache's slots (huge pages; expert_read_rate.hpp).
//
// Usage: bench_io [FILE] [file_mib=1024] [record_bytes=2666496] [inflight=8] [reads=600]
// FILE is created (written with O_DIRECT so it is not in the page cache) if missing; an
// existing FILE smaller than file_mib is refused, never overwritten.
// Default record size: one Kimi-Linear expert (651 pages).
#include "expert_read_rate.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

using namespace waste::io;
namespace fs = std::filesystem;

namespace {

void ensureFile(const std::string &path, int64_t bytes)
{
    if (fs::exists(path)) { // never overwrite a file that exists: it may be a container's bank
        if (int64_t(fs::file_size(path)) >= bytes)
            return;
        throw waste::Error(waste::ErrorCode::Argument, path + " holds " + std::to_string(fs::file_size(path)) +
                                                           " bytes, fewer than the " + std::to_string(bytes) +
                                                           " asked for; pass a smaller file_mib or a new path");
    }
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC
#ifdef __linux__
                                      | O_DIRECT
#endif
                    , 0644);
    if (fd < 0) {
        std::perror(path.c_str());
        std::exit(1);
    }
    AlignedBuffer buf(8 << 20);
    for (int64_t i = 0; i < buf.size(); ++i)
        buf.data()[i] = uint8_t(i * 2654435761u >> 13);
    for (int64_t done = 0; done < bytes; done += buf.size())
        if (::write(fd, buf.data(), size_t(buf.size())) != buf.size()) {
            std::perror("write");
            std::exit(1);
        }
    ::fsync(fd);
    ::close(fd);
}

std::vector<int64_t> offsets(int64_t fileBytes, int64_t rec, int n)
{
    std::vector<int64_t> v;
    uint64_t x = 88172645463325252ull;
    int64_t records = fileBytes / rec;
    for (int i = 0; i < n; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        v.push_back(int64_t(x % uint64_t(records)) * rec);
    }
    return v;
}

double engineReader(const std::string &path, int64_t rec, int inflight, const std::vector<int64_t> &offs, bool &direct,
                    ReadBuffers buffers)
{
    DirectFile f(path);
    direct = f.directIo();
    if (!direct)
        std::fprintf(stderr, "warning: %s\n", f.warning().c_str());
    std::vector<RecordRead> reads;
    for (int64_t o : offs)
        reads.push_back({&f, o});
    return engineReadRate(reads, rec, inflight, buffers).gbPerSecond();
}

// The plainest possible reader: `inflight` threads, each an O_DIRECT pread loop.
double rawReader(const std::string &path, int64_t rec, int inflight, const std::vector<int64_t> &offs)
{
    int flags = O_RDONLY;
#ifdef __linux__
    flags |= O_DIRECT;
#endif
    int fd = ::open(path.c_str(), flags);
    std::atomic<size_t> nextJob{0};
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> ts;
    for (int t = 0; t < inflight; ++t)
        ts.emplace_back([&] {
            AlignedBuffer b(rec);
            for (size_t i; (i = nextJob++) < offs.size();)
                if (::pread(fd, b.data(), size_t(rec), off_t(offs[i])) != rec)
                    std::abort();
        });
    for (auto &t : ts)
        t.join();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ::close(fd);
    return double(rec) * double(offs.size()) / s / 1e9;
}

double fioReader(const std::string &path, int64_t rec, int inflight, int64_t fileBytes, int reads)
{
    if (std::system("command -v fio >/dev/null 2>&1") != 0)
        return -1;
    std::string out = path + ".fio.json";
    std::string cmd = "fio --name=rec --filename=" + path + " --rw=randread --direct=1 --ioengine=psync" +
                      " --bs=" + std::to_string(rec) + " --numjobs=" + std::to_string(inflight) +
                      " --group_reporting --size=" + std::to_string(fileBytes / rec * rec) +
                      " --io_size=" + std::to_string(rec * (reads / inflight)) +
                      " --output-format=terse --terse-version=3 > " + out + " 2>/dev/null";
    if (std::system(cmd.c_str()) != 0)
        return -1;
    // terse v3: field 7 is read bandwidth in KiB/s
    FILE *f = std::fopen(out.c_str(), "r");
    if (!f)
        return -1;
    char line[8192] = {};
    if (!std::fgets(line, sizeof line, f)) {
        std::fclose(f);
        return -1;
    }
    std::fclose(f);
    std::remove(out.c_str());
    char *p = line;
    for (int field = 1; field < 7 && p; ++field)
        p = std::strchr(p, ';') ? std::strchr(p, ';') + 1 : nullptr;
    return p ? std::atof(p) * 1024.0 / 1e9 : -1;
}

} // namespace

int main(int argc, char **argv)
{
    try {
        std::string path = argc > 1 ? argv[1] : (fs::temp_directory_path() / "waste-bench-io.bin").string();
        int64_t fileBytes = (argc > 2 ? std::atoll(argv[2]) : 1024) << 20;
        int64_t rec = argc > 3 ? std::atoll(argv[3]) : 2666496;
        int inflight = argc > 4 ? std::atoi(argv[4]) : 8;
        int reads = argc > 5 ? std::atoi(argv[5]) : 600;
        rec = alignUp(rec);
        ensureFile(path, fileBytes);
        auto offs = offsets(fileBytes, rec, reads);

        bool direct = false;
        rawReader(path, rec, inflight, offs); // warm the device queue, not the page cache
        double raw = 0, eng = 0, slots = 0;
        for (int round = 0; round < 3; ++round) { // interleaved, best of three each
            raw = std::max(raw, rawReader(path, rec, inflight, offs));
            eng = std::max(eng, engineReader(path, rec, inflight, offs, direct, ReadBuffers::Separate));
            slots = std::max(slots, engineReader(path, rec, inflight, offs, direct, ReadBuffers::CacheSlots));
        }
        double fio = fioReader(path, rec, inflight, fileBytes, reads);
        std::printf("file %s, %lld MiB, record %lld B, %d in flight, %d reads, direct_io %s\n", path.c_str(),
                    (long long)(fileBytes >> 20), (long long)rec, inflight, reads, direct ? "true" : "false");
        std::printf("raw O_DIRECT pread loop: %.2f GB/s\n", raw);
        if (fio > 0)
            std::printf("fio randread psync direct: %.2f GB/s\n", fio);
        else
            std::printf("fio: not installed (installer/install-deps.sh --with-tests adds it)\n");
        double ref = std::max(raw, fio);
        std::printf("engine reader into the expert cache's slot layout (huge pages from 2 MiB): %.2f GB/s\n", slots);
        std::printf("engine reader: %.2f GB/s = %.1f%% of the best raw reader (%.2f GB/s)\n", eng, 100 * eng / ref, ref);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench_io: %s\n", e.what());
        return 1;
    }
    return 0;
}
