// Where routed-expert records come from. The forward pass asks, per layer, for the
// experts it selected and receives each record (header already checked) through a
// callback, in whatever order they become available. A cache / read-ahead layer plugs
// in here without touching the math: the math sums in selection order regardless.
#pragma once

#include "format/expert_bank.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <vector>

namespace waste::model {

struct ExpertFetchStats {
    int64_t hits = 0, misses = 0, bytesRead = 0;
    double secondsIo = 0;
    int64_t speculativeFills = 0, speculativeUsed = 0;  // router lookahead reads, and those later demanded
    int64_t lookaheadPredicted = 0, lookaheadCorrect = 0; // predicted ids, and those the router then chose
    int64_t rereads = 0; // reads of records evicted in the same forward pass or the one before
    bool directIo = false;
    bool ioRing = false; // reads go through io_uring
};

class ExpertSource {
public:
    virtual ~ExpertSource() = default;
    using Consumer = std::function<void(size_t index, const uint8_t *record)>;
    using Hook = std::function<void()>;
    // Delivers the record of every id in `experts` (index = position in `experts`).
    // The pointer is valid only during the call. `whileReading`, if given, runs once after
    // the layer's reads have been issued and before any record is consumed: work placed
    // there (the router lookahead) overlaps the reads and the layer's expert compute.
    virtual void fetch(int layer, std::span<const int> experts, const Consumer &consume,
                       const Hook &whileReading = {}) = 0;
    // The same, but every record available at the time is handed over in one call (the
    // indices into `experts` and their records, all valid until it returns), so several
    // experts can be computed at once, one per thread, instead of each split over the
    // threads in turn. A source that delivers one at a time hands over batches of one.
    using BatchConsumer = std::function<void(std::span<const size_t> indices, std::span<const uint8_t *const> records)>;
    virtual void fetchBatches(int layer, std::span<const int> experts, const BatchConsumer &consume,
                              const Hook &whileReading = {})
    {
        fetch(
            layer, experts,
            [&](size_t index, const uint8_t *record) {
                consume(std::span<const size_t>(&index, 1), std::span<const uint8_t *const>(&record, 1));
            },
            whileReading);
    }
    // The same, but each record is handed over strictly in the order of `experts`, while
    // the reads still run ahead of it: a prompt's pass sums every token's experts in one
    // fixed order, whatever order the reads land in. This default suits a source whose
    // fetch() already delivers in order (PreadExpertSource reads one after another).
    virtual void fetchInOrder(int layer, std::span<const int> experts, const Consumer &consume,
                              const Hook &whileReading = {})
    {
        fetch(layer, experts, consume, whileReading);
    }
    virtual ExpertFetchStats stats() const = 0;
    // Router lookahead: how many experts to predict for the next MoE layer (0: off), and
    // the prediction itself: `rows` lists of equal length one after the other, one per
    // token of a decode step (one per sequence when several decode together), each best
    // first. A prediction only moves reads earlier; fetch() still delivers exactly what
    // the real router chose.
    virtual int lookaheadWidth() const { return 0; }
    virtual void prefetch(int /*layer*/, std::span<const int> /*experts*/, int /*rows*/ = 1) {}
};

// The plain path: one pread per record into one aligned buffer, no cache.
class PreadExpertSource : public ExpertSource {
public:
    PreadExpertSource(std::map<int, std::shared_ptr<format::ExpertBank>> banks, bool verifyCrc);
    void fetch(int layer, std::span<const int> experts, const Consumer &consume, const Hook &whileReading = {}) override;
    ExpertFetchStats stats() const override { return m_stats; }

private:
    std::map<int, std::shared_ptr<format::ExpertBank>> m_banks;
    bool m_verify;
    std::vector<uint8_t> m_buffer;
    ExpertFetchStats m_stats;
};

} // namespace waste::model
