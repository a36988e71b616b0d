// The tiny Kimi K3 through the real converter: `mktiny --k3 --hf` writes K3's release
// layout (multimodal wrapper config, `language_model.` prefix, MXFP4 experts as
// `_packed`/`_scale` U8 pairs); the safetensors reader decodes those pairs exactly (a
// float64 decoder written from the OCP definition is the reference, on the tiny model's
// experts and on synthetic pairs covering every code and a wide range of scales); HF +
// convert equals the direct container byte for byte; the container has every K3
// feature the engine reads, and the engine opens it and generates.
#include "convert/expert_quality.hpp"
#include "convert/model_source.hpp"
#include "convert/safetensors.hpp"
#include "convert/expert_encoder.hpp"
#include "format/codebooks.hpp"
#include "format/f16.hpp"
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
#include <random>
#include <set>

namespace fs = std::filesystem;
using namespace waste::convert;
using namespace waste::format;

namespace {

// OCP MX: E2M1 = (-1)^s 2^(e-1) (1 + m/2) for e > 0, (-1)^s m/2 for e = 0; E8M0 = 2^(x-127).
double refE2M1(unsigned code) {
    const unsigned s = code >> 3, e = (code >> 1) & 3, m = code & 1;
    const double mag = e == 0 ? m * 0.5 : std::ldexp(1.0 + m * 0.5, int(e) - 1);
    return s ? -mag : mag;
}

// Row r of a [rows, cols] MXFP4 matrix from its raw bytes, in float64.
std::vector<double> refDecodeRow(const uint8_t *packed, const uint8_t *scales, int64_t r, int64_t cols) {
    std::vector<double> out(static_cast<size_t>(cols));
    const int64_t pRow = cols / 2, sRow = (cols + 31) / 32;
    for (int64_t i = 0; i < cols; ++i) {
        const uint8_t byte = packed[r * pRow + i / 2];
        const unsigned code = (i % 2 == 0) ? (byte & 15u) : (byte >> 4u);
        out[static_cast<size_t>(i)] = refE2M1(code) * std::ldexp(1.0, int(scales[r * sRow + i / 32]) - 127);
    }
    return out;
}

struct Shared {
    std::string hf, ref;
    Shared() {
        hf = freshOutputDir("convert-k3", "hf");
        waste::TinyModelOptions t;
        t.k3 = true;
        waste::makeTinyHf(hf, t);
        ref = freshOutputDir("convert-k3", "ref");
        waste::ConvertOptions o;
        o.jobs = 2;
        o.experts = waste::ExpertEncoding::VQ3R; // these tests are about VQ3R; MXFP4 experts default to native
        waste::convertModel(hf, ref, o);
    }
};
const Shared &shared() {
    static Shared s;
    return s;
}

// Every tensor the shards hold, with the shard that holds it.
std::map<std::string, std::pair<std::string, TensorInfo>> storedTensors(const std::string &dir) {
    std::map<std::string, std::pair<std::string, TensorInfo>> all;
    for (const auto &e : fs::directory_iterator(dir))
        if (e.path().extension() == ".safetensors") {
            SafetensorsFile f(e.path().string());
            for (const auto &t : f.tensors()) all[t.name] = {e.path().string(), t};
        }
    return all;
}

const std::string kExpert = "language_model.model.layers.3.block_sparse_moe.experts.5.";

} // namespace

