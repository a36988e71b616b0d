// Native expert records from releases whose expert bytes a record cannot copy: the same
// e4m3 / int4 elements with their scales laid out otherwise (convert/scaled_layouts.hpp),
// made by `mktiny --k3 --hf --experts-layout X` on the tiny Kimi K3:
//   fp8-tensor (compressed-tensors FP8, one scale per tensor) and int4g128 (pack-quantized
//   groups of 128) fit a record exactly: convert --experts native writes FP8B128 / INT4G32
//   records whose every weight equals this test's own float64 decoding of the shards (from
//   the public layouts), eval matches the float64 forward pass over them within 1e-4, and
//   the default is native;
//   fp8b64 (DeepSeek-style scales per 64x64 block) and fp8-channel (one scale per row) do
//   not: --experts native is refused with a message naming the tensor, its layout and
//   what to use instead, the default is VQ3R, and the converter decodes them exactly
//   (readRows against the float64 decoding, q4 records within INT4's step of it);
//   asymmetric INT4 (a `_zero_point` beside the scales) and INT4 packed down the columns
//   are refused by name, not misread.
#include "convert/model_source.hpp"
#include "convert/safetensors.hpp"

#include "k3_reference.hpp"
#include "native_fixture.hpp"
#include "test_files.hpp"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

namespace fs = std::filesystem;
using native_fixture::made;
using native_fixture::relErr;
using waste::TinyExperts;

namespace {

const std::string kSuite = "native-reencode";
constexpr double kTolerance = 1e-4;

// FP8 E4M3 ("fn") in float64, from the OCP FP8 definition: bias 7, subnormals below 2^-6.
double e4m3(uint8_t b)
{
    const int e = (b >> 3) & 15, m = b & 7;
    const double v = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
    return (b & 0x80) ? -v : v;
}

double bf16(const uint8_t *p)
{
    const uint32_t bits = (uint32_t(p[0]) | uint32_t(p[1]) << 8) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

double f32(const uint8_t *p)
{
    float f;
    std::memcpy(&f, p, 4);
    return f;
}

// The release's shards: every stored tensor's bytes by name.
class Shards {
public:
    explicit Shards(const std::string &dir)
    {
        for (const auto &e : fs::directory_iterator(dir))
            if (e.path().extension() == ".safetensors") {
                waste::convert::SafetensorsFile f(e.path().string());
                for (const auto &t : f.tensors()) {
                    std::string b(size_t(t.bytes), '\0');
                    f.readBytes(t, 0, t.bytes, reinterpret_cast<uint8_t *>(b.data()));
                    m_bytes[t.name] = std::move(b);
                    m_shape[t.name] = t.shape;
                }
            }
    }
    bool has(const std::string &n) const { return m_bytes.count(n) > 0; }
    const uint8_t *bytes(const std::string &n) const { return reinterpret_cast<const uint8_t *>(m_bytes.at(n).data()); }
    const std::vector<int64_t> &shape(const std::string &n) const { return m_shape.at(n); }

private:
    std::map<std::string, std::string> m_bytes;
    std::map<std::string, std::vector<int64_t>> m_shape;
};

// One expert matrix of `layout` decoded in float64 straight from its stored tensors.
std::vector<double> decodeSource(const Shards &s, TinyExperts layout, const std::string &name, int64_t rows, int64_t cols)
{
    std::vector<double> w(size_t(rows * cols));
    if (layout == TinyExperts::INT4G128) { // I32 words of 8 nibbles (v + 8, lowest first), bf16 per 128
        const uint8_t *p = s.bytes(name + "_packed"), *sc = s.bytes(name + "_scale");
        EXPECT_EQ(s.shape(name + "_scale"), (std::vector<int64_t>{rows, (cols + 127) / 128}));
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c) {
                const uint32_t word = uint32_t(p[(r * cols + c) / 8 * 4]) | uint32_t(p[(r * cols + c) / 8 * 4 + 1]) << 8 |
                                      uint32_t(p[(r * cols + c) / 8 * 4 + 2]) << 16 | uint32_t(p[(r * cols + c) / 8 * 4 + 3]) << 24;
                const int q = int((word >> (4 * (c % 8))) & 15) - 8;
                w[size_t(r * cols + c)] = q * bf16(sc + 2 * (r * ((cols + 127) / 128) + c / 128));
            }
        return w;
    }
    const uint8_t *q = s.bytes(name);
    int64_t br = rows, bc = cols; // per tensor
    std::string scale = name + "_scale";
    if (layout == TinyExperts::FP8Channel) br = 1;
    if (layout == TinyExperts::FP8B64) {
        br = bc = 64;
        scale = name + "_scale_inv";
    }
    const int64_t gridCols = (cols + bc - 1) / bc;
    EXPECT_EQ(s.shape(scale).size() == 1 ? 1 : s.shape(scale)[0] * s.shape(scale)[1], ((rows + br - 1) / br) * gridCols) << scale;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
            w[size_t(r * cols + c)] = e4m3(q[r * cols + c]) * f32(s.bytes(scale) + 4 * ((r / br) * gridCols + c / bc));
    return w;
}

std::string expertName(int layer, int e, int kind)
{
    const char *kinds[3] = {"w1", "w3", "w2"};
    return "language_model.model.layers." + std::to_string(layer) + ".block_sparse_moe.experts." + std::to_string(e) + "." +
           kinds[kind] + ".weight";
}

std::vector<int32_t> prompt(waste::Model &m) { return m.tokenize("The quick brown fox jumps over the lazy dog.", true); }

struct Exact {
    TinyExperts layout;
    const char *fmt;
};
const Exact kExact[] = {{TinyExperts::FP8Tensor, "FP8B128"}, {TinyExperts::INT4G128, "INT4G32"}};

struct Refused {
    TinyExperts layout;
    const char *text; // how the refusal names the layout
};
const Refused kRefused[] = {{TinyExperts::FP8B64, "FP8 e4m3 with one scale per 64x64 block"},
                            {TinyExperts::FP8Channel, "FP8 e4m3 with one scale per row"}};

std::string freshSource(TinyExperts layout)
{
    const std::string hf = freshOutputDir(kSuite, std::string(waste::tinyExpertsName(layout)) + "-src");
    waste::TinyModelOptions t;
    t.k3 = true;
    t.seed = 5;
    t.experts = layout;
    waste::makeTinyHf(hf, t);
    return hf;
}

} // namespace

