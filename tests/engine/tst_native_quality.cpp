// The quality table of the expert formats: for a quantised release (the tiny K3's MXFP4)
// and a bf16 one (the tiny K3 with bf16 experts), its experts stored three ways
// (--experts native, vq3r, q4; all with the same 16-bit trunk so only the experts differ),
// each run through Model::eval token by token over 200+ positions of text and compared
// with the float64 forward pass over the release's weights (k3_reference on the native
// container): top-1 agreement and mean KL(reference || engine) of the next-token
// distribution, with the record size and the expert bytes read per token. Prints the
// README's table; checks that native is the reference (KL < 1e-6, top-1 >= 99 %) and
// that both re-encodings cost at least 100 times more.
#include "k3_reference.hpp"
#include "native_fixture.hpp"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <span>

using waste::TinyExperts;

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

TEST(NativeQuality, NativeVq3rQ4AgainstTheFloat64PassOverTheRelease)
{
    // For a quantised release (MXFP4, K3's) and a bf16 one: the three ways to store its
    // experts, each with the same 16-bit trunk so that only the experts differ.
    std::printf("\n| release | --experts | record | read per token | top-1 agreement | mean KL (nats) |\n"
                "| --- | --- | --- | --- | --- | --- |\n");
    for (TinyExperts layout : {TinyExperts::MXFP4, TinyExperts::BF16}) {
        const native_fixture::Made &native = native_fixture::made("native-quality", layout, waste::ExpertEncoding::Native);
        const k3ref::Container ct(native.dir);
        const k3ref::Reference ref(ct);
        auto probe = waste::Model::open(native.dir);
        const std::vector<int32_t> ids = probe->tokenize(kText, false);
        ASSERT_GE(ids.size(), 200u);
        std::printf("(%s: %zu positions)\n", waste::tinyExpertsName(layout), ids.size());
        std::vector<k3ref::Vec> want;
        ref.logits(ids, &want);
        std::map<std::string, Quality> got;
        for (auto enc : {waste::ExpertEncoding::Native, waste::ExpertEncoding::VQ3R, waste::ExpertEncoding::Q4}) {
            const native_fixture::Made &m = native_fixture::made("native-quality", layout, enc);
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
