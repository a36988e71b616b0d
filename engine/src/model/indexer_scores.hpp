// The score a sparse-attention indexer gives each cached key (DeepSeek-V3.2's and GLM-5's
// lightning indexer, dsa_indexer.cpp; DeepSeek V4's over its compressed rows,
// compressed_attention.cpp): Σ_h w_h · relu(q_h · k), heads added in order.
//
// Each q·k runs on the panel kernel (quant/panel_gemm.hpp): a block of 64 keys is one panel,
// multiplied by every head of every query that sees the block, so a q·k is one fused
// multiply-add chain in the order of the dims, the same bit for bit at every SIMD level,
// whatever the other queries and however the blocks are split over threads.
#pragma once

#include "compute/thread_pool.hpp"

#include <cstdint>
#include <functional>

namespace waste::model {

struct IndexerQueries {
    const float *q = nullptr;       // query m's heads at q + m * heads * dim, `dim` floats each
    const float *weights = nullptr; // query m's head weights at weights + m * heads
    int64_t heads = 0, dim = 0;
    int64_t count = 0;
    const int64_t *last = nullptr; // query m sees keys 0..last[m]; ascending in m
};

// A cached key's `dim` floats.
using IndexerKey = std::function<const float *(int64_t)>;

// scores[m * stride + t] for every query m and key t <= last[m] (the rest untouched).
void indexerScores(compute::ThreadPool &pool, const IndexerQueries &queries, const IndexerKey &key, float *scores,
                   int64_t stride);

} // namespace waste::model
