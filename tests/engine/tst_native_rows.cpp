// The native-record row kernels (quant/native_rows.hpp) at every SIMD level this CPU has:
// - every level returns the scalar kernel's result bit for bit (they all follow the header's
//   16-lane order; ARCHITECTURE.md asks new expert formats for bit-identity across levels);
// - each element code decodes exactly, in every lane (a row with one nonzero term has an
//   exact result);
// - random rows, with the edge values of each encoding (e4m3 subnormals, e8m0 exponents
//   0..254, bf16 subnormals, tiny and huge bf16 scales), are within 1e-5 of Σ|terms| of a
//   float64 sum of the decoded weights (the bound tst_simd holds the other kernels to);
// - valid data never yields a NaN or an infinity.
#include <gtest/gtest.h>

#include "format/bytes.hpp"
#include "format/native_values.hpp"
#include "quant/native_rows.hpp"

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

using waste::quant::NativeRowKernels;
using waste::quant::SimdLevel;

namespace {

struct Level {
    SimdLevel lvl;
    const NativeRowKernels *k;
};

// Scalar first, then every SIMD level this CPU supports.
std::vector<Level> levels()
{
    std::vector<Level> out{{SimdLevel::Scalar, &waste::quant::scalarNativeRows()}};
    for (SimdLevel l : {SimdLevel::Avx2, SimdLevel::Avx512, SimdLevel::Neon})
        if (waste::quant::simdSupported(l))
            out.push_back({l, &waste::quant::nativeRowsFor(l)});
    return out;
}

std::string name(SimdLevel l) { return waste::quant::simdName(l); }

// A row in one of the four encodings, with its decoded weights in double.
struct Row {
    int64_t n = 0;
    std::vector<uint8_t> q, scales;
    std::vector<float> x;
    std::vector<double> w; // decoded weight i (scale included)
};

float bf16Round(float f)
{
    uint32_t b;
    std::memcpy(&b, &f, 4);
    b &= 0xffff0000u;
    std::memcpy(&f, &b, 4);
    return f;
}

void putBf16(uint8_t *p, float f)
{
    uint32_t b;
    std::memcpy(&b, &f, 4);
    waste::format::storeU16(p, uint16_t(b >> 16));
}

void putF32(uint8_t *p, float f)
{
    uint32_t b;
    std::memcpy(&b, &f, 4);
    waste::format::storeU32(p, b);
}

uint8_t nibble(const std::vector<uint8_t> &q, int64_t i) { return (i & 1) ? uint8_t(q[i >> 1] >> 4) : uint8_t(q[i >> 1] & 15); }

// Evaluates one format's kernel on a row.
using RowFn = std::function<float(const NativeRowKernels &, const Row &)>;

const RowFn kMxfp4 = [](const NativeRowKernels &k, const Row &r) { return k.mxfp4(r.q.data(), r.scales.data(), r.x.data(), r.n); };
const RowFn kFp8 = [](const NativeRowKernels &k, const Row &r) { return k.fp8b128(r.q.data(), r.scales.data(), r.x.data(), r.n); };
const RowFn kInt4 = [](const NativeRowKernels &k, const Row &r) { return k.int4g32(r.q.data(), r.scales.data(), r.x.data(), r.n); };
const RowFn kBf16 = [](const NativeRowKernels &k, const Row &r) { return k.bf16(r.q.data(), r.x.data(), r.n); };

void fillX(Row &r, std::mt19937 &rng, float amplitude)
{
    std::uniform_real_distribution<float> u(-amplitude, amplitude);
    r.x.resize(size_t(r.n));
    for (auto &v : r.x)
        v = u(rng);
}

// MXFP4: every nibble; exponents drawn from [eLo, eHi].
Row mxfp4Row(int64_t n, std::mt19937 &rng, int eLo, int eHi, float amplitude)
{
    Row r;
    r.n = n;
    r.q.resize(size_t(n / 2));
    r.scales.resize(size_t(n / 32));
    for (auto &b : r.q)
        b = uint8_t(rng());
    std::uniform_int_distribution<int> e(eLo, eHi);
    for (auto &s : r.scales)
        s = uint8_t(e(rng));
    fillX(r, rng, amplitude);
    for (int64_t i = 0; i < n; ++i)
        r.w.push_back(double(waste::format::e2m1Value(nibble(r.q, i))) * std::ldexp(1.0, int(r.scales[i / 32]) - 127));
    return r;
}

// FP8 e4m3: any code but the two NaNs (0x7f, 0xff), which valid weights never hold.
// subnormalOnly draws exponent 0 only (codes S.0000.MMM).
Row fp8Row(int64_t n, std::mt19937 &rng, bool subnormalOnly)
{
    Row r;
    r.n = n;
    r.q.resize(size_t(n));
    for (auto &b : r.q) {
        do
            b = uint8_t(rng());
        while ((b & 0x7f) == 0x7f);
        if (subnormalOnly)
            b &= 0x87;
    }
    const int64_t blocks = (n + 127) / 128;
    r.scales.resize(size_t(blocks * 4));
    std::uniform_real_distribution<float> s(1e-4f, 4e-2f);
    for (int64_t b = 0; b < blocks; ++b)
        putF32(r.scales.data() + 4 * b, s(rng));
    fillX(r, rng, 2.0f);
    for (int64_t i = 0; i < n; ++i)
        r.w.push_back(double(waste::format::e4m3Value(r.q[i])) * waste::format::loadF32(r.scales.data() + 4 * (i / 128)));
    return r;
}

// INT4 groups of 32 with bf16 scales of either sign and magnitudes around `scale`.
Row int4Row(int64_t n, std::mt19937 &rng, float scale)
{
    Row r;
    r.n = n;
    r.q.resize(size_t(n / 2));
    for (auto &b : r.q)
        b = uint8_t(rng());
    r.scales.resize(size_t(n / 32) * 2);
    std::uniform_real_distribution<float> s(-scale, scale);
    for (int64_t g = 0; g < n / 32; ++g)
        putBf16(r.scales.data() + 2 * g, bf16Round(s(rng)));
    fillX(r, rng, 2.0f);
    for (int64_t i = 0; i < n; ++i)
        r.w.push_back(double(int(nibble(r.q, i)) - 8) * waste::format::bf16Value(r.scales.data() + 2 * (i / 32)));
    return r;
}

// BF16 weights over a wide range of exponents, a few zeros and subnormals among them.
Row bf16Row(int64_t n, std::mt19937 &rng)
{
    Row r;
    r.n = n;
    r.q.resize(size_t(n) * 2);
    std::uniform_real_distribution<float> m(-1.0f, 1.0f);
    std::uniform_int_distribution<int> e(-20, 4);
    for (int64_t i = 0; i < n; ++i) {
        float v = std::ldexp(m(rng), e(rng));
        if (i % 37 == 5)
            v = 0.0f;
        if (i % 41 == 7)
            v = std::ldexp(m(rng), -130); // a bf16 subnormal
        putBf16(r.q.data() + 2 * i, bf16Round(v));
    }
    fillX(r, rng, 2.0f);
    for (int64_t i = 0; i < n; ++i)
        r.w.push_back(waste::format::bf16Value(r.q.data() + 2 * i));
    return r;
}

// Every level the scalar result bit for bit, within 1e-5 Σ|terms| of the float64 sum, and
// finite. The absolute floor (one f32 subnormal step per term) only matters for rows whose
// products are subnormal (e8m0 exponents near 0).
void checkRow(const Row &r, const RowFn &f, const char *what)
{
    double ref = 0, mag = 0;
    for (int64_t i = 0; i < r.n; ++i) {
        ref += r.w[size_t(i)] * r.x[size_t(i)];
        mag += std::fabs(r.w[size_t(i)] * r.x[size_t(i)]);
    }
    const double tol = 1e-5 * mag + double(r.n) * std::ldexp(1.0, -149);
    const float scalar = f(waste::quant::scalarNativeRows(), r);
    for (const Level &l : levels()) {
        const float got = f(*l.k, r);
        ASSERT_TRUE(std::isfinite(got)) << what << " n=" << r.n << " at " << name(l.lvl);
        EXPECT_LE(std::fabs(double(got) - ref), tol) << what << " n=" << r.n << " at " << name(l.lvl) << ": " << got
                                                     << " vs float64 " << ref;
        EXPECT_EQ(std::memcmp(&got, &scalar, sizeof got), 0)
            << what << " n=" << r.n << " at " << name(l.lvl) << ": " << got << " vs scalar " << scalar;
    }
}

} // namespace