TEST(ConvertK3, HfLayoutIsTheK3ReleaseLayoutWithMxfp4Experts) {
    const auto &s = shared();
    const auto cfg = nlohmann::json::parse(slurp(s.hf + "/config.json"));
    EXPECT_EQ(cfg["architectures"][0], "KimiK3ForConditionalGeneration");
    ASSERT_TRUE(cfg["text_config"].is_object());
    const auto &t = cfg["text_config"];
    EXPECT_EQ(t["hidden_act"], "situ");
    EXPECT_EQ(t["routed_expert_hidden_size"], 128);
    EXPECT_EQ(t["num_shared_experts"], 2);
    EXPECT_EQ(t["q_lora_rank"], 96);
    EXPECT_EQ(t["attn_res_block_size"], 2);
    EXPECT_EQ(t["linear_attn_config"]["gate_lower_bound"], -5.0);
    EXPECT_TRUE(t["linear_attn_config"].contains("use_full_rank_gate"));
    EXPECT_TRUE(t.contains("mla_use_output_gate"));
    EXPECT_TRUE(t.contains("latent_moe_use_norm"));
    EXPECT_EQ(cfg["quantization_config"]["format"], "mxfp4-pack-quantized");

    const auto stored = storedTensors(s.hf);
    int packed = 0, scales = 0;
    for (const auto &[name, where] : stored) {
        EXPECT_EQ(name.rfind("language_model.", 0), 0u) << name; // no vision tower asked for
        const bool expert = name.find(".experts.") != std::string::npos;
        if (!expert) {
            EXPECT_EQ(where.second.dtypeText, "BF16") << name;
            continue;
        }
        const bool p = name.size() > 7 && name.compare(name.size() - 7, 7, "_packed") == 0;
        const bool sc = name.size() > 6 && name.compare(name.size() - 6, 6, "_scale") == 0;
        EXPECT_TRUE(p || sc) << name << " is an expert weight outside an MXFP4 pair";
        EXPECT_EQ(where.second.dtypeText, "U8") << name;
        packed += p;
        scales += sc;
    }
    EXPECT_EQ(packed, 5 * 16 * 3);
    EXPECT_EQ(scales, packed);
    EXPECT_EQ(stored.at(kExpert + "w1.weight_packed").second.shape, (std::vector<int64_t>{64, 64}));
    EXPECT_EQ(stored.at(kExpert + "w1.weight_scale").second.shape, (std::vector<int64_t>{64, 4}));
    EXPECT_EQ(stored.at(kExpert + "w2.weight_packed").second.shape, (std::vector<int64_t>{128, 32}));
    EXPECT_EQ(stored.at(kExpert + "w2.weight_scale").second.shape, (std::vector<int64_t>{128, 2}));

    // The source shows each pair as one logical MXFP4 tensor.
    HfDirectorySource src(s.hf);
    const SourceTensor w1 = src.info(kExpert + "w1.weight");
    EXPECT_EQ(w1.dtype, DType::MXFP4);
    EXPECT_EQ(w1.shape, (std::vector<int64_t>{64, 128}));
    EXPECT_EQ(w1.bytes, 64 * 64 + 64 * 4);
    const auto names = src.tensorNames();
    EXPECT_TRUE(std::find(names.begin(), names.end(), kExpert + "w1.weight_packed") == names.end());
    EXPECT_TRUE(std::find(names.begin(), names.end(), kExpert + "w2.weight") != names.end());
}