TEST(NativeReencode, ExactLayoutsKeepEveryReleaseValue)
{
    for (const Exact &X : kExact) {
        SCOPED_TRACE(waste::tinyExpertsName(X.layout));
        const native_fixture::Made &m = made(kSuite, X.layout);
        const auto manifest = nlohmann::json::parse(slurp(m.dir + "/manifest.json"));
        EXPECT_EQ(manifest["expert_quant"]["fmt"], X.fmt);
        EXPECT_EQ(waste::planConversion(m.hf, freshOutputDir(kSuite, "plan")).expertFormat, X.fmt) << "the default is native";
        const Shards shards(m.hf);
        const k3ref::Container ct(m.dir);
        const int64_t Im = manifest["config"]["moe_intermediate_size"], W = manifest["config"]["routed_expert_hidden_size"];
        int compared = 0;
        for (int layer = 1; layer <= 5; ++layer)
            for (int e = 0; e < 16; e += 5) {
                const auto rec = ct.expert(layer, e);
                for (int k = 0; k < 3; ++k) {
                    const int64_t rows = k < 2 ? Im : W, cols = k < 2 ? W : Im;
                    const std::vector<double> want = decodeSource(shards, X.layout, expertName(layer, e, k), rows, cols);
                    ASSERT_EQ(rec[size_t(k)].w.size(), want.size());
                    for (size_t i = 0; i < want.size(); ++i)
                        ASSERT_EQ(rec[size_t(k)].w[i], want[i]) << expertName(layer, e, k) << " weight " << i;
                    ++compared;
                }
            }
        EXPECT_EQ(compared, 5 * 4 * 3);
        auto model = waste::Model::open(m.dir);
        EXPECT_EQ(model->info().expertFormat, X.fmt);
        const auto ids = prompt(*model);
        const double err = relErr(model->eval(ids), k3ref::Reference(ct).logits(ids));
        std::printf("[native] %-10s re-laid into %s: eval against the float64 pass: max rel err %.2e (limit %.0e)\n",
                    waste::tinyExpertsName(X.layout), X.fmt, err, kTolerance);
        EXPECT_LE(err, kTolerance);
    }
}