TEST(NativeRows, LevelsUnderTest)
{
    // Names the levels the other tests cover on this CPU, and checks that every SIMD level
    // it runs has its own set (a missing one would quietly serve the scalar kernels).
    std::string s;
    for (const Level &l : levels()) {
        s += name(l.lvl) + " ";
        if (l.lvl != SimdLevel::Scalar)
            EXPECT_NE(l.k->mxfp4, waste::quant::scalarNativeRows().mxfp4) << name(l.lvl);
    }
    std::printf("native rows at: %s\n", s.c_str());
}

TEST(NativeRows, Mxfp4EveryCodeInEveryLaneIsExact)
{
    // Exponents 0 and 1 put the result among the f32 subnormals (2^-127 * 0.5 = 2^-128 is
    // the smallest product); 254 with x = 2^-3 keeps 6 * 2^127 * 2^-3 finite. The scale the
    // kernels build from its bits is first checked against ldexp for every exponent.
    for (int e = 0; e < 255; ++e)
        ASSERT_EQ(double(waste::format::e8m0Scale(uint8_t(e))), std::ldexp(1.0, e - 127)) << "e " << e;
    EXPECT_TRUE(std::isnan(waste::format::e8m0Scale(255)));
    for (const Level &l : levels())
        for (int e : {0, 1, 2, 100, 127, 128, 200, 254})
            for (int code = 0; code < 16; ++code)
                for (int64_t pos = 0; pos < 64; ++pos) {
                    std::vector<uint8_t> q(32, 0), sc(2, uint8_t(e));
                    q[size_t(pos / 2)] = uint8_t((pos & 1) ? code << 4 : code);
                    std::vector<float> x(64, 0.0f);
                    x[size_t(pos)] = 0.125f;
                    const float want = float(double(waste::format::e2m1Value(uint8_t(code))) * std::ldexp(1.0, e - 127) * 0.125);
                    const float got = l.k->mxfp4(q.data(), sc.data(), x.data(), 64);
                    ASSERT_EQ(got, want) << name(l.lvl) << " code " << code << " e " << e << " lane " << pos;
                }
}

