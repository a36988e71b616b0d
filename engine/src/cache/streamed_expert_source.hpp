// The forward pass's expert supply with the cache, direct reads, read-ahead and router
// lookahead behind model::ExpertSource.
//
// fetch(layer, ids): every id is looked up at once; all misses go to the reader threads
// together (read-ahead), resident records are handed over immediately, and the records
// still in flight are handed over in the order they arrive (fetchBatches: all resident
// ones together, then each time a read lands, every record that has landed by then).
// The math sums in selection order whatever the arrival order, so logits do not depend
// on any of this.
// prefetch(layer, ids): speculative reads of the next layer's predicted experts, issued
// from fetch()'s whileReading hook (this layer's records are pinned by then, so a guess
// cannot evict them) and pinned until this fetch ends; never counted as misses.
#pragma once

#include "cache/eviction_policy.hpp"
#include "cache/expert_cache.hpp"
#include "format/expert_bank.hpp"
#include "io/direct_file.hpp"
#include "io/reader_pool.hpp"
#include "model/expert_source.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace waste::cache {

struct StreamOptions {
    int64_t cacheSlots = 0;    // from the budget (resolveBudget().cache_slots)
    bool cacheEnabled = true;  // false: every expert is read every time it is used
    bool readAhead = true;     // false: one read at a time, in selection order
    bool directIo = true;
    bool verifyCrc = false;
    bool ioRing = true;        // io_uring where the kernel allows it (io/reader_pool.hpp), else reader threads
    int readerThreads = -1;    // -1: max(2, top-k), at most 16 (a batch's model asks for more: model_impl.cpp)
    int lookahead = 0;         // experts predicted per layer (0: off)
    // Slots beyond cacheSlots in the floor's prompt room: withheld from the cache until no
    // pass needs that room (ModelImpl::roomToCache), so decoding reads into them meanwhile;
    // never more than the cache lacks to hold every record.
    int64_t roomSlots = 0;
    PolicyKind policy = kDefaultPolicy;
};

class StreamedExpertSource final : public model::ExpertSource {
public:
    // banks: the MoE layers' banks keyed by absolute layer number.
    StreamedExpertSource(std::map<int, std::shared_ptr<format::ExpertBank>> banks, int topK, const StreamOptions &options);
    ~StreamedExpertSource() override;

    void fetch(int layer, std::span<const int> experts, const Consumer &consume, const Hook &whileReading = {}) override;
    void fetchBatches(int layer, std::span<const int> experts, const BatchConsumer &consume,
                      const Hook &whileReading = {}) override;
    // Reads issued in order, as many in flight as slots allow; records handed over in order.
    void fetchInOrder(int layer, std::span<const int> experts, const Consumer &consume,
                      const Hook &whileReading = {}) override;
    model::ExpertFetchStats stats() const override;
    int lookaheadWidth() const override { return m_options.lookahead; }
    void prefetch(int layer, std::span<const int> experts, int rows = 1) override;

    bool directIo() const { return m_directIo; }
    const std::vector<std::string> &warnings() const { return m_warnings; }
    // The cache's slots without the prompt room's (StreamOptions::roomSlots).
    int64_t slots() const { return m_cache ? m_cache->slots() - m_roomSlots : 0; }
    // The prompt room's slots, and how many of them the cache holds now; withholdRoom and
    // restoreRoom move them (ExpertCache::withhold, restore) and return how many moved.
    int roomSlots() const { return m_roomSlots; }
    int roomInCache() const { return m_cache ? m_roomSlots - m_cache->withheld() : 0; }
    int withholdRoom(int count) { return m_cache->withhold(count); }
    int restoreRoom(int count) { return m_cache->restore(count); }
    // RAM lent to a prompt's pass (ExpertCache::lend): slots out of the cache until returned.
    int lendSlots(int count) { return m_cache->lend(count); }
    void returnSlots() { m_cache->returnLent(); }
    int64_t slotBytes() const { return m_cache->slotBytes(); }
    int readerThreads() const { return m_pool ? m_pool->threads() : 0; }
    const ExpertCache &cache() const { return *m_cache; }

