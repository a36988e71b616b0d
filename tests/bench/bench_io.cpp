// Direct-I/O expert read throughput: the engine's reader (DirectFile + ReaderPool, as the
// cache uses it) against a raw O_DIRECT pread loop and, when installed, fio — same file,
// same record size, same reads in flight, random record-aligned offsets.
//
// Usage: bench_io [FILE] [file_mib=1024] [record_bytes=2666496] [inflight=8] [reads=600]
// FILE is created (written with O_DIRECT so it is not in the page cache) if missing.
// Default record size: one Kimi-Linear expert (651 pages).
#include "io/aligned_buffer.hpp"
#include "io/direct_file.hpp"
#include "io/reader_pool.hpp"

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
    if (fs::exists(path) && int64_t(fs::file_size(path)) >= bytes)
        return;
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC
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

double engineReader(const std::string &path, int64_t rec, int inflight, const std::vector<int64_t> &offs, bool &direct)
{
    DirectFile f(path);
    direct = f.directIo();
    if (!direct)
        std::fprintf(stderr, "warning: %s\n", f.warning().c_str());
    ReaderPool pool(inflight);
    std::vector<AlignedBuffer> bufs;
    for (int i = 0; i < inflight; ++i)
        bufs.emplace_back(rec);
    auto t0 = std::chrono::steady_clock::now();
    size_t issued = 0;
    for (; issued < offs.size() && int(issued) < inflight; ++issued)
        pool.submit(readJob(&f, offs[issued], rec, bufs[issued].data(), issued));
    int64_t bytes = 0;
    while (auto d = pool.next()) {
        if (!d->ok) {
            std::fprintf(stderr, "%s\n", d->error.c_str());
            std::exit(1);
        }
        bytes += d->bytes;
        if (issued < offs.size())
            pool.submit(readJob(&f, offs[issued++], rec, bufs[d->tag].data(), d->tag));
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return double(bytes) / s / 1e9;
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
    double raw = 0, eng = 0;
    for (int round = 0; round < 3; ++round) { // interleaved, best of three each
        raw = std::max(raw, rawReader(path, rec, inflight, offs));
        eng = std::max(eng, engineReader(path, rec, inflight, offs, direct));
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
    std::printf("engine reader: %.2f GB/s = %.1f%% of the best raw reader (%.2f GB/s)\n", eng, 100 * eng / ref, ref);
    return 0;
}
