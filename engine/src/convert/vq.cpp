#include "convert/vq.hpp"

#include "convert/parallel.hpp"
#include "convert/random.hpp"
#include "format/f16.hpp"
#include "quant/nearest_entry.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace waste::convert {

static_assert(VqGeometry::dim == quant::kNearestDim, "the nearest-entry kernels search 8-wide vectors");

namespace {

constexpr size_t kChunk = 4096; // vectors per work item: fixed, so sums reduce in a fixed order
constexpr int kDim = quant::kNearestDim;

// Squared distance in double, in one fixed order: it only picks the vector an empty
// cluster moves to, so it must not depend on threads (it is computed per vector).
double squaredDistance(const float *x, const float *c) {
    double s = 0.0;
    for (int d = 0; d < kDim; ++d) {
        const double e = static_cast<double>(x[d]) - static_cast<double>(c[d]);
        s += e * e;
    }
    return s;
}

// Vectors a Lloyd pass uses: the first quarter of the (shuffled) sample for the first
// 40 % of the passes, where centroids still move far and a rough mean is enough, half
// for the next 30 %, all of it for the last 30 %, which settle the centroids. Costs
// 55 % of full passes throughout; on bench_convert's source the experts' error is
// 19.44 % against 19.39 % with full passes, and 19.31 % against 19.27 % on twice
// the sample.
size_t passVectors(int pass, int passes, size_t total, int k) {
    const size_t floor = std::min(total, static_cast<size_t>(k) * 16);
    size_t n = total;
    if (pass * 10 < passes * 4) n = total / 4;
    else if (pass * 10 < passes * 7) n = total / 2;
    return std::max(n, floor);
}

std::vector<float> kmeans(const float *x, size_t total, int k, int dim, int iterations, int threads, uint64_t seed) {
    std::vector<float> centroids(static_cast<size_t>(k) * dim, 0.0f);
    if (total == 0) return centroids;
    size_t count = total;
    // Initial centroids: k distinct training vectors picked by a seeded partial shuffle.
    {
        std::vector<uint32_t> order(count);
        std::iota(order.begin(), order.end(), 0u);
        Rng rng(seed);
        const size_t picks = std::min<size_t>(static_cast<size_t>(k), count);
        for (size_t i = 0; i < picks; ++i) std::swap(order[i], order[i + rng.below(count - i)]);
        for (int c = 0; c < k; ++c) {
            const size_t src = order[static_cast<size_t>(c) % picks];
            std::memcpy(&centroids[static_cast<size_t>(c) * dim], x + src * dim, sizeof(float) * dim);
        }
    }
    const size_t maxChunks = (total + kChunk - 1) / kChunk;
    std::vector<int32_t> assign(total);
    std::vector<double> dist;
    std::vector<double> sums(maxChunks * static_cast<size_t>(k) * dim);
    std::vector<uint32_t> counts(maxChunks * static_cast<size_t>(k));
    for (int it = 0; it < iterations; ++it) {
        count = passVectors(it, iterations, total, k);
        const size_t chunks = (count + kChunk - 1) / kChunk;
        const quant::NearestTable table = quant::prepareNearestTable(centroids.data(), k);
        std::fill(sums.begin(), sums.end(), 0.0);
        std::fill(counts.begin(), counts.end(), 0u);
        parallelFor(chunks, threads, [&](size_t ch) {
            double *s = &sums[ch * static_cast<size_t>(k) * dim];
            uint32_t *n = &counts[ch * static_cast<size_t>(k)];
            const size_t b = ch * kChunk, e = std::min(count, b + kChunk);
            quant::nearestEntries(table, x + b * dim, e - b, &assign[b]);
            for (size_t i = b; i < e; ++i) {
                const int c = assign[i];
                ++n[c];
                for (int d = 0; d < dim; ++d) s[static_cast<size_t>(c) * dim + d] += x[i * dim + d];
            }
        });
        std::vector<double> total(static_cast<size_t>(k) * dim, 0.0);
        std::vector<uint64_t> totalCount(k, 0);
        for (size_t ch = 0; ch < chunks; ++ch) {
            for (size_t j = 0; j < total.size(); ++j) total[j] += sums[ch * total.size() + j];
            for (int c = 0; c < k; ++c) totalCount[c] += counts[ch * k + c];
        }
        // Distances to the centroids just used, only when a cluster came out empty.
        if (std::find(totalCount.begin(), totalCount.end(), 0u) != totalCount.end()) {
            dist.resize(count);
            for (size_t i = 0; i < count; ++i)
                dist[i] = squaredDistance(x + i * dim, &centroids[static_cast<size_t>(assign[i]) * dim]);
        }
        for (int c = 0; c < k; ++c) {
            float *dst = &centroids[static_cast<size_t>(c) * dim];
            if (totalCount[c] > 0) {
                for (int d = 0; d < dim; ++d)
                    dst[d] = static_cast<float>(total[static_cast<size_t>(c) * dim + d] / static_cast<double>(totalCount[c]));
            } else {
                // Empty cluster: move it onto the worst-served vector (lowest index on ties).
                size_t worst = 0;
                for (size_t i = 1; i < count; ++i)
                    if (dist[i] > dist[worst]) worst = i;
                std::memcpy(dst, x + worst * dim, sizeof(float) * dim);
                dist[worst] = -1.0;
            }
        }
    }
    return centroids;
}

Codebook roundCodebook(const std::vector<float> &centroids) {
    Codebook cb;
    cb.half.resize(centroids.size());
    cb.value.resize(centroids.size());
    for (size_t i = 0; i < centroids.size(); ++i) {
        cb.half[i] = format::floatToF16FlushSubnormal(centroids[i]);
        cb.value[i] = format::f16ToFloat(cb.half[i]);
    }
    return cb;
}

} // namespace

