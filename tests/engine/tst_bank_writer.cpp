// The converter's bank writer (convert/bank_writer.hpp) and its direct-I/O output file
// (convert/output_file.hpp):
// - the bank holds every record in id order, the same bytes for any worker count and batch
//   size (one batch, many, a last partial one);
// - an error in a record's build, in batchDone (a cancel) or in the write (a full disk)
//   reaches the caller with the writer stopped, and nothing after it is written;
// - an OutputFile opened for direct writes takes aligned appends and, after an unaligned
//   one, goes on buffered with every byte in place;
// - InputFile::readAtUncached gives the bytes readAt gives, at unaligned offsets and up to
//   the end of the file;
// - SpanReader (a repack's reads) gives every range its bytes, in two files, whether ranges
//   join into runs or not (small and default limits), up to a file's last partial page,
//   and refuses a range past the end.
#include <gtest/gtest.h>

#include "convert/bank_writer.hpp"
#include "convert/file_io.hpp"
#include "convert/output_file.hpp"
#include "convert/span_reader.hpp"
#include "io/aligned_buffer.hpp"
#include "test_files.hpp"

#include <waste/waste.hpp>

#include <cstring>
#include <filesystem>
#include <random>
#include <tuple>
#include <string>
#include <vector>

using namespace waste::convert;

namespace {

const std::string kSuite = "tst_bank_writer";

// Record e: every byte a function of (e, position), so order and content are both checked.
void fill(int e, uint8_t *rec, int64_t bytes)
{
    for (int64_t i = 0; i < bytes; ++i)
        rec[i] = uint8_t((e * 131 + i * 7 + (i >> 12)) & 0xff);
}

std::string expected(int experts, int64_t bytes)
{
    std::string s(size_t(experts * bytes), '\0');
    for (int e = 0; e < experts; ++e)
        fill(e, reinterpret_cast<uint8_t *>(s.data()) + e * bytes, bytes);
    return s;
}

} // namespace

TEST(BankWriter, RecordsInIdOrderForAnyWorkersAndBatches)
{
    const std::string dir = freshOutputDir(kSuite, "order");
    // Writes of 64 KiB (the converter's are 32 MiB; the batching is the same): 4 KiB records
    // make batches of 16 (37 records: three batches, the last partial); 48 KiB records one
    // a batch, or one per worker.
    for (int64_t bytes : {int64_t(4096), int64_t(48) << 10})
        for (int workers : {1, 2, 5}) {
            const int experts = bytes > 4096 ? 7 : 37;
            const std::string path = dir + "/bank-" + std::to_string(bytes) + "-" + std::to_string(workers);
            std::vector<int> reported;
            BankBuffers buffers; // fresh per bank here; the converter keeps one for all
            {
                OutputFile f(path, 0, nullptr, true);
                writeBankRecords(f, {experts, bytes, workers, 64 << 10}, buffers, [&](int e, uint8_t *rec) { fill(e, rec, bytes); },
                                 [&](int built) { reported.push_back(built); });
                f.close();
            }
            EXPECT_TRUE(slurp(path) == expected(experts, bytes)) << bytes << " B records, " << workers << " workers";
            ASSERT_FALSE(reported.empty());
            EXPECT_EQ(reported.back(), experts);
            const int batch = bankBatchSize({experts, bytes, workers, 64 << 10});
            EXPECT_EQ(int(reported.size()), (experts + batch - 1) / batch);
        }
}

TEST(BankWriter, ErrorsStopTheWriterAndReachTheCaller)
{
    const std::string dir = freshOutputDir(kSuite, "errors");
    const int64_t bytes = 64 << 10; // two records a batch (128 KiB writes, two workers)
    BankBuffers buffers; // shared by the three banks, as the converter shares it
    // A build that fails in the third batch: the first two batches are written, no more.
    {
        OutputFile f(dir + "/build", 0, nullptr, true);
        EXPECT_THROW(writeBankRecords(
                         f, {9, bytes, 2, 2 * bytes}, buffers,
                         [&](int e, uint8_t *rec) {
                             if (e == 5)
                                 throw waste::Error(waste::ErrorCode::Format, "expert 5 is damaged");
                             fill(e, rec, bytes);
                         },
                         [](int) {}),
                     waste::Error);
        EXPECT_LE(f.size(), 4 * bytes);
    }
    // A cancel after the first batch: nothing of the batches after it is written.
    {
        OutputFile f(dir + "/cancel", 0, nullptr, true);
        EXPECT_THROW(writeBankRecords(
                         f, {9, bytes, 2, 2 * bytes}, buffers, [&](int e, uint8_t *rec) { fill(e, rec, bytes); },
                         [](int built) {
                             if (built >= 2)
                                 throw waste::Error(waste::ErrorCode::Cancelled, "cancelled");
                         }),
                     waste::Error);
        EXPECT_EQ(f.size(), 0);
    }
    // A full disk in the second write: the error names it.
    {
        OutputBudget full;
        full.failAfter = 3 * bytes;
        OutputFile f(dir + "/full", 0, &full, true);
        try {
            writeBankRecords(f, {9, bytes, 2, 2 * bytes}, buffers, [&](int e, uint8_t *rec) { fill(e, rec, bytes); }, [](int) {});
            ADD_FAILURE() << "a full disk went unnoticed";
        } catch (const waste::Error &e) {
            EXPECT_NE(std::string(e.what()).find("disk full"), std::string::npos) << e.what();
        }
    }
}

