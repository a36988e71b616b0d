// Native expert records end to end, for every release layout the tiny generator writes
// (K3's MXFP4, DeepSeek-V3 / Kimi K2 FP8 with 128x128 blocks, K2-Thinking's INT4
// pack-quantized groups of 32, BF16), on the tiny Kimi K3:
//   mktiny --k3 --hf --experts-layout X, then convert --experts native --trunk-bits 16:
//   (a) every record's gate/up/down payloads and scales are the shards' bytes;
//   (b) Model::info says the format and the record size, and there is no codebooks.bin;
//   (c) Model::eval equals a float64 forward pass over the release's weights (k3_reference:
//       its own decoders of the records and the bf16 trunk) within 1e-4 relative, and the
//       same source in VQ3R does not (so the comparison can tell them apart);
//   (d) on 2 threads, splitting every loop, and in prefill chunks, the logits are those of
//       1 thread token by token, bit for bit.
// Also: q4 (INT4 groups encoded from a bf16 release) against the same float64 pass over
// its records, and its error against the bf16 weights; which encoding each release gets
// by default; a native conversion of F16 experts is refused. The quality table (native vs
// VQ3R vs q4 over 200+ positions) is tst_native_quality.
#include "convert/expert_quality.hpp"

#include <algorithm>
#include <cmath>

#include "convert/model_source.hpp"
#include "convert/safetensors.hpp"
#include "format/native_record.hpp"
#include "session/model_impl.hpp"

#include "k3_reference.hpp"
#include "native_fixture.hpp"
#include "test_files.hpp"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

namespace fs = std::filesystem;
using native_fixture::Made;
using native_fixture::made;
using native_fixture::relErr;
using waste::TinyExperts;

namespace {

constexpr double kTolerance = 1e-4;
const std::string kSuite = "native-experts";

struct Layout {
    TinyExperts layout;
    const char *name;    // what `waste info` calls the records
    const char *payload; // suffix of the stored payload tensor after "<name>.weight"
    const char *scales;  // suffix of the stored scale tensor; nullptr: none
};
const Layout kLayouts[] = {{TinyExperts::MXFP4, "MXFP4", "_packed", "_scale"},
                           {TinyExperts::FP8B128, "FP8B128", "", "_scale_inv"},
                           {TinyExperts::INT4G32, "INT4G32", "_packed", "_scale"},
                           {TinyExperts::BF16, "BF16", "", nullptr}};

// Every stored tensor of the shards, with its file.
std::map<std::string, std::pair<std::string, waste::convert::TensorInfo>> storedTensors(const std::string &dir)
{
    std::map<std::string, std::pair<std::string, waste::convert::TensorInfo>> all;
    for (const auto &e : fs::directory_iterator(dir))
        if (e.path().extension() == ".safetensors") {
            waste::convert::SafetensorsFile f(e.path().string());
            for (const auto &t : f.tensors())
                all[t.name] = {e.path().string(), t};
        }
    return all;
}

std::string storedBytes(const std::map<std::string, std::pair<std::string, waste::convert::TensorInfo>> &all,
                        const std::string &name)
{
    const auto &[file, t] = all.at(name);
    waste::convert::SafetensorsFile f(file);
    std::string out(static_cast<size_t>(t.bytes), '\0');
    f.readBytes(t, 0, t.bytes, reinterpret_cast<uint8_t *>(out.data()));
    return out;
}

std::vector<int32_t> prompt(waste::Model &m) { return m.tokenize("The quick brown fox jumps over the lazy dog.", true); }

} // namespace

TEST(NativeExperts, RecordsHoldTheReleaseBytes)
{
    for (const Layout &L : kLayouts) {
        SCOPED_TRACE(L.name);
        const Made &m = made(kSuite, L.layout);
        const auto manifest = nlohmann::json::parse(slurp(m.dir + "/manifest.json"));
        EXPECT_EQ(manifest["expert_quant"]["fmt"], L.name);
        const auto stored = storedTensors(m.hf);
        const int64_t Im = manifest["config"]["moe_intermediate_size"], W = manifest["config"]["routed_expert_hidden_size"];
        const uint8_t fmt = *waste::format::nativeFmtFromName(L.name);
        const waste::format::NativeLayout layout = waste::format::nativeRecordLayout(fmt, Im, W);
        int compared = 0;
        for (auto it = manifest["layers"].begin(); it != manifest["layers"].end(); ++it) {
            const std::string bank = slurp(m.dir + "/" + it.value()["file"].get<std::string>());
            const int E = it.value()["experts"];
            const int64_t R = it.value()["bytes"].get<int64_t>() / E;
            ASSERT_EQ(R, layout.recordBytes);
            for (int e = 0; e < E; ++e) {
                const char *rec = bank.data() + e * R;
                uint32_t h[12];
                std::memcpy(h, rec, 48);
                const char *kinds[3] = {"w1", "w3", "w2"};
                for (int k = 0; k < 3; ++k) {
                    const std::string base = "language_model.model.layers." + it.key() + ".block_sparse_moe.experts." +
                                             std::to_string(e) + "." + kinds[k] + ".weight";
                    const std::string payload = storedBytes(stored, base + L.payload);
                    ASSERT_EQ(int64_t(payload.size()), layout.payloadBytes[k]);
                    EXPECT_EQ(std::string(rec + h[5 + k], payload.size()), payload) << base;
                    if (L.scales) {
                        const std::string scales = storedBytes(stored, base + L.scales);
                        ASSERT_EQ(int64_t(scales.size()), layout.scaleBytes[k]);
                        EXPECT_EQ(std::string(rec + layout.scaleOff[k], scales.size()), scales) << base;
                    }
                    ++compared;
                }
            }
        }
        EXPECT_EQ(compared, 5 * 16 * 3);
    }
}

