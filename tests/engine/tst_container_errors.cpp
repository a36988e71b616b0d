// Damaged containers and bad input are refused with a clean one-line waste::Error:
// missing files, a truncated bank, a record from the wrong layer, a corrupt manifest,
// an unknown format version, a token id out of range, a failed checksum.
#include <gtest/gtest.h>

#include "waste/waste.hpp"

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace {

const fs::path kRef = fs::path(WASTE_FIXTURES_DIR) / "reference-container" / "r3.waste";

fs::path freshCopy(const std::string &name)
{
    const fs::path dst = fs::path(WASTE_TEST_OUTPUT_DIR) / ("errors-" + name);
    fs::remove_all(dst);
    fs::copy(kRef, dst);
    return dst;
}

std::string readAll(const fs::path &p)
{
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), {});
}

void writeAll(const fs::path &p, const std::string &s) { std::ofstream(p, std::ios::binary | std::ios::trunc) << s; }

// Runs f, expects a waste::Error with `code` whose message is one line containing `needle`.
template <typename F> void expectError(F f, waste::ErrorCode code, const std::string &needle)
{
    try {
        f();
        ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
    } catch (const waste::Error &e) {
        const std::string msg = e.what();
        EXPECT_EQ(static_cast<int>(e.code()), static_cast<int>(code)) << msg;
        EXPECT_NE(msg.find(needle), std::string::npos) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
}

const std::vector<int32_t> kHello{72, 101, 108, 108, 111, 280, 258};

} // namespace

TEST(ContainerErrors, MissingDirectoryAndFiles)
{
    expectError([] { waste::Model::open("/nonexistent/model.waste"); }, waste::ErrorCode::Io, "/nonexistent/model.waste");
    for (const char *file : {"manifest.json", "trunk.bin", "codebooks.bin", "experts-L2.bin"}) {
        const fs::path dir = freshCopy(std::string("missing-") + file);
        fs::remove(dir / file);
        expectError([&] { waste::Model::open(dir.string()); }, waste::ErrorCode::Io, file);
    }
}

TEST(ContainerErrors, TruncatedFiles)
{
    const fs::path dir = freshCopy("truncated-bank");
    fs::resize_file(dir / "experts-L2.bin", 40000);
    expectError([&] { waste::Model::open(dir.string()); }, waste::ErrorCode::Format, "experts-L2.bin");

    const fs::path dir2 = freshCopy("truncated-trunk");
    fs::resize_file(dir2 / "trunk.bin", 300000);
    expectError([&] { waste::Model::open(dir2.string()); }, waste::ErrorCode::Format, "trunk.bin");
}

TEST(ContainerErrors, RecordFromTheWrongLayer)
{
    const fs::path dir = freshCopy("wrong-layer");
    fs::copy_file(dir / "experts-L1.bin", dir / "experts-L2.bin", fs::copy_options::overwrite_existing);
    auto m = waste::Model::open(dir.string());
    expectError([&] { m->eval(kHello); }, waste::ErrorCode::Format, "header says layer 1");
}

TEST(ContainerErrors, RecordOfTheWrongExpert)
{
    const fs::path dir = freshCopy("wrong-expert");
    std::string bank = readAll(dir / "experts-L3.bin");
    const size_t rec = bank.size() / 8;
    for (size_t e = 0; e < 8; ++e) // every record claims to be expert 0
        bank[e * rec + 6] = 0, bank[e * rec + 7] = 0;
    writeAll(dir / "experts-L3.bin", bank);
    auto m = waste::Model::open(dir.string());
    expectError([&] { m->eval(kHello); }, waste::ErrorCode::Format, "header says expert 0");
}

TEST(ContainerErrors, CorruptManifest)
{
    const fs::path dir = freshCopy("corrupt-manifest");
    const std::string good = readAll(dir / "manifest.json");
    writeAll(dir / "manifest.json", good.substr(0, good.size() / 2));
    expectError([&] { waste::Model::open(dir.string()); }, waste::ErrorCode::Format, "manifest.json");

    std::string v1 = good;
    v1.replace(v1.find("\"format_version\": 0"), 19, "\"format_version\": 1");
    writeAll(dir / "manifest.json", v1);
    expectError([&] { waste::Model::open(dir.string()); }, waste::ErrorCode::Unsupported, "format_version");

    std::string big = good;
    big.replace(big.find("\"hidden_size\": 128"), 18, "\"hidden_size\": 1e12");
    writeAll(dir / "manifest.json", big);
    expectError([&] { waste::Model::open(dir.string()); }, waste::ErrorCode::Format, "hidden_size");
}

TEST(ContainerErrors, TokenOutOfRange)
{
    auto m = waste::Model::open(kRef.string());
    expectError([&] { m->eval(std::vector<int32_t>{1, 316}); }, waste::ErrorCode::Argument, "316");
    expectError([&] { m->eval(std::vector<int32_t>{-1}); }, waste::ErrorCode::Argument, "-1");
    EXPECT_EQ(m->position(), 0); // refused before anything ran
}

TEST(ContainerErrors, ChecksumMismatchWithVerify)
{
    const fs::path dir = freshCopy("bad-crc");
    std::string bank = readAll(dir / "experts-L1.bin");
    const size_t rec = bank.size() / 8;
    for (size_t e = 0; e < 8; ++e)
        bank[e * rec + 100] ^= 0x01; // one payload bit per record
    writeAll(dir / "experts-L1.bin", bank);
    {
        auto plain = waste::Model::open(dir.string());
        EXPECT_NO_THROW(plain->eval(kHello)); // without --verify the flip goes unnoticed
    }
    waste::OpenOptions opt;
    opt.verifyRecords = true;
    auto checked = waste::Model::open(dir.string(), opt);
    expectError([&] { checked->eval(kHello); }, waste::ErrorCode::Format, "checksum mismatch");
    // The untouched container passes verification.
    auto good = waste::Model::open(kRef.string(), opt);
    EXPECT_NO_THROW(good->eval(kHello));
}

TEST(ContainerErrors, BudgetBelowFloor)
{
    waste::OpenOptions opt;
    opt.ramBudget = 1 << 20;
    expectError([&] { waste::Model::open(kRef.string(), opt); }, waste::ErrorCode::RamBudget, "floor");
}
