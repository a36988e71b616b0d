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
// by default; a native conversion of F16 experts is refused.
#include "convert/model_source.hpp"
#include "convert/safetensors.hpp"
#include "format/native_record.hpp"
#include "session/model_impl.hpp"

#include "k3_reference.hpp"
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
using waste::TinyExperts;

namespace {

constexpr double kTolerance = 1e-4;

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

struct Made {
    std::string hf, dir;
};

// The tiny K3 in `layout`, and its conversion with `encoding` and a 16-bit trunk (cached).
const Made &made(TinyExperts layout, waste::ExpertEncoding encoding = waste::ExpertEncoding::Native)
{
    static std::map<std::pair<int, int>, Made> cache;
    static std::map<int, std::string> sources;
    const auto key = std::make_pair(int(layout), int(encoding));
    auto it = cache.find(key);
    if (it != cache.end())
        return it->second;
    const std::string tag = std::string(waste::tinyExpertsName(layout));
    Made m;
    if (!sources.count(int(layout))) {
        const std::string hf = freshOutputDir("native-experts", tag + "-hf");
        waste::TinyModelOptions t;
        t.k3 = true;
        t.seed = 5;
        t.experts = layout;
        waste::makeTinyHf(hf, t);
        sources[int(layout)] = hf;
    }
    m.hf = sources[int(layout)];
    m.dir = freshOutputDir("native-experts", tag + "-" + waste::expertEncodingName(encoding));
    waste::ConvertOptions o;
    o.jobs = 2;
    o.experts = encoding;
    o.trunkBits = 16;
    waste::convertModel(m.hf, m.dir, o);
    return cache.emplace(key, m).first->second;
}

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

double relErr(const std::vector<float> &got, const k3ref::Vec &want)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        num = std::max(num, std::fabs(double(got[i]) - want[i]));
        den = std::max(den, std::fabs(want[i]));
    }
    return num / den;
}

std::vector<int32_t> prompt(waste::Model &m) { return m.tokenize("The quick brown fox jumps over the lazy dog.", true); }

} // namespace

TEST(NativeExperts, RecordsHoldTheReleaseBytes)
{
    for (const Layout &L : kLayouts) {
        SCOPED_TRACE(L.name);
        const Made &m = made(L.layout);
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
        const Made &m = made(L.layout);
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
        const Made &m = made(L.layout);
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
            const Made &vq = made(L.layout, waste::ExpertEncoding::VQ3R);
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
        const Made &m = made(L.layout);
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
        const std::vector<float> one = run(1, false), two = run(2, true);
        ASSERT_EQ(one.size(), two.size());
        EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0);
    }
}

TEST(NativeExperts, Q4EncodesABf16ReleaseInInt4Groups)
{
    const Made &m = made(TinyExperts::BF16, waste::ExpertEncoding::Q4);
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
}

TEST(NativeExperts, QuantisedReleasesDefaultToNativeAndBf16ToVq3r)
{
    for (const Layout &L : kLayouts) {
        SCOPED_TRACE(L.name);
        const Made &m = made(L.layout);
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

namespace {

// Over 200 positions of text, the engine's next-token distribution against the float64
// pass over the release's weights: top-1 agreement and mean KL(reference || engine).
struct Quality {
    double top1 = 0, meanKl = 0;
    int positions = 0;
};

Quality quality(waste::Model &model, const std::vector<int32_t> &ids, const std::vector<k3ref::Vec> &want)
{
    Quality q;
    model.resetState();
    for (size_t i = 0; i < ids.size(); ++i) {
        const std::vector<float> got = model.eval(std::span<const int32_t>(&ids[i], 1));
        const k3ref::Vec &w = want[i];
        auto logSoftmax = [](auto &&v) {
            double mx = -1e300, sum = 0;
            for (double x : v)
                mx = std::max(mx, x);
            for (double x : v)
                sum += std::exp(x - mx);
            k3ref::Vec out;
            for (double x : v)
                out.push_back(x - mx - std::log(sum));
            return out;
        };
        const k3ref::Vec lp = logSoftmax(w), lq = logSoftmax(got);
        double kl = 0;
        for (size_t k = 0; k < lp.size(); ++k)
            kl += std::exp(lp[k]) * (lp[k] - lq[k]);
        q.meanKl += kl;
        q.top1 += std::max_element(w.begin(), w.end()) - w.begin() == std::max_element(got.begin(), got.end()) - got.begin();
        ++q.positions;
    }
    q.meanKl /= q.positions;
    q.top1 /= q.positions;
    return q;
}

const char *kText =
    "The river ran past the old mill and under the stone bridge, where children threw sticks into the water and "
    "raced to the other side to see whose stick came out first. In the autumn the leaves turned red and gold, and "
    "the miller's daughter gathered apples from the orchard behind the house. She counted them into baskets, one "
    "for the market, one for the cellar, and one for the neighbours who had helped with the harvest. When winter "
    "came the river froze at its edges, the mill wheel stopped, and the village gathered in the hall to sing, to "
    "trade stories and to plan the spring planting: beans by the wall, wheat in the long field, and a new hedge "
    "along the lane so that the sheep would stay where they belonged.";

} // namespace

TEST(NativeExperts, QualityTableNativeVq3rQ4AgainstTheFloat64Pass)
{
    // For a quantised release (MXFP4, K3's) and a bf16 one: the three ways to store its
    // experts, each with the same 16-bit trunk so that only the experts differ.
    std::printf("\n| release | --experts | record | read per token | top-1 agreement | mean KL (nats) |\n"
                "| --- | --- | --- | --- | --- | --- |\n");
    for (TinyExperts layout : {TinyExperts::MXFP4, TinyExperts::BF16}) {
        const Made &native = made(layout, waste::ExpertEncoding::Native);
        const k3ref::Container ct(native.dir);
        const k3ref::Reference ref(ct);
        auto probe = waste::Model::open(native.dir);
        const std::vector<int32_t> ids = probe->tokenize(kText, false);
        ASSERT_GE(ids.size(), 200u);
        std::vector<k3ref::Vec> want;
        ref.logits(ids, &want);
        std::map<std::string, Quality> got;
        for (auto enc : {waste::ExpertEncoding::Native, waste::ExpertEncoding::VQ3R, waste::ExpertEncoding::Q4}) {
            const Made &m = made(layout, enc);
            auto model = waste::Model::open(m.dir);
            const waste::ModelInfo &info = model->info();
            const Quality q = quality(*model, ids, want);
            got[waste::expertEncodingName(enc)] = q;
            const int64_t perToken = info.recordBytes * info.topK * 5; // 5 MoE layers
            std::printf("| tiny K3, %s experts | %s (%s) | %lld B | %.1f KiB | %.1f %% | %.2e |\n", waste::tinyExpertsName(layout),
                        waste::expertEncodingName(enc), info.expertFormat.c_str(), static_cast<long long>(info.recordBytes),
                        perToken / 1024.0, 100 * q.top1, q.meanKl);
        }
        // The release's own bytes are the float64 pass up to f32 rounding; re-encoding costs.
        EXPECT_GE(got["native"].top1, 0.99);
        EXPECT_LT(got["native"].meanKl, 1e-6);
        EXPECT_GT(got["vq3r"].meanKl, 100 * got["native"].meanKl);
        EXPECT_GT(got["q4"].meanKl, 100 * got["native"].meanKl);
        EXPECT_GE(int(ids.size()), 200);
    }
}