std::vector<Codebook> fitResidualCodebooks(std::span<const float> vectors, const VqGeometry &geom,
                                           const KMeansOptions &options) {
    if (geom.entries < 1 || geom.entries > 256 || geom.dim < 1 || geom.stages < 1)
        throw Error(ErrorCode::Argument, "VQ geometry out of range (entries 1..256, dim >= 1, stages >= 1)");
    const size_t count = vectors.size() / static_cast<size_t>(geom.dim);
    std::vector<float> residual(vectors.begin(), vectors.begin() + static_cast<ptrdiff_t>(count * geom.dim));
    // Shuffled once, so that the shorter k-means passes (a prefix) are random samples
    // whatever order the vectors came in.
    {
        Rng rng(mix64(options.seed ^ 0x5348554646ull));
        for (size_t i = 0; i + 1 < count; ++i) {
            const size_t j = i + rng.below(count - i);
            if (j != i) std::swap_ranges(&residual[i * geom.dim], &residual[(i + 1) * geom.dim], &residual[j * geom.dim]);
        }
    }
    std::vector<Codebook> books;
    for (int s = 0; s < geom.stages; ++s) {
        const uint64_t stageSeed = mix64(options.seed ^ mix64(0x5354414745ull + static_cast<uint64_t>(s)));
        books.push_back(roundCodebook(
            kmeans(residual.data(), count, geom.entries, geom.dim, options.iterations, options.threads, stageSeed)));
        if (s + 1 == geom.stages) break;
        // The next stage learns what this one (as stored, in f16) leaves behind.
        const quant::NearestTable table = quant::prepareNearestTable(books.back().value.data(), geom.entries);
        const size_t chunks = (count + kChunk - 1) / kChunk;
        parallelFor(chunks, options.threads, [&](size_t ch) {
            const size_t b = ch * kChunk, e = std::min(count, b + kChunk);
            int32_t idx[kChunk];
            quant::nearestEntries(table, &residual[b * geom.dim], e - b, idx);
            for (size_t i = b; i < e; ++i) {
                float *v = &residual[i * geom.dim];
                const float *cv = &books.back().value[static_cast<size_t>(idx[i - b]) * geom.dim];
                for (int d = 0; d < geom.dim; ++d) v[d] -= cv[d];
            }
        });
    }
    return books;
}