TEST(NativeExperts, InfoSaysTheFormatAndTheRecordSize)
{
    for (const Layout &L : kLayouts) {
        SCOPED_TRACE(L.name);
        const Made &m = made(kSuite, L.layout);
        auto model = waste::Model::open(m.dir);
        const auto manifest = nlohmann::json::parse(slurp(m.dir + "/manifest.json"));
        const auto &bank = manifest["layers"]["1"];
        EXPECT_EQ(model->info().expertFormat, L.name);
        EXPECT_EQ(model->info().recordBytes, bank["bytes"].get<int64_t>() / bank["experts"].get<int64_t>());
        EXPECT_NE(model->info().quantization.find(std::string("experts ") + L.name), std::string::npos)
            << model->info().quantization;
        EXPECT_NE(model->info().quantization.find("BF16"), std::string::npos) << "a 16-bit trunk keeps bf16";
        EXPECT_FALSE(fs::exists(m.dir + "/codebooks.bin")) << "a native container has no codebooks";
    }
}

TEST(NativeExperts, EvalMatchesTheFloat64ForwardPassOverTheReleaseWeights)
{
    for (const Layout &L : kLayouts) {
        SCOPED_TRACE(L.name);
        const Made &m = made(kSuite, L.layout);
        auto model = waste::Model::open(m.dir);
        const auto ids = prompt(*model);
        ASSERT_GE(ids.size(), 8u);
        const std::vector<float> got = model->eval(ids);
        const k3ref::Container ct(m.dir);
        const k3ref::Reference ref(ct);
        const k3ref::Vec want = ref.logits(ids);
        ASSERT_EQ(got.size(), want.size());
        const double err = relErr(got, want);
        std::printf("[native] %-8s eval against the float64 forward pass: max rel err %.2e (limit %.0e)\n", L.name, err, kTolerance);
        EXPECT_LE(err, kTolerance);
        if (L.layout == TinyExperts::MXFP4) {
            // The same release in VQ3R is far from it: the comparison sees the experts.
            const Made &vq = made(kSuite, L.layout, waste::ExpertEncoding::VQ3R);
            auto vqModel = waste::Model::open(vq.dir);
            EXPECT_EQ(vqModel->info().expertFormat, "VQ3R");
            const double vqErr = relErr(vqModel->eval(ids), want);
            std::printf("[native] VQ3R of the same MXFP4 release against that pass: max rel err %.2e\n", vqErr);
            EXPECT_GT(vqErr, 100 * kTolerance);
        }
    }
}

TEST(NativeExperts, ThreadsAndChunksGiveTheSameBits)
{
    for (const Layout &L : kLayouts) {
        SCOPED_TRACE(L.name);
        const Made &m = made(kSuite, L.layout);
        auto run = [&](int threads, bool chunked) {
            waste::OpenOptions o;
            o.threads = threads;
            auto model = waste::Model::open(m.dir, o);
            auto &impl = static_cast<waste::session::ModelImpl &>(*model);
            impl.computePool().setMinWork(1); // split every loop, however small
            const auto ids = prompt(*model);
            std::vector<float> last;
            if (chunked) {
                last = model->eval(ids);
            } else {
                for (int32_t id : ids)
                    last = model->eval(std::span<const int32_t>(&id, 1));
            }
            if (threads > 1)
                EXPECT_GT(impl.computePool().splitLoops(), 50);
            return last;
        };
        // A prompt's pass and token-by-token decode steps each give the same bits on any thread
        // count; the two agree within rounding (tst_prefill_pass).
        const std::vector<float> steps1 = run(1, false), steps2 = run(2, false), pass1 = run(1, true), pass2 = run(2, true);
        ASSERT_EQ(steps1.size(), pass2.size());
        EXPECT_EQ(std::memcmp(steps1.data(), steps2.data(), steps1.size() * sizeof(float)), 0);
        EXPECT_EQ(std::memcmp(pass1.data(), pass2.data(), pass1.size() * sizeof(float)), 0);
        float largest = 0, gap = 0;
        for (size_t i = 0; i < steps1.size(); ++i) {
            largest = std::max(largest, std::fabs(steps1[i]));
            gap = std::max(gap, std::fabs(steps1[i] - pass1[i]));
        }
        EXPECT_LE(gap, 1e-4f * largest);
    }
}