TEST(ConvertK3, ReaderDecodesTheTinyExpertsExactlyLikeFloat64) {
    const auto &s = shared();
    const auto stored = storedTensors(s.hf);
    HfDirectorySource src(s.hf);
    int64_t checked = 0;
    std::set<int> codes, exps;
    for (int layer : {1, 5})
        for (int e : {0, 7, 15})
            for (const char *w : {"w1", "w2", "w3"}) {
                const std::string base = "language_model.model.layers." + std::to_string(layer) +
                                         ".block_sparse_moe.experts." + std::to_string(e) + "." + w + ".weight";
                const auto &[pf, pt] = stored.at(base + "_packed");
                const auto &[sf, st] = stored.at(base + "_scale");
                std::vector<uint8_t> packed(static_cast<size_t>(pt.bytes)), scales(static_cast<size_t>(st.bytes));
                SafetensorsFile(pf).readBytes(pt, 0, pt.bytes, packed.data());
                SafetensorsFile(sf).readBytes(st, 0, st.bytes, scales.data());
                const SourceTensor t = src.info(base);
                std::vector<float> got(static_cast<size_t>(t.elements()));
                src.readRows(t, 0, t.rows(), got.data());
                for (int64_t r = 0; r < t.rows(); ++r) {
                    const auto want = refDecodeRow(packed.data(), scales.data(), r, t.rowLength());
                    for (int64_t i = 0; i < t.rowLength(); ++i)
                        ASSERT_EQ(double(got[static_cast<size_t>(r * t.rowLength() + i)]), want[static_cast<size_t>(i)])
                            << base << " row " << r << " col " << i;
                    checked += t.rowLength();
                }
                for (uint8_t b : packed) codes.insert(b & 15), codes.insert(b >> 4);
                for (uint8_t x : scales) exps.insert(x);
                // A partial read (rows 3..5) decodes the same rows.
                std::vector<float> part(static_cast<size_t>(3 * t.rowLength()));
                src.readRows(t, 3, 3, part.data());
                EXPECT_TRUE(std::equal(part.begin(), part.end(), got.begin() + 3 * t.rowLength())) << base;
            }
    EXPECT_GE(codes.size(), 15u); // every E2M1 code but -0 (the synthetic test below has all 16)
    EXPECT_GE(exps.size(), 3u);
    EXPECT_GT(checked, 100000);
}

TEST(ConvertK3, HfThenConvertEqualsDirectContainer) {
    const auto &s = shared();
    const std::string direct = freshOutputDir("convert-k3", "direct");
    waste::TinyModelOptions o;
    o.k3 = true;
    o.jobs = 1;
    o.expertEncoding = waste::ExpertEncoding::VQ3R;
    waste::makeTinyContainer(direct, o);
    std::set<std::string> files;
    for (const auto &e : fs::directory_iterator(s.ref))
        if (e.path().filename().string()[0] != '.') files.insert(e.path().filename().string());
    std::set<std::string> other;
    for (const auto &e : fs::directory_iterator(direct))
        if (e.path().filename().string()[0] != '.') other.insert(e.path().filename().string());
    ASSERT_EQ(files, other);
    for (const auto &f : files) EXPECT_TRUE(slurp(s.ref + "/" + f) == slurp(direct + "/" + f)) << f;
}

