// Structure-aware fuzzing of a copy of r3.waste: manifest fields and expert record
// headers are mutated, and every open/eval must either work or throw waste::Error —
// never crash, never throw anything else. Built under ASan/UBSan this also proves the
// reads stay in bounds. WASTE_FUZZ_SEED (added to the fixed seeds) and WASTE_FUZZ_ROUNDS
// (a multiplier of the iterations) explore further, e.g. in a sanitizer build:
//   WASTE_FUZZ_SEED=3 WASTE_FUZZ_ROUNDS=4 build-sanitize/tests/engine/tst_container_fuzz
#include <gtest/gtest.h>

#include "waste/waste.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kRef = fs::path(WASTE_FIXTURES_DIR) / "reference-container" / "r3.waste";

std::string readAll(const fs::path &p)
{
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), {});
}

void writeAll(const fs::path &p, const std::string &s) { std::ofstream(p, std::ios::binary | std::ios::trunc) << s; }

json interestingValue(std::mt19937 &rng)
{
    static const std::vector<json> values = {
        json(-1), json(0), json(1), json(2), json(3), json(4), json(5), json(7), json(8), json(9), json(31),
        json(63), json(64), json(65), json(127), json(128), json(129), json(255), json(256), json(4096),
        json(65535), json(65536), json(1 << 20), json(1e9), json(4e9), json(1e18), json(-1e18), json(0.5),
        json(-0.5), json(nullptr), json(true), json(false), json("x"), json::array(), json::object(),
        json::array({1, 1, 1}), json::array({316, 128}), json::array({0}), json::array({-5, 3})};
    return values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng)];
}

// Every (object, key) slot of the manifest, depth first.
void collectSlots(json &j, std::vector<std::pair<json *, std::string>> &slots, std::vector<json *> &arrays)
{
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) {
            slots.emplace_back(&j, it.key());
            collectSlots(it.value(), slots, arrays);
        }
    } else if (j.is_array()) {
        arrays.push_back(&j);
        for (auto &v : j)
            collectSlots(v, slots, arrays);
    }
}

// Returns normally or with waste::Error; anything else fails the test.
void openAndEval(const fs::path &dir, const std::string &what)
{
    try {
        waste::OpenOptions opt;
        opt.ctxTokens = 64;
        opt.verifyRecords = (what.size() % 2) == 0;
        auto m = waste::Model::open(dir.string(), opt);
        m->eval(std::vector<int32_t>{72, 101, 108});
    } catch (const waste::Error &e) {
        const std::string msg = e.what();
        EXPECT_FALSE(msg.empty()) << what;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << what << ": " << msg;
    } catch (const std::exception &e) {
        ADD_FAILURE() << what << ": escaped as a non-waste exception: " << e.what();
    }
}

uint32_t seed(uint32_t fixed)
{
    const char *env = std::getenv("WASTE_FUZZ_SEED");
    return fixed + (env ? static_cast<uint32_t>(std::strtoul(env, nullptr, 10)) : 0u);
}

int rounds(int fixed)
{
    const char *env = std::getenv("WASTE_FUZZ_ROUNDS");
    return fixed * (env ? std::max(1, std::atoi(env)) : 1);
}

fs::path workCopy(const std::string &name)
{
    const fs::path dst = fs::path(WASTE_TEST_OUTPUT_DIR) / name;
    fs::remove_all(dst);
    fs::copy(kRef, dst);
    return dst;
}

} // namespace