TEST(NativeExperts, Q4EncodesABf16ReleaseInInt4Groups)
{
    const Made &m = made(kSuite, TinyExperts::BF16, waste::ExpertEncoding::Q4);
    auto model = waste::Model::open(m.dir);
    EXPECT_EQ(model->info().expertFormat, "INT4G32");
    // The engine computes what its records say...
    const auto ids = prompt(*model);
    const k3ref::Container ct(m.dir);
    const double err = relErr(model->eval(ids), k3ref::Reference(ct).logits(ids));
    std::printf("[native] q4 records: eval against the float64 pass over them: max rel err %.2e\n", err);
    EXPECT_LE(err, kTolerance);
    // ...and the records are the bf16 weights within INT4's error (scale amax/7 per 32).
    waste::convert::HfDirectorySource src(m.hf);
    double worst = 0;
    for (int e = 0; e < 16; e += 3) {
        const auto ex = ct.expert(2, e);
        const char *kinds[3] = {"w1", "w3", "w2"};
        for (int k = 0; k < 3; ++k) {
            const auto t = src.info("language_model.model.layers.2.block_sparse_moe.experts." + std::to_string(e) + "." +
                                    kinds[k] + ".weight");
            std::vector<float> w(static_cast<size_t>(t.elements()));
            src.readRows(t, 0, t.rows(), w.data());
            double num = 0, den = 0;
            for (size_t g0 = 0; g0 < w.size(); g0 += 32) {
                double amax = 0;
                for (size_t i = g0; i < g0 + 32; ++i)
                    amax = std::max(amax, std::fabs(double(w[i])));
                for (size_t i = g0; i < g0 + 32; ++i) {
                    const double d = ex[size_t(k)].w[i] - w[i];
                    num += d * d;
                    den += double(w[i]) * w[i];
                    // Within half a step of the group's grid (a step is about amax/7).
                    ASSERT_LE(std::fabs(d), 0.51 * amax / 7 + 1e-12) << t.name << " weight " << i;
                }
            }
            worst = std::max(worst, std::sqrt(num / den));
        }
    }
    std::printf("[quality] tiny K3, worst expert matrix q4 (INT4G32) error against the bf16 source: %.2f %%\n", 100 * worst);
    EXPECT_LT(worst, 0.15);
    EXPECT_GT(worst, 0.01); // it is a real 4-bit encoding, not a copy
    // The Convert page quotes this figure (convert/expert_quality.hpp).
    EXPECT_NEAR(worst, waste::convert::quality::kQ4OnBf16, waste::convert::quality::kSlack);
}

TEST(NativeExperts, QuantisedReleasesDefaultToNativeAndBf16ToVq3r)
{
    for (const Layout &L : kLayouts) {
        SCOPED_TRACE(L.name);
        const Made &m = made(kSuite, L.layout);
        const waste::ConvertPlan plan = waste::planConversion(m.hf, freshOutputDir("native-experts", "plan"));
        EXPECT_EQ(plan.expertFormat, L.layout == TinyExperts::BF16 ? "VQ3R" : L.name);
        waste::ConvertOptions q4;
        q4.experts = waste::ExpertEncoding::Q4;
        EXPECT_EQ(waste::planConversion(m.hf, freshOutputDir("native-experts", "plan"), q4).expertFormat, "INT4G32");
    }
}

TEST(NativeExperts, NativeRefusesExpertsNoRecordKeeps)
{
    // A Kimi-Linear release whose experts are F16: native would have to re-round them.
    const std::string hf = freshOutputDir("native-experts", "f16-hf");
    waste::makeTinyHf(hf, {});
    // Rewrite one expert tensor's dtype: the first expert decides the bank's format.
    const auto stored = storedTensors(hf);
    const std::string name = "model.layers.1.block_sparse_moe.experts.0.w1.weight";
    ASSERT_TRUE(stored.count(name));
    const std::string file = stored.at(name).first;
    std::string bytes = slurp(file);
    const uint64_t headerLen = [&] {
        uint64_t v = 0;
        for (int i = 7; i >= 0; --i)
            v = (v << 8) | uint8_t(bytes[size_t(i)]);
        return v;
    }();
    auto header = nlohmann::json::parse(bytes.substr(8, headerLen));
    header[name]["dtype"] = "F16";
    std::string text = header.dump();
    ASSERT_LE(text.size(), headerLen);
    text.append(headerLen - text.size(), ' ');
    bytes.replace(8, headerLen, text);
    std::ofstream(file, std::ios::binary) << bytes;
    waste::ConvertOptions o;
    o.experts = waste::ExpertEncoding::Native;
    try {
        waste::convertModel(hf, freshOutputDir("native-experts", "f16-out"), o);
        ADD_FAILURE() << "F16 experts were accepted as native";
    } catch (const waste::Error &e) {
        EXPECT_EQ(e.code(), waste::ErrorCode::Unsupported);
        EXPECT_NE(std::string(e.what()).find("--experts q4 or vq3r"), std::string::npos) << e.what();
    }
}