TEST(NativeRows, Fp8EveryCodeInEveryLaneIsExact)
{
    // Including the 14 subnormals (S.0000.MMM, m * 2^-9) and the largest, 0x7e = 448.
    for (const Level &l : levels())
        for (int code = 0; code < 256; ++code) {
            if ((code & 0x7f) == 0x7f)
                continue;
            for (int64_t n : {int64_t(130), int64_t(256)})
                for (int64_t pos = 0; pos < n; ++pos) {
                    std::vector<uint8_t> q(size_t(n), 0), sc(8);
                    putF32(sc.data(), 0.5f);
                    putF32(sc.data() + 4, 2.0f);
                    q[size_t(pos)] = uint8_t(code);
                    std::vector<float> x(size_t(n), 0.0f);
                    x[size_t(pos)] = 1.0f;
                    const float want = waste::format::e4m3Value(uint8_t(code)) * (pos < 128 ? 0.5f : 2.0f);
                    const float got = l.k->fp8b128(q.data(), sc.data(), x.data(), n);
                    ASSERT_EQ(got, want) << name(l.lvl) << " code " << code << " lane " << pos << " n " << n;
                }
        }
}

TEST(NativeRows, Int4AndBf16EveryCodeInEveryLaneIsExact)
{
    for (const Level &l : levels()) {
        for (int code = 0; code < 16; ++code)
            for (int64_t pos = 0; pos < 64; ++pos) {
                std::vector<uint8_t> q(32, 0x88), sc(4); // 0x88: both nibbles are 0 after -8
                putBf16(sc.data(), -0.375f);
                putBf16(sc.data() + 2, 3.0f);
                q[size_t(pos / 2)] = uint8_t((pos & 1) ? (0x08 | code << 4) : (0x80 | code));
                std::vector<float> x(64, 0.0f);
                x[size_t(pos)] = 1.0f;
                const float want = float(code - 8) * (pos < 32 ? -0.375f : 3.0f);
                ASSERT_EQ(l.k->int4g32(q.data(), sc.data(), x.data(), 64), want)
                    << name(l.lvl) << " int4 code " << code << " lane " << pos;
            }
        // Every finite bf16 (subnormals too), in lanes cycling through a 37-wide row.
        for (uint32_t h = 0; h < 0x10000; ++h) {
            if ((h & 0x7f80) == 0x7f80)
                continue; // infinities and NaNs are not weights
            const int64_t n = 37, pos = int64_t(h % 37);
            std::vector<uint8_t> w(size_t(n) * 2, 0);
            waste::format::storeU16(w.data() + 2 * pos, uint16_t(h));
            std::vector<float> x(size_t(n), 0.0f);
            x[size_t(pos)] = 1.0f;
            const float want = waste::format::bf16Value(w.data() + 2 * pos);
            const float got = l.k->bf16(w.data(), x.data(), n);
            ASSERT_EQ(std::memcmp(&got, &want, 4) == 0 || (got == 0.0f && want == 0.0f), true)
                << name(l.lvl) << " bf16 " << std::hex << h;
        }
    }
}

