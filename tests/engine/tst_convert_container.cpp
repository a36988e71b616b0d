// The converter end to end, in process: mktiny --hf -> convert equals mktiny --container
// byte for byte; thread count does not change the bytes; the container's trunk and
// expert records decode back to the source weights within the quantisation error;
// interrupted runs (disk full, cancel) resume to the same bytes; --reclaim deletes
// finished shards; hostile safetensors headers are refused.
#include "convert/expert_quality.hpp"
#include "convert/converter.hpp"
#include "convert/expert_encoder.hpp"
#include "convert/grouped_quant.hpp"
#include "format/codebooks.hpp"
#include "format/crc32.hpp"
#include "format/f16.hpp"
#include "convert/safetensors.hpp"
#include "convert/tiny_model.hpp"
#include "convert/vq.hpp"

#include "test_files.hpp"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

namespace fs = std::filesystem;
using namespace waste::convert;
using namespace waste::format;

namespace {

// Every regular file of a directory -> its bytes (names starting with '.' skipped).
std::map<std::string, std::string> tree(const std::string &dir) {
    std::map<std::string, std::string> m;
    for (const auto &e : fs::directory_iterator(dir))
        if (e.is_regular_file() && e.path().filename().string()[0] != '.')
            m[e.path().filename().string()] = slurp(e.path().string());
    return m;
}

void expectSameTree(const std::string &a, const std::string &b) {
    const auto ta = tree(a), tb = tree(b);
    ASSERT_EQ(ta.size(), tb.size());
    for (const auto &[name, bytes] : ta) {
        ASSERT_TRUE(tb.count(name)) << name;
        EXPECT_TRUE(bytes == tb.at(name)) << name << " differs between " << a << " and " << b;
    }
}

// One shared tiny HF model and its reference conversion (built once per process).
struct Shared {
    std::string hf, ref;
    Shared() {
        hf = freshOutputDir("convert", "shared-hf");
        waste::makeTinyHf(hf, {});
        ref = freshOutputDir("convert", "shared-ref");
        waste::ConvertOptions o;
        o.jobs = 2;
        waste::convertModel(hf, ref, o);
    }
};
const Shared &shared() {
    static Shared s;
    return s;
}

double relError(const std::vector<float> &a, const std::vector<float> &b) {
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
        den += double(a[i]) * a[i];
    }
    return std::sqrt(num / den);
}

} // namespace

TEST(ConvertContainer, HfLayoutHasKimiLinearShape) {
    const auto &s = shared();
    for (const char *f : {"config.json", "model.safetensors.index.json", "tiktoken.model", "tokenizer_config.json"})
        EXPECT_TRUE(fs::exists(s.hf + "/" + f)) << f;
    const auto index = nlohmann::json::parse(slurp(s.hf + "/model.safetensors.index.json"));
    std::set<std::string> shards;
    for (auto it = index["weight_map"].begin(); it != index["weight_map"].end(); ++it) shards.insert(it.value().get<std::string>());
    EXPECT_GE(shards.size(), 3u);
    const std::string last = "model-0000" + std::to_string(shards.size()) + "-of-0000" + std::to_string(shards.size()) + ".safetensors";
    EXPECT_TRUE(shards.count("model-00001-of-0000" + std::to_string(shards.size()) + ".safetensors"));
    EXPECT_TRUE(shards.count(last));
    for (const auto &f : shards) EXPECT_TRUE(fs::exists(s.hf + "/" + f)) << f;
    HfDirectorySource src(s.hf);
    const auto cfg = nlohmann::json::parse(src.configText());
    EXPECT_EQ(cfg["model_type"], "kimi_linear");
    EXPECT_EQ(src.info("model.layers.0.mlp.gate_proj.weight").shape, (std::vector<int64_t>{512, 256}));
    EXPECT_EQ(src.info("model.layers.1.self_attn.A_log").shape, (std::vector<int64_t>{1, 1, 4, 1}));
    EXPECT_EQ(src.info("model.layers.2.self_attn.kv_a_proj_with_mqa.weight").shape, (std::vector<int64_t>{80, 256}));
    EXPECT_EQ(src.info("model.layers.3.block_sparse_moe.experts.7.w2.weight").shape, (std::vector<int64_t>{256, 128}));
    EXPECT_EQ(src.info("lm_head.weight").dtype, DType::BF16);
}

