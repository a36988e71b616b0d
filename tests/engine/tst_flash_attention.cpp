// The blocked attention (model/flash_attention.hpp) against a float64 reference written from
// its definition, and the causal shortcut it takes for queries in order of position (a pass's
// run of tokens): each query's outputs are the same bits as when the same queries come in any
// other order, where every block's products take every query.
#include <gtest/gtest.h>

#include "model/flash_attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace {

struct Problem {
    int64_t dk = 40, dv = 72, positions = 700;
    std::vector<float> keys, values, q;
    std::vector<int> pos, first;
    std::vector<float> sinks;
};

// m queries at ascending positions (runs of equal positions, as a token's heads), over
// `positions` cached rows; window > 0 gives each query the first position pos - window + 1.
Problem makeProblem(int m, int window, bool sinks, unsigned seed)
{
    Problem p;
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0.0f, 1.0f);
    p.keys.resize(size_t(p.positions * p.dk));
    p.values.resize(size_t(p.positions * p.dv));
    p.q.resize(size_t(m) * size_t(p.dk));
    for (float &v : p.keys)
        v = g(rng);
    for (float &v : p.values)
        v = g(rng);
    for (float &v : p.q)
        v = g(rng);
    std::uniform_int_distribution<int> at(0, int(p.positions) - 1);
    for (int t = 0; t < m; ++t)
        p.pos.push_back(at(rng));
    std::sort(p.pos.begin(), p.pos.end());
    if (window > 0)
        for (int t = 0; t < m; ++t)
            p.first.push_back(std::max(0, p.pos[size_t(t)] - window + 1));
    if (sinks)
        for (int t = 0; t < m; ++t)
            p.sinks.push_back(g(rng));
    return p;
}

std::vector<float> attend(const Problem &p, const std::vector<int> &order)
{
    const int m = int(order.size());
    std::vector<float> q(size_t(m) * size_t(p.dk)), sinks;
    std::vector<int> pos, first;
    for (int i = 0; i < m; ++i) {
        const int t = order[size_t(i)];
        std::copy_n(p.q.data() + t * p.dk, p.dk, q.data() + i * p.dk);
        pos.push_back(p.pos[size_t(t)]);
        if (!p.first.empty())
            first.push_back(p.first[size_t(t)]);
        if (!p.sinks.empty())
            sinks.push_back(p.sinks[size_t(t)]);
    }
    const waste::model::AttentionQueries queries{q.data(), p.dk, m, pos.data(), first.empty() ? nullptr : first.data(),
                                                 sinks.empty() ? nullptr : sinks.data()};
    std::vector<float> out(size_t(m) * size_t(p.dv));
    const float *k = p.keys.data(), *v = p.values.data();
    const int64_t dk = p.dk, dv = p.dv;
    waste::model::flashAttention(queries, p.dk, [k, dk](int64_t s) { return k + s * dk; },
                                 [v, dv](int64_t s) { return v + s * dv; }, p.dv, 0.125f, nullptr, out.data(), p.dv);
    // Back into the problem's order.
    std::vector<float> back(out.size());
    for (int i = 0; i < m; ++i)
        std::copy_n(out.data() + i * p.dv, p.dv, back.data() + order[size_t(i)] * p.dv);
    return back;
}

// softmax over the visible positions (and the sink, which takes weight and gives no value).
std::vector<double> reference(const Problem &p, int t)
{
    const int lo = p.first.empty() ? 0 : p.first[size_t(t)], hi = p.pos[size_t(t)];
    std::vector<double> z;
    double top = p.sinks.empty() ? -INFINITY : double(p.sinks[size_t(t)]);
    for (int s = lo; s <= hi; ++s) {
        double dot = 0;
        for (int64_t c = 0; c < p.dk; ++c)
            dot += double(p.q[size_t(t * p.dk + c)]) * double(p.keys[size_t(s * p.dk + c)]);
        z.push_back(0.125 * dot);
        top = std::max(top, z.back());
    }
    double sum = p.sinks.empty() ? 0.0 : std::exp(double(p.sinks[size_t(t)]) - top);
    std::vector<double> out(size_t(p.dv), 0.0);
    for (int s = lo; s <= hi; ++s) {
        const double w = std::exp(z[size_t(s - lo)] - top);
        sum += w;
        for (int64_t c = 0; c < p.dv; ++c)
            out[size_t(c)] += w * double(p.values[size_t(s * p.dv + c)]);
    }
    for (double &v : out)
        v /= sum;
    return out;
}

struct Shape {
    int queries, window;
    bool sinks;
};

class FlashAttention : public ::testing::TestWithParam<Shape> {};

TEST_P(FlashAttention, MatchesFloat64AndTheBitsOfAnyOrder)
{
    const Shape s = GetParam();
    const Problem p = makeProblem(s.queries, s.window, s.sinks, 17u + unsigned(s.queries) + unsigned(s.window));
    std::vector<int> inOrder(size_t(s.queries));
    std::iota(inOrder.begin(), inOrder.end(), 0);
    const std::vector<float> ordered = attend(p, inOrder);

    double worst = 0;
    for (int t = 0; t < s.queries; ++t) {
        const std::vector<double> want = reference(p, t);
        for (int64_t c = 0; c < p.dv; ++c)
            worst = std::max(worst, std::abs(double(ordered[size_t(t * p.dv + c)]) - want[size_t(c)]));
    }
    EXPECT_LT(worst, 1e-5);

    // Shuffled, the positions are out of order: every block takes every query.
    std::vector<int> shuffled = inOrder;
    std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(5));
    ASSERT_NE(shuffled, inOrder);
    const std::vector<float> any = attend(p, shuffled);
    EXPECT_EQ(0, std::memcmp(ordered.data(), any.data(), ordered.size() * sizeof(float)))
        << "a query's outputs moved with the order of the others";
}

INSTANTIATE_TEST_SUITE_P(CausalWindowsAndSinks, FlashAttention,
                         ::testing::Values(Shape{300, 0, false}, Shape{300, 100, false}, Shape{257, 0, true},
                                           Shape{200, 64, true}, Shape{5, 0, false}),
                         [](const ::testing::TestParamInfo<Shape> &i) {
                             return std::to_string(i.param.queries) + "_queries_window_" +
                                    std::to_string(i.param.window) + (i.param.sinks ? "_sinks" : "");
                         });

} // namespace