uint16_t rowScaleHalf(const float *row, int64_t n) {
    float amax = 0.0f;
    for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(row[i]));
    if (!(amax > 0.0f)) return 0;
    uint16_t h = format::floatToF16(std::min(amax, 65504.0f));
    if (h == 0) h = 1; // smaller than the least f16: keep a nonzero scale
    return h;
}

void vqEncodeMatrix(const float *w, int64_t rows, int64_t cols, const std::vector<Codebook> &books,
                    const VqGeometry &geom, uint8_t *indices, uint16_t *scales, VqScratch *scratch) {
    if (cols % geom.dim != 0)
        throw Error(ErrorCode::Format, "expert matrix width " + std::to_string(cols) + " is not a multiple of the VQ vector size");
    const int64_t nv = cols / geom.dim, B = geom.block, S = geom.stages;
    std::memset(indices, 0, static_cast<size_t>(format::indexBytes(rows, cols, geom.stages, geom.indexBits)));
    // The whole matrix, each row divided by its scale, is searched one stage at a time:
    // one long batch per stage keeps the SIMD lanes full whatever the row width.
    VqScratch local;
    VqScratch &work = scratch ? *scratch : local;
    if (work.x.size() < static_cast<size_t>(rows * cols)) work.x.resize(static_cast<size_t>(rows * cols));
    float *x = work.x.data();
    for (int64_t r = 0; r < rows; ++r) {
        const float *row = w + r * cols;
        const uint16_t h = rowScaleHalf(row, cols);
        scales[r] = h;
        const float scale = format::f16ToFloat(h);
        const float inv = scale > 0.0f ? 1.0f / scale : 0.0f;
        for (int64_t i = 0; i < cols; ++i) x[static_cast<size_t>(r * cols + i)] = row[i] * inv;
    }
    const size_t count = static_cast<size_t>(rows * nv);
    if (work.idx.size() < count) work.idx.resize(count);
    int32_t *idx = work.idx.data();
    for (int64_t s = 0; s < S; ++s) {
        const Codebook &book = books[static_cast<size_t>(s)];
        const quant::NearestTable table = quant::prepareNearestTable(book.value.data(), geom.entries);
        quant::nearestEntries(table, x, count, idx);
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t v = 0; v < nv; ++v) {
                const size_t i = static_cast<size_t>(r * nv + v);
                indices[(((r / B) * nv + v) * B + (r % B)) * S + s] = static_cast<uint8_t>(idx[i]);
                if (s + 1 == S) continue;
                float *xv = &x[i * geom.dim];
                const float *cv = &book.value[static_cast<size_t>(idx[i]) * geom.dim];
                for (int d = 0; d < geom.dim; ++d) xv[d] -= cv[d];
            }
    }
}

void vqDecodeMatrix(const uint8_t *indices, const uint16_t *scales, int64_t rows, int64_t cols,
                    const std::vector<Codebook> &books, const VqGeometry &geom, float *out) {
    const int64_t nv = cols / geom.dim, B = geom.block, S = geom.stages;
    for (int64_t r = 0; r < rows; ++r) {
        const float scale = format::f16ToFloat(scales[r]);
        for (int64_t v = 0; v < nv; ++v) {
            const uint8_t *idx = indices + (((r / B) * nv + v) * B + (r % B)) * S;
            for (int d = 0; d < geom.dim; ++d) {
                float sum = 0.0f;
                for (int s = 0; s < S; ++s) sum += books[s].value[static_cast<size_t>(idx[s]) * geom.dim + d];
                out[r * cols + v * geom.dim + d] = scale * sum;
            }
        }
    }
}

} // namespace waste::convert