TEST(ConvertK3, ContainerHasEveryK3FeatureAndRecordsDecodeToTheMxfp4Source) {
    const auto &s = shared();
    const auto m = nlohmann::json::parse(slurp(s.ref + "/manifest.json"));
    EXPECT_EQ(m["tensor_prefix"], "language_model.");
    EXPECT_EQ(m["arch"], "kimi_k3");
    const auto &c = m["config"];
    EXPECT_FALSE(c.contains("text_config")); // hoisted
    EXPECT_EQ(c["_outer"]["architectures"][0], "KimiK3ForConditionalGeneration");
    EXPECT_EQ(c["routed_expert_hidden_size"], 128);
    EXPECT_EQ(c["num_experts"], 16);
    EXPECT_EQ(c["num_experts_per_token"], 4);
    std::set<std::string> trunk;
    for (const auto &e : m["trunk"]) {
        const std::string n = e["name"];
        trunk.insert(n);
        EXPECT_EQ(n.find(".experts."), std::string::npos) << n;
        EXPECT_EQ(n.find("_packed"), std::string::npos) << n;
    }
    const std::string p = "language_model.model.";
    for (const std::string n :
         {p + "output_attn_res_norm.weight", p + "output_attn_res_proj.weight", p + "layers.1.self_attention_res_proj.weight",
          p + "layers.1.mlp_res_norm.weight", p + "layers.1.self_attn.g_proj.weight", p + "layers.1.self_attn.A_log",
          p + "layers.2.self_attn.q_a_proj.weight", p + "layers.2.self_attn.q_a_layernorm.weight",
          p + "layers.2.self_attn.q_b_proj.weight", p + "layers.2.self_attn.g_proj.weight",
          p + "layers.2.block_sparse_moe.routed_expert_down_proj.weight", p + "layers.2.block_sparse_moe.routed_expert_norm.weight",
          p + "layers.2.block_sparse_moe.routed_expert_up_proj.weight", std::string("language_model.lm_head.weight")})
        EXPECT_TRUE(trunk.count(n)) << n;
    EXPECT_FALSE(trunk.count(p + "layers.1.self_attn.g_a_proj.weight"));
    EXPECT_FALSE(trunk.count(p + "layers.2.self_attn.q_proj.weight"));
    ASSERT_EQ(m["layers"].size(), 5u);

    // Records are of latent width and decode back to the MXFP4 weights within VQ3R error.
    HfDirectorySource src(s.hf);
    const std::string cbFile = slurp(s.ref + "/codebooks.bin");
    const VqGeometry g;
    const int64_t cbRec = codebookRecordBytes(g.entries, g.dim);
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
        ASSERT_EQ(E, 16);
        const int64_t R = it.value()["bytes"].get<int64_t>() / E;
        const int base = it.value()["codebook_base"];
        for (int e = 0; e < E; e += 5) {
            const auto *r = reinterpret_cast<const uint8_t *>(bank.data() + e * R);
            uint32_t h32[12];
            std::memcpy(h32, r, 48);
            const uint32_t offs[3] = {h32[5], h32[6], h32[7]};
            const auto *scales = reinterpret_cast<const uint16_t *>(r + h32[8]);
            const int64_t scaleAt[3] = {0, 64, 128}; // gate Im, up Im, down Lt
            const char *kinds[3] = {"w1", "w3", "w2"};
            for (int k = 0; k < 3; ++k) {
                const SourceTensor t = src.info("language_model.model.layers." + std::to_string(layer) +
                                                ".block_sparse_moe.experts." + std::to_string(e) + "." + kinds[k] + ".weight");
                ASSERT_EQ(t.shape, k < 2 ? (std::vector<int64_t>{64, 128}) : (std::vector<int64_t>{128, 64}));
                std::vector<float> want(static_cast<size_t>(t.elements())), got(want.size());
                src.readRows(t, 0, t.rows(), want.data());
                std::vector<Codebook> books;
                for (int st = 0; st < 3; ++st) books.push_back(book(base + k * 3 + st));
                vqDecodeMatrix(r + offs[k], scales + scaleAt[k], t.shape[0], t.shape[1], books, g, got.data());
                double num = 0, den = 0;
                for (size_t i = 0; i < want.size(); ++i) {
                    num += (double(want[i]) - got[i]) * (double(want[i]) - got[i]);
                    den += double(want[i]) * want[i];
                }
                worst = std::max(worst, std::sqrt(num / den));
            }
        }
    }
    std::printf("[quality] tiny K3, worst expert matrix VQ3R error against the MXFP4 source: %.2f %%\n", 100 * worst);
    EXPECT_LT(worst, 0.30);
    // The Convert page quotes this figure (convert/expert_quality.hpp).
    EXPECT_NEAR(worst, waste::convert::quality::kVq3rOnMxfp4, waste::convert::quality::kSlack);

    // The engine opens it as K3 and generates.
    auto model = waste::Model::open(s.ref);
    EXPECT_EQ(model->info().arch, "kimi-k3");
    EXPECT_EQ(model->info().experts, 16);
    EXPECT_EQ(model->info().topK, 4);
    waste::GenParams gp;
    gp.maxTokens = 8;
    gp.temperature = 0;
    int n = 0;
    const auto r = model->generate(model->tokenize("The capital of France is", true), gp, [&](const waste::TokenEvent &) {
        ++n;
        return true;
    });
    EXPECT_GE(r.tokens.size(), 1u);
    EXPECT_GE(n, 1);
}