TEST(ConvertContainer, HfThenConvertEqualsDirectContainer) {
    const auto &s = shared();
    const std::string direct = freshOutputDir("convert", "direct");
    waste::TinyModelOptions o;
    o.jobs = 1;
    waste::makeTinyContainer(direct, o);
    expectSameTree(s.ref, direct);
}

TEST(ConvertContainer, ManifestRecordsAndTrunkDecodeToTheSource) {
    const auto &s = shared();
    const auto m = nlohmann::json::parse(slurp(s.ref + "/manifest.json"));
    EXPECT_EQ(m["format_version"], 0);
    EXPECT_EQ(m["tensor_prefix"], "");
    EXPECT_EQ(m["expert_quant"]["index_block"], 64);
    EXPECT_EQ(m["layers"].size(), 3u);
    HfDirectorySource src(s.hf);
    const std::string trunk = slurp(s.ref + "/trunk.bin");
    int counts[4] = {0, 0, 0, 0};
    for (const auto &e : m["trunk"]) {
        const std::string name = e["name"];
        const int fmt = e["fmt"];
        const SourceTensor t = src.info(name);
        std::vector<float> want(static_cast<size_t>(t.elements()));
        src.readRows(t, 0, t.rows(), want.data());
        std::vector<float> got(want.size());
        const int64_t off = e["off"];
        ASSERT_LE(off + e["bytes"].get<int64_t>(), static_cast<int64_t>(trunk.size()));
        if (fmt == 0) {
            std::memcpy(got.data(), trunk.data() + off, got.size() * 4);
            EXPECT_EQ(got, want) << name;
        } else {
            const int64_t n = e["shape"].back(), rows = t.elements() / n;
            const int64_t soff = e["scale_off"];
            std::vector<uint16_t> sc(static_cast<size_t>(rows * trunkGroups(n, kTrunkGroup)));
            std::memcpy(sc.data(), trunk.data() + soff, sc.size() * 2);
            dequantizeGrouped(trunkFormatOf(fmt), reinterpret_cast<const uint8_t *>(trunk.data() + off), sc.data(), rows, n, got.data());
            EXPECT_LT(relError(want, got), fmt == 2 ? 0.012 : 0.13) << name;
        }
        if (name.find("embed_tokens") != std::string::npos || name == "lm_head.weight") EXPECT_EQ(fmt, 2) << name;
        if (t.shape.size() == 1) EXPECT_EQ(fmt, 0) << name;
        ++counts[fmt == 0 ? 0 : fmt == 2 ? 2 : 3];
    }
    EXPECT_GT(counts[0], 0);
    EXPECT_GT(counts[2], 0);
    EXPECT_GT(counts[3], 0); // the tiny model is wide enough to exercise Q4G

    // Codebooks and records.
    const std::string cbFile = slurp(s.ref + "/codebooks.bin");
    const VqGeometry g;
    const int64_t cbRec = codebookRecordBytes(g.entries, g.dim);
    ASSERT_EQ(static_cast<int64_t>(cbFile.size()), 9 * 3 * cbRec);
    auto book = [&](int id) {
        Codebook b;
        b.half.resize(256 * 8);
        std::memcpy(b.half.data(), cbFile.data() + id * cbRec + 16, 256 * 8 * 2);
        for (auto h : b.half) b.value.push_back(f16ToFloat(h));
        return b;
    };
    double worst = 0;
    for (auto it = m["layers"].begin(); it != m["layers"].end(); ++it) {
        const int layer = std::stoi(it.key());
        const std::string bank = slurp(s.ref + "/" + it.value()["file"].get<std::string>());
        const int E = it.value()["experts"];
        const int64_t R = it.value()["bytes"].get<int64_t>() / E;
        ASSERT_EQ(R % 4096, 0);
        ASSERT_EQ(static_cast<int64_t>(bank.size()), R * E);
        const int base = it.value()["codebook_base"];
        for (int e = 0; e < E; ++e) {
            const auto *r = reinterpret_cast<const uint8_t *>(bank.data() + e * R);
            uint32_t h32[12];
            uint16_t h16[24];
            std::memcpy(h32, r, 48);
            std::memcpy(h16, r, 48);
            ASSERT_EQ(h32[0], kExpertMagic);
            ASSERT_EQ(h16[2], layer);
            ASSERT_EQ(h16[3], e);
            ASSERT_EQ(h16[5], base);
            ASSERT_EQ(int64_t(h32[4]) * 4096, R);
            const int64_t used = h32[8] + 2 * (128 + 128 + 256);
            ASSERT_EQ(h32[9], crc32(r + 48, static_cast<size_t>(used - 48)));
            const char *kinds[3] = {"w1", "w3", "w2"};
            const uint32_t offs[3] = {h32[5], h32[6], h32[7]};
            const auto *scales = reinterpret_cast<const uint16_t *>(r + h32[8]);
            const int64_t scaleAt[3] = {0, 128, 256};
            for (int k = 0; k < 3; ++k) {
                const SourceTensor t = src.info("model.layers." + std::to_string(layer) + ".block_sparse_moe.experts." +
                                                std::to_string(e) + "." + kinds[k] + ".weight");
                std::vector<float> want(static_cast<size_t>(t.elements())), got(want.size());
                src.readRows(t, 0, t.rows(), want.data());
                std::vector<Codebook> books;
                for (int st = 0; st < 3; ++st) books.push_back(book(base + k * 3 + st));
                vqDecodeMatrix(r + offs[k], scales + scaleAt[k], t.shape[0], t.shape[1], books, g, got.data());
                worst = std::max(worst, relError(want, got));
            }
        }
    }
    std::printf("[quality] tiny model, worst expert matrix VQ3R error: %.2f %%\n", 100 * worst);
    EXPECT_LT(worst, 0.30); // the reference's verify threshold
    // The Convert page quotes this figure (convert/expert_quality.hpp).
    EXPECT_NEAR(worst, waste::convert::quality::kVq3rOnBf16, waste::convert::quality::kSlack);
    const std::string specials = slurp(s.ref + "/specials.json");
    EXPECT_NE(specials.find("<|im_end|>"), std::string::npos);
    EXPECT_EQ(slurp(s.ref + "/tokenizer.model"), slurp(s.hf + "/tiktoken.model"));
}