    // --learn: the resident records with their use counts (reference usage.waste layout)
    // and the routing of this session (usage.routing.jsonl, read by the planner).
    void saveUsage(const std::string &usagePath) const;
    // Seeds the policy with recorded use and preloads the most used records until the
    // cache is full; returns how many were loaded. A missing file is not an error.
    int warmFrom(const std::string &usagePath);
    // Whether the cache's working slots hold every record of every bank.
    bool holdsEveryExpert() const;
    // Where it does: reads every record into the cache, bank by bank in record order, a
    // bank's reads in flight together, so the first tokens run as fast as the rest instead
    // of filling the cache one miss at a time (and on a virtual machine, paying the
    // guest's first touch of each fresh page while they wait). `progress` gets 0..1 after
    // each bank; false from it stops (Error Cancelled). No statistic counts any of it.
    // Returns how many records were read (0 where the cache cannot hold them all).
    int loadEveryExpert(const std::function<bool(double)> &progress = {});

private:
    struct Bank {
        int layer = 0;
        std::shared_ptr<format::ExpertBank> bank;
        io::DirectFile file;
    };
    int indexOf(int layer) const;
    int64_t records() const; // every bank's records
    io::ReadJob makeJob(const Bank &b, int expert, const ExpertCache::Ref &ref, uint64_t tag);
    void readNow(const Bank &b, int expert, const ExpertCache::Ref &ref);
    void settlePredictions(int cacheLayer, std::span<const int> chosen);
    // The bookkeeping every fetch of a layer starts with (pass, policy, routing record,
    // use counts, the lookahead's score); returns the layer's cache index.
    int beginFetch(int layer, std::span<const int> experts);
    // Whether the guess at `rank` may be read: its rank right at least half the time so far.
    bool rankTrusted(size_t rank) const;
    // Reads one guess into a slot of its own (a speculative pin); false: no slot.
    bool readGuess(int L, int e);
    // The deferred guesses, now that this layer's records are consumed and unpinned.
    void issueDeferred();

    StreamOptions m_options;
    int m_topK = 0;
    std::vector<Bank> m_banks;       // in layer order; index = cache layer
    std::map<int, int> m_layerIndex; // absolute layer -> index
    std::unique_ptr<ExpertCache> m_cache;
    int m_roomSlots = 0; // of m_cache's slots, the prompt room's
    std::unique_ptr<io::ReaderPool> m_pool; // after the cache: stopped before it goes
    bool m_directIo = false;
    std::vector<std::string> m_warnings;
    int m_lastIndex = 1 << 30;
    double m_ioWait = 0;
    std::vector<std::vector<int>> m_predicted; // per cache layer: the pending prediction (each id once)
    std::vector<std::vector<int>> m_predictedRank; // and each id's best rank in a token's list
    // Per rank of the prediction list: guesses settled and guesses the router then chose
    // (their sums are the reported lookahead accuracy).
    std::vector<int64_t> m_rankGuessed, m_rankRight;
    // Guesses for the next layer that found no slot to spare while this layer's records held
    // them (a batched step at a small cache): their indices in m_predicted[m_deferredLayer],
    // read once this layer is done (issueDeferred).
    std::vector<size_t> m_deferred;
    int m_deferredLayer = -1;
    std::vector<std::vector<std::vector<int>>> m_routing; // per pass: ids per cache layer
    std::vector<std::vector<int64_t>> m_uses;              // per cache layer, per expert
    std::vector<std::vector<int64_t>> m_lastPass;          // the pass of its last use (from 1; 0: never)
    int64_t m_passes = 0;                                  // forward passes so far (the usage record's clock)
};

} // namespace waste::cache