TEST(NativeReencode, InexactLayoutsAreRefusedByNameAndDecodedForTheOthers)
{
    for (const Refused &X : kRefused) {
        SCOPED_TRACE(waste::tinyExpertsName(X.layout));
        const std::string hf = freshSource(X.layout);
        waste::ConvertOptions native;
        native.experts = waste::ExpertEncoding::Native;
        try {
            waste::convertModel(hf, freshOutputDir(kSuite, "refused"), native);
            ADD_FAILURE() << "native records were written for a layout they cannot hold exactly";
        } catch (const waste::Error &e) {
            const std::string what = e.what();
            EXPECT_EQ(e.code(), waste::ErrorCode::Unsupported);
            EXPECT_NE(what.find(expertName(1, 0, 0)), std::string::npos) << what;
            EXPECT_NE(what.find(X.text), std::string::npos) << what;
            EXPECT_NE(what.find("--experts q4 or vq3r"), std::string::npos) << what;
        }
        EXPECT_EQ(waste::planConversion(hf, freshOutputDir(kSuite, "plan")).expertFormat, "VQ3R") << "the default must work";

        // The converter's decoding is the release's values (one f32 rounding of e4m3 * scale).
        const Shards shards(hf);
        waste::convert::HfDirectorySource src(hf);
        for (int k = 0; k < 3; ++k) {
            const auto t = src.info(expertName(2, 3, k));
            std::vector<float> got(size_t(t.elements()));
            src.readRows(t, 0, t.rows(), got.data());
            const std::vector<double> want = decodeSource(shards, X.layout, t.name, t.rows(), t.rowLength());
            for (size_t i = 0; i < want.size(); ++i)
                ASSERT_EQ(got[i], float(want[i])) << t.name << " weight " << i;
        }

        // q4 from those values: the engine computes its records, and they are the release's
        // weights within half an INT4 step (amax/7 per 32).
        waste::ConvertOptions q4;
        q4.experts = waste::ExpertEncoding::Q4;
        q4.trunkBits = 16;
        q4.jobs = 2;
        const std::string dir = freshOutputDir(kSuite, std::string(waste::tinyExpertsName(X.layout)) + "-q4");
        waste::convertModel(hf, dir, q4);
        const k3ref::Container ct(dir);
        auto model = waste::Model::open(dir);
        const auto ids = prompt(*model);
        EXPECT_LE(relErr(model->eval(ids), k3ref::Reference(ct).logits(ids)), kTolerance);
        const auto rec = ct.expert(2, 3);
        for (int k = 0; k < 3; ++k) {
            const auto t = src.info(expertName(2, 3, k));
            const std::vector<double> want = decodeSource(shards, X.layout, t.name, t.rows(), t.rowLength());
            for (size_t g0 = 0; g0 < want.size(); g0 += 32) {
                double amax = 0;
                for (size_t i = g0; i < g0 + 32; ++i)
                    amax = std::max(amax, std::fabs(want[i]));
                for (size_t i = g0; i < g0 + 32; ++i)
                    ASSERT_LE(std::fabs(rec[size_t(k)].w[i] - want[i]), 0.51 * amax / 7 + 1e-12) << t.name << " weight " << i;
            }
        }
    }
}

TEST(NativeReencode, AsymmetricInt4IsRefusedNotMisread)
{
    // compressed-tensors' asymmetric int4 adds `_zero_point` beside the scales: decoded
    // without it every weight would be off, so the converter says so instead.
    const std::string hf = freshSource(TinyExperts::INT4G128);
    const std::string name = expertName(1, 0, 0);
    const std::string shard = "model-zero-points.safetensors";
    waste::convert::SafetensorsWriter w(hf + "/" + shard, {{name + "_zero_point", waste::convert::DType::I32, {8, 1}}});
    const std::vector<int32_t> zeros(8, 0);
    w.append(zeros.data(), int64_t(zeros.size() * 4));
    w.finish();
    auto index = nlohmann::json::parse(slurp(hf + "/model.safetensors.index.json"));
    index["weight_map"][name + "_zero_point"] = shard;
    std::ofstream(hf + "/model.safetensors.index.json") << index.dump();
    try {
        waste::planConversion(hf, freshOutputDir(kSuite, "plan"));
        ADD_FAILURE() << "an asymmetric INT4 release was planned as if symmetric";
    } catch (const waste::Error &e) {
        EXPECT_EQ(e.code(), waste::ErrorCode::Unsupported);
        EXPECT_NE(std::string(e.what()).find("'" + name + "' is asymmetric INT4"), std::string::npos) << e.what();
    }
}

TEST(NativeReencode, Int4PackedDownTheColumnsIsNamed)
{
    // compressed-tensors can pack eight rows into each word (packed_dim 0): the nibbles of
    // a row are then not consecutive, so it is refused with the reason, not read as rows.
    const std::string dir = freshOutputDir(kSuite, "packed-dim-0");
    std::ofstream(dir + "/config.json") << "{}";
    const std::string name = "model.layers.1.mlp.experts.0.up_proj.weight";
    waste::convert::SafetensorsWriter w(dir + "/model.safetensors", {{name + "_packed", waste::convert::DType::I32, {8, 128}},
                                                                    {name + "_scale", waste::convert::DType::BF16, {64, 1}},
                                                                    {name + "_shape", waste::convert::DType::I64, {2}}});
    const std::vector<uint8_t> packed(8 * 128 * 4, 0x88), scales(64 * 2, 0);
    const int64_t shape[2] = {64, 128};
    w.append(packed.data(), int64_t(packed.size()));
    w.append(scales.data(), int64_t(scales.size()));
    w.append(shape, 16);
    w.finish();
    waste::convert::HfDirectorySource src(dir);
    try {
        (void)src.info(name);
        ADD_FAILURE() << "INT4 packed down the columns was read as rows";
    } catch (const waste::Error &e) {
        EXPECT_EQ(e.code(), waste::ErrorCode::Unsupported);
        EXPECT_NE(std::string(e.what()).find("packed down the columns (packed_dim 0)"), std::string::npos) << e.what();
    }
}