TEST(ConvertContainer, OneAndTwoThreadsGiveTheSameBytes) {
    const auto &s = shared();
    const std::string one = freshOutputDir("convert", "one-thread");
    waste::ConvertOptions o;
    o.jobs = 1;
    waste::convertModel(s.hf, one, o);
    expectSameTree(s.ref, one);
}

TEST(ConvertContainer, DiskFullLeavesAResumableStateAndAClearMessage) {
    const auto &s = shared();
    const int64_t total = fs::file_size(s.ref + "/trunk.bin");
    for (int64_t limit : {int64_t(1000), total + 5000, total + 200000}) {
        const std::string out = freshOutputDir("convert", "diskfull");
        waste::ConvertOptions o;
        o.jobs = 2;
        o.failAfterBytes = limit;
        try {
            waste::convertModel(s.hf, out, o);
            FAIL() << "no disk-full error at limit " << limit;
        } catch (const waste::Error &e) {
            EXPECT_EQ(e.code(), waste::ErrorCode::Io);
            const std::string msg = e.what();
            EXPECT_NE(msg.find("disk full"), std::string::npos) << msg;
            EXPECT_NE(msg.find("run the same command again to resume"), std::string::npos) << msg;
        }
        EXPECT_FALSE(fs::exists(out + "/manifest.json"));
        o.failAfterBytes = -1;
        const auto r = waste::convertModel(s.hf, out, o);
        if (limit > total) EXPECT_GT(r.unitsResumed, 0) << limit;
        expectSameTree(s.ref, out);
    }
}

TEST(ConvertContainer, CancelThenResumeGivesTheSameBytes) {
    const auto &s = shared();
    const std::string out = freshOutputDir("convert", "cancel");
    std::atomic<bool> cancel{false};
    int events = 0;
    try {
        waste::convertModel(s.hf, out, {}, [&](const waste::ConvertProgress &p) {
            if (p.phase == waste::ConvertProgress::Phase::Experts && p.layer == 2) cancel = true;
            ++events;
        }, &cancel);
        FAIL() << "not cancelled";
    } catch (const waste::Error &e) {
        EXPECT_EQ(e.code(), waste::ErrorCode::Cancelled);
    }
    EXPECT_GT(events, 0);
    const auto plan = waste::planConversion(s.hf, out);
    EXPECT_EQ(plan.unitsDone, 3); // globals, layer 0, layer 1
    EXPECT_LT(plan.remainingOutputBytes, plan.outputBytes);
    const auto r = waste::convertModel(s.hf, out);
    EXPECT_EQ(r.unitsResumed, 3);
    expectSameTree(s.ref, out);
    // A second run over a finished container does nothing.
    EXPECT_TRUE(waste::convertModel(s.hf, out).plan.alreadyComplete);
}