TEST(ContainerFuzz, ManifestMutationsAreRefusedCleanly)
{
    const fs::path dir = workCopy("fuzz-manifest");
    const json original = json::parse(readAll(kRef / "manifest.json"));
    std::mt19937 rng(seed(20261129));
    for (int iter = 0; iter < rounds(250); ++iter) {
        json m = original;
        const int edits = std::uniform_int_distribution<int>(1, 3)(rng);
        std::string what = "iteration " + std::to_string(iter) + ":";
        for (int e = 0; e < edits; ++e) {
            std::vector<std::pair<json *, std::string>> slots;
            std::vector<json *> arrays;
            collectSlots(m, slots, arrays);
            const auto &[obj, key] = slots[std::uniform_int_distribution<size_t>(0, slots.size() - 1)(rng)];
            const int op = std::uniform_int_distribution<int>(0, 9)(rng);
            if (op == 0) {
                obj->erase(key);
                what += " erase " + key;
            } else if (op == 1 && !arrays.empty()) {
                json *arr = arrays[std::uniform_int_distribution<size_t>(0, arrays.size() - 1)(rng)];
                if (!arr->empty())
                    arr->erase(arr->begin() + std::uniform_int_distribution<long>(0, long(arr->size()) - 1)(rng));
                what += " shrink array";
            } else {
                json v = interestingValue(rng);
                what += " " + key + "=" + v.dump();
                (*obj)[key] = std::move(v);
            }
        }
        writeAll(dir / "manifest.json", m.dump(1));
        openAndEval(dir, what);
    }
    // Raw byte damage to the text as well.
    const std::string text = readAll(kRef / "manifest.json");
    for (int iter = 0; iter < rounds(60); ++iter) {
        std::string t = text;
        const size_t at = std::uniform_int_distribution<size_t>(0, t.size() - 1)(rng);
        t[at] = static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
        writeAll(dir / "manifest.json", t);
        openAndEval(dir, "byte " + std::to_string(at));
    }
}

TEST(ContainerFuzz, RecordHeaderMutationsAreRefusedCleanly)
{
    const fs::path dir = workCopy("fuzz-records");
    const std::string banks[] = {"experts-L1.bin", "experts-L2.bin", "experts-L3.bin"};
    std::mt19937 rng(seed(7));
    const uint32_t words[] = {0, 1, 47, 48, 49, 4095, 4096, 12288, 12289, 0xffff, 0x10000, 0x7fffffff, 0xffffffffu};
    for (int iter = 0; iter < rounds(250); ++iter) {
        const std::string &bank = banks[iter % 3];
        std::string bytes = readAll(kRef / bank);
        const size_t rec = bytes.size() / 8;
        std::string what = bank + " iteration " + std::to_string(iter) + ":";
        const int edits = std::uniform_int_distribution<int>(1, 3)(rng);
        for (int e = 0; e < edits; ++e) {
            const size_t r = std::uniform_int_distribution<size_t>(0, 7)(rng);
            const int op = std::uniform_int_distribution<int>(0, 3)(rng);
            if (op == 0) { // one random header byte
                const size_t at = std::uniform_int_distribution<size_t>(0, 47)(rng);
                bytes[r * rec + at] = static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
                what += " byte " + std::to_string(at);
            } else if (op == 1) { // an aligned 32-bit field set to an edge value
                const size_t at = 4 * std::uniform_int_distribution<size_t>(0, 11)(rng);
                const uint32_t v = words[std::uniform_int_distribution<size_t>(0, std::size(words) - 1)(rng)];
                for (int b = 0; b < 4; ++b)
                    bytes[r * rec + at + b] = static_cast<char>((v >> (8 * b)) & 0xff);
                what += " word " + std::to_string(at) + "=" + std::to_string(v);
            } else if (op == 2) { // payload bytes (indices, scales) are data: any value must be safe
                const size_t at = std::uniform_int_distribution<size_t>(48, rec - 1)(rng);
                bytes[r * rec + at] = static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
                what += " payload";
            } else { // truncate the bank
                bytes.resize(std::uniform_int_distribution<size_t>(0, bytes.size())(rng));
                what += " truncate";
            }
        }
        writeAll(dir / bank, bytes);
        openAndEval(dir, what);
        writeAll(dir / bank, readAll(kRef / bank));
    }
}