TEST(BankWriter, DirectOutputGoesBufferedAfterAnUnalignedAppend)
{
    const std::string path = freshOutputDir(kSuite, "direct") + "/out";
    waste::io::AlignedBuffer a(8192);
    for (int i = 0; i < 8192; ++i)
        a.data()[i] = uint8_t(i * 3);
    std::string want;
    {
        OutputFile f(path, 0, nullptr, true);
        f.append(a.data(), 8192);   // aligned
        f.append(a.data() + 1, 100); // unaligned address and length
        f.append(a.data(), 4096);   // aligned again, at an unaligned offset
        f.close();
    }
    want.append(reinterpret_cast<const char *>(a.data()), 8192);
    want.append(reinterpret_cast<const char *>(a.data()) + 1, 100);
    want.append(reinterpret_cast<const char *>(a.data()), 4096);
    EXPECT_TRUE(slurp(path) == want);
}

TEST(BankWriter, WriteProbeMeasuresWhereTheContainerGoesAndLeavesNothing)
{
    namespace fs = std::filesystem;
    const std::string dir = freshOutputDir(kSuite, "write-probe");
    // The output folder need not exist yet: the probe writes in its nearest existing parent.
    const std::string notYet = dir + "/not/made/yet";
    const double rate = directWriteBytesPerSecond(notYet, 16 << 20);
    EXPECT_GT(rate, 0);
    EXPECT_FALSE(fs::exists(notYet));
    EXPECT_TRUE(fs::is_empty(dir)) << "the probe file must be removed";
    // Nowhere to write: no figure, and no exception for the caller to handle.
    EXPECT_EQ(directWriteBytesPerSecond("/proc/self/waste-probe", 16 << 20), 0);
}

TEST(BankWriter, UncachedReadsGiveTheBufferedBytes)
{
    const std::string path = freshOutputDir(kSuite, "uncached") + "/in";
    std::mt19937 rng(3);
    std::string bytes(3 * 4096 * 64 + 1234, '\0'); // ends mid-page
    for (auto &c : bytes)
        c = char(rng());
    writeFileAtomic(path, bytes);
    const InputFile f(path);
    for (auto [off, n] : {std::pair<int64_t, int64_t>{0, 4096}, {1, 1}, {4095, 2}, {777, 300000}, {int64_t(bytes.size()) - 1234, 1234},
                          {int64_t(bytes.size()) - 5000, 5000}, {0, int64_t(bytes.size())}}) {
        std::vector<uint8_t> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
        f.readAt(off, a.data(), n);
        f.readAtUncached(off, b.data(), n);
        EXPECT_EQ(a, b) << off << "+" << n;
        EXPECT_EQ(std::memcmp(b.data(), bytes.data() + off, size_t(n)), 0) << off << "+" << n;
    }
    std::vector<uint8_t> past(16);
    EXPECT_THROW(f.readAtUncached(int64_t(bytes.size()) - 8, past.data(), 16), waste::Error);
}

TEST(BankWriter, SpanReaderGivesEveryRangeItsBytes)
{
    const std::string dir = freshOutputDir(kSuite, "spans");
    std::mt19937 rng(5);
    std::string bytes[2];
    for (int k = 0; k < 2; ++k) {
        bytes[k].resize(size_t(4096 * 40 + 777 * (k + 1))); // each ends mid-page
        for (auto &c : bytes[k])
            c = char(rng());
        writeFileAtomic(dir + "/f" + std::to_string(k), bytes[k]);
    }
    const InputFile files[2] = {InputFile(dir + "/f0"), InputFile(dir + "/f1")};
    // Ranges in shuffled order: tiny and page-sized, neighbours, overlaps, far apart, and
    // each file's last bytes.
    std::vector<std::tuple<int, int64_t, int64_t>> want;
    for (int i = 0; i < 60; ++i) {
        const int k = int(rng() % 2);
        const int64_t size = int64_t(bytes[k].size());
        const int64_t n = i % 3 == 0 ? int64_t(rng() % 64 + 1) : int64_t(rng() % 20000 + 1);
        want.emplace_back(k, int64_t(rng() % uint64_t(size - n + 1)), n);
    }
    want.emplace_back(0, int64_t(bytes[0].size()) - 10, 10);
    want.emplace_back(1, int64_t(bytes[1].size()) - 5000, 5000);
    for (const SpanReaderLimits limits : {SpanReaderLimits{16 << 10, 4 << 10, 3}, SpanReaderLimits{}}) {
        std::vector<std::vector<uint8_t>> got(want.size());
        std::vector<ByteRange> ranges;
        for (size_t i = 0; i < want.size(); ++i) {
            const auto [k, off, n] = want[i];
            got[i].assign(size_t(n), 0);
            ranges.push_back({&files[k], off, n, got[i].data()});
        }
        SpanReader reader(limits);
        reader.read(ranges);
        reader.read(ranges); // its staging reused
        for (size_t i = 0; i < want.size(); ++i) {
            const auto [k, off, n] = want[i];
            EXPECT_EQ(std::memcmp(got[i].data(), bytes[k].data() + off, size_t(n)), 0) << k << ": " << off << "+" << n;
        }
    }
    std::vector<uint8_t> past(16);
    SpanReader reader;
    EXPECT_THROW(reader.read({{&files[0], int64_t(bytes[0].size()) - 8, 16, past.data()}}), waste::Error);
}
