// How much of a MoE layer's expert reads a decoded token waits for, given what the engine
// computes while they are in flight (cache/streamed_expert_source.cpp, model/moe.cpp):
//
//  - A layer's misses are issued together when its router has chosen, so the attention,
//    trunk and router before that, and every other layer's work, cannot hide them.
//  - While they load, the layer runs its "hook" (shared expert, the two VQ tables) and
//    then its hits; each miss is computed as it lands, in arrival order, so a later read
//    also hides behind the earlier misses' compute.
//  - With spare cache slots, the router lookahead reads some of the next layer's experts
//    while this layer computes: those reads hide behind one layer's worth of compute.
#pragma once

namespace waste::plan {

struct LayerReads {
    int topK = 0;
    double hitRate = 0;        // per chosen expert, independently
    double latency = 0;        // one read alone, seconds
    double recordSeconds = 0;  // one record at the queue's bandwidth (further reads stream)
    double hookSeconds = 0;    // the layer's compute before its first record (shared expert, tables)
    double expertSeconds = 0;  // one routed expert's compute
    double lookaheadShare = 0; // share of the misses the lookahead read one layer early
    double layerSeconds = 0;   // all compute of one layer: the window a lookahead read hides in
};

// The j-th read of a batch issued together lands at latency + (j - 1) x recordSeconds.
double landing(const LayerReads &r, int j);
// The layer's wait for `misses` demand reads and `early` lookahead reads, the rest hits.
double layerStall(const LayerReads &r, int misses, int early);
// Its expectation over the misses (binomial in topK at 1 - hitRate) and over which of them
// the lookahead covered (binomial in the misses at lookaheadShare).
double expectedLayerStall(const LayerReads &r);

} // namespace waste::plan