TEST(ConvertContainer, DifferentOptionsRefuseToMixWithAnUnfinishedRun) {
    const auto &s = shared();
    const std::string out = freshOutputDir("convert", "mix");
    std::atomic<bool> cancel{false};
    EXPECT_THROW(waste::convertModel(s.hf, out, {}, [&](const waste::ConvertProgress &p) {
                     if (p.layer == 1) cancel = true;
                 }, &cancel),
                 waste::Error);
    waste::ConvertOptions o8;
    o8.trunkBits = 8;
    EXPECT_THROW(waste::convertModel(s.hf, out, o8), waste::Error);
}

TEST(ConvertContainer, ReclaimDeletesFinishedShards) {
    const auto &s = shared();
    const std::string hf = freshOutputDir("convert", "reclaim-src");
    for (const auto &e : fs::directory_iterator(s.hf)) fs::copy_file(e.path(), hf + "/" + e.path().filename().string());
    const std::string out = freshOutputDir("convert", "reclaim-out");
    waste::ConvertOptions o;
    o.reclaim = true;
    const auto r = waste::convertModel(hf, out, o);
    int shards = 0;
    for (const auto &e : fs::directory_iterator(s.hf)) shards += e.path().extension() == ".safetensors";
    EXPECT_EQ(r.shardsReclaimed, shards);
    for (const auto &e : fs::directory_iterator(hf)) EXPECT_NE(e.path().extension(), ".safetensors");
    expectSameTree(s.ref, out);
}

TEST(ConvertContainer, TrunkBits8MakesEveryMatrixQ8G) {
    const std::string out = freshOutputDir("convert", "bits8");
    waste::TinyModelOptions o;
    o.trunkBits = 8;
    waste::makeTinyContainer(out, o);
    const auto m = nlohmann::json::parse(slurp(out + "/manifest.json"));
    for (const auto &e : m["trunk"]) EXPECT_NE(e["fmt"], 3) << e["name"];
}

TEST(ConvertSafetensors, RefusesHostileHeaders) {
    const std::string dir = freshOutputDir("convert", "hostile");
    auto write = [&](const std::string &name, const std::string &header, size_t dataBytes) {
        std::string f(8, '\0');
        const uint64_t n = header.size();
        std::memcpy(f.data(), &n, 8);
        f += header;
        f.append(dataBytes, '\0');
        std::ofstream(dir + "/" + name, std::ios::binary) << f;
        return dir + "/" + name;
    };
    EXPECT_NO_THROW(SafetensorsFile(write("ok.safetensors", R"({"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]}})", 8)));
    const char *bad[] = {
        R"({"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,16]}})",                  // past the end
        R"({"a":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,8]}})",                   // size mismatch
        R"({"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[2],"data_offsets":[4,8]}})", // overlap
        R"({"a":{"dtype":"BF16","shape":[-2,2],"data_offsets":[0,8]}})",                  // negative dim
        R"({"a":{"dtype":"BF16","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,8]}})", // overflow
        R"({"a":{"dtype":"XYZ","shape":[2,2],"data_offsets":[0,8]}})",                    // unknown dtype
        R"({"a":[1,2,3]})",                                                               // wrong type
        R"({"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]})",                   // truncated JSON
    };
    int i = 0;
    for (const char *h : bad) {
        const std::string p = write("bad" + std::to_string(i++) + ".safetensors", h, 8);
        EXPECT_THROW(SafetensorsFile{p}, waste::Error) << h;
    }
    // A header length beyond the file.
    std::string f(8, '\0');
    const uint64_t huge = 1ull << 40;
    std::memcpy(f.data(), &huge, 8);
    std::ofstream(dir + "/len.safetensors", std::ios::binary) << f << "{}";
    EXPECT_THROW(SafetensorsFile{dir + "/len.safetensors"}, waste::Error);
}

TEST(ConvertTokenizer, TinyVocabularyHasAllBytesAndMerges) {
    const auto v = learnTinyVocabulary(240);
    EXPECT_EQ(v.tokens.size(), 496u);
    std::map<std::string, int> seen;
    for (size_t i = 0; i < v.tokens.size(); ++i) EXPECT_TRUE(seen.emplace(v.tokens[i], int(i)).second) << "duplicate token " << i;
    for (int b = 0; b < 256; ++b) EXPECT_EQ(v.tokens[b], std::string(1, char(b)));
    EXPECT_TRUE(seen.count(" the"));
    EXPECT_EQ(v.rankFile.substr(0, 7), "AA== 0\n");
}
