// The converter's nearest-entry search (quant/nearest_entry): every SIMD level this CPU
// has picks the same entry and the same partial distance, bit for bit, as the scalar
// definition, over batch lengths that leave every possible tail, duplicated entries
// (the lowest id wins), vectors that sit exactly on an entry, near ties, and inputs that
// are not finite. The expanded distance may round a near tie differently from the direct
// one; the pick must still be a nearest entry to within that rounding.
#include "convert/random.hpp"
#include "quant/nearest_entry.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

using namespace waste::quant;
using waste::convert::gaussian;

namespace {

std::vector<SimdLevel> levelsHere() {
    std::vector<SimdLevel> l{SimdLevel::Scalar};
    if (static_cast<int>(detectSimd()) >= static_cast<int>(SimdLevel::Avx2)) l.push_back(SimdLevel::Avx2);
    if (detectSimd() == SimdLevel::Avx512) l.push_back(SimdLevel::Avx512);
    return l;
}

std::vector<float> gaussians(size_t n, uint64_t key, double sigma) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(gaussian(key, i) * sigma);
    return v;
}

struct Picks {
    std::vector<int32_t> idx;
    std::vector<float> part;
};

Picks run(SimdLevel lvl, const NearestTable &t, const std::vector<float> &x) {
    const size_t n = x.size() / kNearestDim;
    Picks p{std::vector<int32_t>(n, -1), std::vector<float>(n, -1.0f)};
    nearestFor(lvl).search(t.m2.data(), t.norm.data(), t.entries, x.data(), n, p.idx.data(), p.part.data());
    return p;
}

void expectSameEverywhere(const NearestTable &t, const std::vector<float> &x, const char *what) {
    const Picks ref = run(SimdLevel::Scalar, t, x);
    for (SimdLevel lvl : levelsHere()) {
        const Picks p = run(lvl, t, x);
        for (size_t i = 0; i < ref.idx.size(); ++i) {
            ASSERT_EQ(p.idx[i], ref.idx[i]) << what << ", " << simdName(lvl) << ", vector " << i;
            // Compared as bits: NaN partial distances must agree too.
            ASSERT_EQ(std::memcmp(&p.part[i], &ref.part[i], sizeof(float)), 0) << what << ", " << simdName(lvl) << ", vector " << i;
        }
    }
}

double directDistance(const float *x, const float *c) {
    double s = 0;
    for (int d = 0; d < kNearestDim; ++d) s += (double(x[d]) - c[d]) * (double(x[d]) - c[d]);
    return s;
}

} // namespace

TEST(NearestEntry, EveryLevelPicksTheSameEntriesForEveryTail) {
    std::printf("levels on this CPU:");
    for (SimdLevel l : levelsHere()) std::printf(" %s", simdName(l));
    std::printf("\n");
    const auto book = gaussians(256 * kNearestDim, 77, 0.3);
    const NearestTable t = prepareNearestTable(book.data(), 256);
    // Every batch length from 0 to 70 covers empty, partial and full blocks of 8, 16 and 32.
    for (size_t n = 0; n <= 70; ++n) expectSameEverywhere(t, gaussians(n * kNearestDim, 1000 + n, 0.3), "tail");
    expectSameEverywhere(t, gaussians(20000 * kNearestDim, 99, 0.3), "20000 vectors");
}

TEST(NearestEntry, TiesGoToTheLowestEntryOnEveryLevel) {
    auto book = gaussians(256 * kNearestDim, 5, 0.3);
    for (int d = 0; d < kNearestDim; ++d) {
        book[17 * kNearestDim + d] = book[5 * kNearestDim + d];   // 5 and 17 identical
        book[200 * kNearestDim + d] = book[201 * kNearestDim + d]; // 200 and 201 identical
    }
    const NearestTable t = prepareNearestTable(book.data(), 256);
    std::vector<float> x;
    for (int k = 0; k < 37; ++k)
        for (int d = 0; d < kNearestDim; ++d) x.push_back(book[(k % 2 ? 17 : 201) * kNearestDim + d]);
    expectSameEverywhere(t, x, "on duplicated entries");
    const Picks p = run(detectSimd(), t, x);
    for (size_t i = 0; i < p.idx.size(); ++i) EXPECT_EQ(p.idx[i], i % 2 ? 5 : 200) << i;
    // Midway between two entries: the direct distances tie, the expanded ones may not;
    // whatever is picked, every level picks it.
    std::vector<float> mid;
    for (int k = 0; k < 255; ++k)
        for (int d = 0; d < kNearestDim; ++d) mid.push_back(0.5f * (book[k * kNearestDim + d] + book[(k + 1) * kNearestDim + d]));
    expectSameEverywhere(t, mid, "midpoints");
}

TEST(NearestEntry, NonFiniteInputsAgreeAcrossLevels) {
    const auto book = gaussians(100 * kNearestDim, 8, 1.0); // 100 entries: not a multiple of any width
    const NearestTable t = prepareNearestTable(book.data(), 100);
    auto x = gaussians(40 * kNearestDim, 9, 1.0);
    x[3 * kNearestDim] = std::numeric_limits<float>::quiet_NaN();
    x[7 * kNearestDim + 2] = std::numeric_limits<float>::infinity();
    x[11 * kNearestDim + 5] = -std::numeric_limits<float>::infinity();
    x[13 * kNearestDim + 1] = 3e38f; // finite, but -2 x.c overflows
    expectSameEverywhere(t, x, "non-finite");
    const Picks p = run(SimdLevel::Scalar, t, x);
    EXPECT_EQ(p.idx[3], 0); // NaN beats nothing: the search keeps its starting entry
}

TEST(NearestEntry, PicksANearestEntryWithinRounding) {
    const auto book = gaussians(256 * kNearestDim, 21, 0.3);
    const NearestTable t = prepareNearestTable(book.data(), 256);
    const auto x = gaussians(5000 * kNearestDim, 22, 0.3);
    const Picks p = run(detectSimd(), t, x);
    int exact = 0;
    for (size_t i = 0; i < p.idx.size(); ++i) {
        const float *v = &x[i * kNearestDim];
        double best = std::numeric_limits<double>::infinity();
        int bestIdx = -1;
        for (int c = 0; c < 256; ++c) {
            const double dd = directDistance(v, &book[c * kNearestDim]);
            if (dd < best) { best = dd; bestIdx = c; }
        }
        const double got = directDistance(v, &book[static_cast<size_t>(p.idx[i]) * kNearestDim]);
        double scale = 0; // the size of the terms the expanded form adds
        for (int d = 0; d < kNearestDim; ++d) scale += double(v[d]) * v[d];
        ASSERT_LE(got - best, 1e-5 * (scale + 1.0)) << i;
        // The partial distance plus |x|^2 is the direct distance, to float rounding.
        EXPECT_NEAR(p.part[i] + scale, got, 1e-5 * (scale + 1.0)) << i;
        exact += p.idx[i] == bestIdx;
    }
    EXPECT_GE(exact, 4990); // random vectors: near ties are rare
}