TEST(NativeRows, Mxfp4RandomRowsAgree)
{
    std::mt19937 rng(31);
    for (int64_t n : {32, 64, 96, 160, 2048, 2304, 7168}) {
        checkRow(mxfp4Row(n, rng, 110, 130, 2.0f), kMxfp4, "mxfp4 typical");
        checkRow(mxfp4Row(n, rng, 0, 254, std::ldexp(1.0f, -40)), kMxfp4, "mxfp4 any exponent");
        checkRow(mxfp4Row(n, rng, 0, 3, 2.0f), kMxfp4, "mxfp4 subnormal scales");
        checkRow(mxfp4Row(n, rng, 250, 254, std::ldexp(1.0f, -24)), kMxfp4, "mxfp4 huge scales");
    }
}

TEST(NativeRows, Fp8RandomRowsAgree)
{
    std::mt19937 rng(32);
    for (int64_t n : {1, 7, 8, 15, 16, 31, 100, 128, 129, 200, 328, 2304, 7168}) {
        checkRow(fp8Row(n, rng, false), kFp8, "fp8");
        checkRow(fp8Row(n, rng, true), kFp8, "fp8 subnormals");
    }
}

TEST(NativeRows, Int4RandomRowsAgree)
{
    std::mt19937 rng(33);
    for (int64_t n : {32, 64, 96, 160, 2048, 2304, 7168}) {
        checkRow(int4Row(n, rng, 0.02f), kInt4, "int4");
        checkRow(int4Row(n, rng, 1e-30f), kInt4, "int4 tiny scales");
        checkRow(int4Row(n, rng, 1e30f), kInt4, "int4 huge scales");
    }
}

TEST(NativeRows, Bf16RandomRowsAgree)
{
    std::mt19937 rng(34);
    for (int64_t n : {1, 7, 8, 15, 16, 17, 31, 33, 100, 128, 200, 328, 2304, 7168})
        checkRow(bf16Row(n, rng), kBf16, "bf16");
}
