// Our converter's output read by the engine's own container code (an independent
// reader): every manifest entry loads, trunk rows decode to the source weights within
// the quantisation error, every expert record passes the engine's header and crc32
// checks, and the model opens, tokenizes, round-trips text and evaluates.
#include "convert/model_source.hpp"
#include "format/codebooks.hpp"
#include "format/expert_bank.hpp"
#include "format/expert_record.hpp"
#include "format/manifest.hpp"
#include "format/trunk.hpp"
#include "model/vision_runtime.hpp"

#include "test_files.hpp"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace fs = std::filesystem;

namespace {

struct Converted {
    std::string hf, out;
    Converted() {
        const std::string base = std::string(WASTE_TEST_OUTPUT_DIR) + "/convert-roundtrip";
        fs::remove_all(base);
        hf = base + "/hf";
        out = base + "/out";
        waste::TinyModelOptions t;
        t.seed = 5;
        waste::makeTinyHf(hf, t);
        waste::convertModel(hf, out);
    }
};
const Converted &converted() {
    static Converted c;
    return c;
}

} // namespace

TEST(ConvertRoundTrip, EngineReaderDecodesTrunkToTheSource) {
    const auto &c = converted();
    const auto manifest = waste::format::parseManifest(slurp(c.out + "/manifest.json"), "manifest.json");
    EXPECT_EQ(manifest.config.layers, 4);
    EXPECT_EQ(manifest.config.experts, 8);
    EXPECT_EQ(manifest.banks.size(), 3u);
    const waste::format::Trunk trunk(c.out + "/trunk.bin", manifest);
    const waste::convert::HfDirectorySource src(c.hf);
    int quantized = 0;
    for (const auto &e : manifest.trunk) {
        const auto t = trunk.load(e.name);
        ASSERT_TRUE(t) << e.name;
        const auto st = src.info(e.name);
        ASSERT_EQ(t->rows * t->cols, st.elements()) << e.name;
        std::vector<float> want(static_cast<size_t>(st.elements())), row(static_cast<size_t>(t->cols));
        src.readRows(st, 0, st.rows(), want.data());
        double num = 0, den = 0;
        for (int64_t r = 0; r < t->rows; ++r) {
            t->readRow(r, row.data());
            for (int64_t i = 0; i < t->cols; ++i) {
                const double w = want[static_cast<size_t>(r * t->cols + i)];
                num += (row[static_cast<size_t>(i)] - w) * (row[static_cast<size_t>(i)] - w);
                den += w * w;
            }
        }
        const double err = std::sqrt(num / den);
        if (e.format == waste::format::TrunkFormat::F32) EXPECT_EQ(err, 0.0) << e.name;
        else {
            ++quantized;
            EXPECT_LT(err, e.format == waste::format::TrunkFormat::Q8G ? 0.012 : 0.13) << e.name;
        }
    }
    EXPECT_GT(quantized, 5);
}

TEST(ConvertRoundTrip, EveryRecordPassesTheEngineChecksWithCrc) {
    const auto &c = converted();
    const auto manifest = waste::format::parseManifest(slurp(c.out + "/manifest.json"), "manifest.json");
    const waste::format::Codebooks books(c.out + "/codebooks.bin", manifest.quant);
    EXPECT_EQ(books.count(), 27);
    for (const auto &[layer, entry] : manifest.banks) {
        waste::format::RecordShape shape;
        shape.layer = layer;
        shape.recordBytes = entry.recordBytes;
        shape.inter = manifest.config.moeInter;
        shape.width = manifest.config.expertWidth();
        shape.stages = manifest.quant.stages;
        shape.indexBits = manifest.quant.indexBits;
        shape.codebooks = books.count();
        const waste::format::ExpertBank bank(c.out, entry, shape);
        std::vector<uint8_t> rec(static_cast<size_t>(entry.recordBytes));
        for (int e = 0; e < entry.experts; ++e) EXPECT_NO_THROW(bank.read(e, rec.data(), true)) << layer << "/" << e;
    }
}

TEST(ConvertRoundTrip, ModelOpensTokenizesAndEvaluates) {
    const auto &c = converted();
    waste::OpenOptions o;
    o.directIo = false;
    auto model = waste::Model::open(c.out, o);
    const auto &info = model->info();
    EXPECT_EQ(info.layers, 4);
    EXPECT_EQ(info.experts, 8);
    EXPECT_EQ(info.vocab, 512);
    const std::string text = "Hello, world! The quick brown fox jumps over the lazy dog. Ünïcödé 2024";
    const auto ids = model->tokenize(text);
    EXPECT_LT(ids.size(), text.size() * 2 / 3); // merges are used
    EXPECT_EQ(model->detokenize(ids), text);
    const auto logits = model->eval(ids);
    ASSERT_EQ(logits.size(), 512u);
    float lo = logits[0], hi = logits[0];
    for (float v : logits) {
        ASSERT_TRUE(std::isfinite(v));
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    EXPECT_GT(hi - lo, 1e-3f);
    model->resetState();
    EXPECT_EQ(model->eval(ids), logits); // same container, same logits
    // The direct container (mktiny --container) gives the same logits bit for bit.
    const std::string direct = fs::path(c.out).parent_path().string() + "/direct";
    waste::TinyModelOptions t;
    t.seed = 5;
    waste::makeTinyContainer(direct, t);
    auto model2 = waste::Model::open(direct, o);
    EXPECT_EQ(model2->eval(ids), logits);
}

TEST(ConvertRoundTrip, TinyVisionTowerLoadsInTheEngineAndEncodesAnImage) {
    const std::string base = std::string(WASTE_TEST_OUTPUT_DIR) + "/convert-roundtrip-vision";
    fs::remove_all(base);
    const std::string hf = base + "/hf", out = base + "/out";
    waste::TinyModelOptions t;
    t.vision = true;
    waste::makeTinyHf(hf, t);
    EXPECT_TRUE(fs::exists(hf + "/preprocessor_config.json"));
    waste::convertModel(hf, out);
    ASSERT_TRUE(fs::exists(out + "/vision.json"));
    const auto manifest = waste::format::parseManifest(slurp(out + "/manifest.json"), "manifest.json");
    ASSERT_TRUE(manifest.find("vision_tower.patch_embed.proj.weight"));
    ASSERT_TRUE(manifest.find("mm_projector.proj.2.weight"));
    waste::vision::VisionRuntime rt(out, manifest.config.hidden, manifest.config.vocab, 2);
    ASSERT_TRUE(rt.available());
    const int positions = rt.addImage(std::string(WASTE_FIXTURES_DIR) + "/vision-container/img_a.png");
    EXPECT_GT(positions, 0);
    std::vector<float> row(static_cast<size_t>(manifest.config.hidden));
    const int pad = 496 + 13; // <|media_pad|>
    ASSERT_TRUE(rt.rows().take(pad, row.data()));
    for (float v : row) ASSERT_TRUE(std::isfinite(v));
    // The text path of a vision container is the plain tiny model's.
    waste::OpenOptions o;
    o.directIo = false;
    auto model = waste::Model::open(out, o);
    EXPECT_EQ(model->tokenize("<|media_pad|>", true), std::vector<int32_t>{pad});
}
