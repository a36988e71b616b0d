// Row-kernel throughput of the native expert formats (quant/native_rows.hpp) at every SIMD
// level this CPU runs: one thread multiplies a 4096 x 4096 matrix (16.8 M weights, 8.4 to
// 33.6 MB depending on the format, more than the caches hold) by a vector, best of 5.
//   bench_native_rows [--rows N] [--cols N] [--reps N]
// Figures are GB/s of weight bytes (codes plus scales, as stored in the record) and
// G weights/s, per second of the thread's CPU time. Last line: GB/s per format and level,
// and of MXFP4 with int8 activations (quant/mxfp4_q8.hpp).
#include "format/bytes.hpp"
#include "quant/mxfp4_q8.hpp"
#include "quant/native_rows.hpp"

#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

// This thread's CPU seconds: on a machine shared with other builds, wall time mostly
// measures the wait for a core, CPU time the kernel.
double now()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

struct Matrix {
    const char *name;
    int64_t codeBytesPerRow, scaleBytesPerRow;
    std::vector<uint8_t> codes, scales;
};

// Valid codes for each format (no e4m3 NaN, e8m0 exponents near 1, bf16 in a normal range).
Matrix make(const char *name, int64_t rows, int64_t n, std::mt19937 &rng)
{
    Matrix m{name, 0, 0, {}, {}};
    const std::string f = name;
    if (f == "MXFP4" || f == "INT4G32") {
        m.codeBytesPerRow = n / 2;
        m.scaleBytesPerRow = f == "MXFP4" ? n / 32 : n / 32 * 2;
    } else if (f == "FP8B128") {
        m.codeBytesPerRow = n;
        m.scaleBytesPerRow = (n + 127) / 128 * 4;
    } else {
        m.codeBytesPerRow = 2 * n;
    }
    m.codes.resize(size_t(rows * m.codeBytesPerRow));
    for (auto &b : m.codes)
        b = uint8_t(rng());
    m.scales.resize(size_t(rows * m.scaleBytesPerRow));
    if (f == "MXFP4")
        for (auto &s : m.scales)
            s = uint8_t(120 + rng() % 8);
    if (f == "FP8B128") {
        for (auto &b : m.codes)
            if ((b & 0x7f) == 0x7f)
                b = 0x7e;
        for (size_t i = 0; i < m.scales.size(); i += 4)
            waste::format::storeU32(&m.scales[i], 0x3c000000u + (rng() & 0xffff)); // about 2^-7
    }
    if (f == "INT4G32")
        for (size_t i = 0; i < m.scales.size(); i += 2)
            waste::format::storeU16(&m.scales[i], uint16_t(0x3c00 + (rng() & 0x7f))); // about 2^-7
    if (f == "BF16")
        for (size_t i = 0; i < m.codes.size(); i += 2)
            m.codes[i + 1] = uint8_t(0x3c + (m.codes[i + 1] & 0x81)); // sign, exponents near 2^-7
    return m;
}

float row(const waste::quant::NativeRowKernels &k, const Matrix &m, int64_t r, const float *x, int64_t n)
{
    const uint8_t *q = m.codes.data() + r * m.codeBytesPerRow;
    const uint8_t *s = m.scales.data() + r * m.scaleBytesPerRow;
    switch (m.name[0]) {
    case 'M': return k.mxfp4(q, s, x, n);
    case 'F': return k.fp8b128(q, s, x, n);
    case 'I': return k.int4g32(q, s, x, n);
    default: return k.bf16(q, x, n);
    }
}

} // namespace

int main(int argc, char **argv)
{
    int64_t rows = 4096, n = 4096;
    int reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--rows"))
            rows = std::atoll(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--cols"))
            n = std::atoll(argv[i + 1]) / 128 * 128;
        else if (!std::strcmp(argv[i], "--reps"))
            reps = std::atoi(argv[i + 1]);
    }
    using waste::quant::SimdLevel;
    std::vector<SimdLevel> levels{SimdLevel::Scalar};
    for (SimdLevel l : {SimdLevel::Avx2, SimdLevel::Avx512, SimdLevel::Neon})
        if (waste::quant::simdSupported(l))
            levels.push_back(l);
    std::mt19937 rng(1);
    std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(rows));
    for (auto &v : x)
        v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
    std::printf("native rows, one thread, %lld x %lld, best of %d, CPU time\n", (long long)rows, (long long)n, reps);
    std::string last = "native rows GB/s:";
    for (const char *name : {"MXFP4", "FP8B128", "INT4G32", "BF16"}) {
        const Matrix m = make(name, rows, n, rng);
        const double bytes = double(m.codes.size() + m.scales.size());
        last += std::string(" ") + name;
        for (SimdLevel l : levels) {
            const auto &k = waste::quant::nativeRowsFor(l);
            double best = 1e30, check = 0;
            for (int rep = 0; rep < reps; ++rep) {
                const double t0 = now();
                for (int64_t r = 0; r < rows; ++r)
                    y[size_t(r)] = row(k, m, r, x.data(), n);
                best = std::min(best, now() - t0);
                check = y[size_t(rows / 2)];
            }
            std::printf("%-8s %-8s %7.2f GB/s  %6.2f G weights/s  (%.1f MB, row %lld = %g)\n", name,
                        waste::quant::simdName(l), bytes / best / 1e9, double(rows * n) / best / 1e9, bytes / 1e6,
                        (long long)(rows / 2), check);
            char buf[64];
            std::snprintf(buf, sizeof buf, " %s %.2f", waste::quant::simdName(l), bytes / best / 1e9);
            last += buf;
        }
        last += ";";
    }
    // MXFP4 with int8 activations (quant/mxfp4_q8.hpp): the input quantised once per
    // product, its time counted, against the f32 kernel above.
    {
        const Matrix m = make("MXFP4", rows, n, rng);
        const double bytes = double(m.codes.size() + m.scales.size());
        std::vector<int8_t> q(static_cast<size_t>(n));
        std::vector<float> d(static_cast<size_t>(n / 32));
        last += " MXFP4-int8";
        for (SimdLevel l : levels) {
            const waste::quant::Mxfp4Q8Row k = waste::quant::mxfp4Q8For(l);
            double best = 1e30, check = 0;
            for (int rep = 0; rep < reps; ++rep) {
                const double t0 = now();
                waste::quant::quantizeQ8(x.data(), n, q.data(), d.data());
                for (int64_t r = 0; r < rows; ++r)
                    y[size_t(r)] = k(m.codes.data() + r * m.codeBytesPerRow, m.scales.data() + r * m.scaleBytesPerRow, q.data(),
                                     d.data(), n);
                best = std::min(best, now() - t0);
                check = y[size_t(rows / 2)];
            }
            std::printf("%-11s %-8s %7.2f GB/s  %6.2f G weights/s  (row %lld = %g)\n", "MXFP4-int8", waste::quant::simdName(l),
                        bytes / best / 1e9, double(rows * n) / best / 1e9, (long long)(rows / 2), check);
            char buf[64];
            std::snprintf(buf, sizeof buf, " %s %.2f", waste::quant::simdName(l), bytes / best / 1e9);
            last += buf;
        }
        last += ";";
    }
    std::printf("%s\n", last.c_str());
    return 0;
}