namespace {

// A one-shard source folder with the given tensors (name -> dtype, shape, bytes).
struct RawTensor {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    std::vector<uint8_t> bytes;
};

std::string writeSource(const std::string &name, const std::vector<RawTensor> &tensors) {
    const std::string dir = freshOutputDir("convert-k3", name);
    std::ofstream(dir + "/config.json") << R"({"model_type": "kimi_linear", "num_hidden_layers": 1})";
    std::vector<TensorSpec> specs;
    for (const auto &t : tensors) specs.push_back({t.name, t.dtype, t.shape});
    SafetensorsWriter w(dir + "/model.safetensors", specs);
    for (const auto &t : tensors) w.append(t.bytes.data(), static_cast<int64_t>(t.bytes.size()));
    w.finish();
    return dir;
}

} // namespace

TEST(ConvertK3, SyntheticMxfp4PairsDecodeExactlyAndBrokenPairsAreRefused) {
    std::mt19937 rng(11);
    const int64_t rows = 9, cols = 96 + 64; // 5 blocks a row
    RawTensor p{"x.weight_packed", DType::U8, {rows, cols / 2}, {}}, sc{"x.weight_scale", DType::U8, {rows, cols / 32}, {}};
    for (int64_t i = 0; i < rows * cols / 2; ++i) p.bytes.push_back(uint8_t(rng()));
    for (int64_t i = 0; i < rows * cols / 32; ++i) sc.bytes.push_back(uint8_t(rng() % 251)); // 2^-127 .. 2^123
    sc.bytes[0] = 0;
    sc.bytes[1] = 250;
    RawTensor plain{"y.weight", DType::BF16, {2, 2}, std::vector<uint8_t>(8, 0x3f)};
    {
        const std::string dir = writeSource("synthetic", {p, sc, plain});
        HfDirectorySource src(dir);
        EXPECT_EQ(src.tensorNames(), (std::vector<std::string>{"x.weight", "y.weight"}));
        const SourceTensor t = src.info("x.weight");
        EXPECT_EQ(t.dtype, DType::MXFP4);
        EXPECT_EQ(t.shape, (std::vector<int64_t>{rows, cols}));
        std::vector<float> got(static_cast<size_t>(rows * cols));
        src.readRows(t, 0, rows, got.data());
        for (int64_t r = 0; r < rows; ++r) {
            const auto want = refDecodeRow(p.bytes.data(), sc.bytes.data(), r, cols);
            for (int64_t i = 0; i < cols; ++i)
                ASSERT_EQ(double(got[static_cast<size_t>(r * cols + i)]), want[static_cast<size_t>(i)]) << r << "," << i;
        }
        EXPECT_EQ(src.shardsOf("x.weight"), (std::vector<std::string>{"model.safetensors"}));
    }
    auto refused = [&](const std::string &name, const std::vector<RawTensor> &ts, const std::string &needle) {
        try {
            const std::string dir = writeSource(name, ts);
            HfDirectorySource src(dir);
            const SourceTensor t = src.info("x.weight");
            std::vector<float> out(static_cast<size_t>(t.elements()));
            src.readRows(t, 0, t.rows(), out.data());
            ADD_FAILURE() << name << ": accepted";
        } catch (const waste::Error &e) {
            EXPECT_EQ(e.code(), waste::ErrorCode::Format) << name;
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << name << ": " << e.what();
        }
    };
    refused("no-scale", {p}, "x.weight_scale");
    RawTensor wrongShape = sc;
    wrongShape.shape = {rows, cols / 32 - 1};
    wrongShape.bytes.resize(static_cast<size_t>(rows * (cols / 32 - 1)));
    refused("scale-shape", {p, wrongShape}, "x.weight");
    RawTensor bf16Scale{"x.weight_scale", DType::BF16, {rows, cols / 32}, std::vector<uint8_t>(static_cast<size_t>(rows * cols / 16), 1)};
    refused("scale-dtype", {p, bf16Scale}, "must be U8");
    RawTensor nan = sc;
    nan.bytes[7] = 255;
    refused("nan-scale", {p, nan}, "x.weight");
}
