// The expert cache: a fixed number of equal slots, each holding one expert record.
//
// States: Empty -> InFlight (a reader fills it) -> Ready, or Failed on a bad read.
// A slot is pinned while a caller uses it (acquire/release) and while it is in flight;
// pinned slots are never victims. Speculative fills (router lookahead) hold a pin until
// the caller drops them with releaseSpeculative(), so a prediction survives until the
// layer it was made for has run.
//
// Accounting (comparable across versions, as in the reference): demand hits and misses
// count only accesses the real router made; speculative fills count separately and
// never as misses; a demand access that finds a speculatively filled record is a hit and
// counts as a useful speculation.
//
// A layer's whole routing is known before any of it is served: beginLayer() tells the
// policy, and keeps the layer's resident records from being chosen as victims until they
// are acquired (otherwise a miss early in the list could evict a hit later in it). If
// nothing else is evictable, that protection gives way rather than fail.
//
// Thread-safe: one mutex; readers call filled() from their own threads.
#pragma once

#include "cache/eviction_policy.hpp"
#include "io/aligned_buffer.hpp"

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace waste::cache {

struct CacheConfig {
    int slots = 0;
    int64_t recordBytes = 0; // slot stride; rounded up to 4 KiB
    int layers = 0;          // MoE layers
    int experts = 0;         // experts per MoE layer
    PolicyKind policy = kDefaultPolicy;
    bool allocate = true;    // false: bookkeeping only (trace replay)
    bool retain = true;      // false: a record leaves the cache as soon as nobody uses it (cache off)
    // Of `slots`, the last ones: the floor's prompt room, which the cache holds only while no
    // pass needs it (ModelImpl::roomToCache). Withheld at first, in a block of their own so
    // that giving all of it back frees whole huge pages (splitting them would make every
    // direct read pin 4 KiB pages again).
    int roomSlots = 0;
};

struct CacheStats {
    int64_t demandHits = 0;
    int64_t demandMisses = 0;
    int64_t speculativeFills = 0;
    int64_t speculativeUsed = 0; // speculative fills a demand access later found
    int64_t bytesRead = 0;
    double ioWaitSeconds = 0;    // time demand callers spent blocked on in-flight reads
    int64_t evictions = 0;
    // Reads (demand or speculative) of a record the policy evicted in this forward pass or
    // the one before: bytes a larger cache, or a better victim, would not have read again.
    int64_t rereads = 0;
};

class ExpertCache {
public:
    enum class State : uint8_t { Empty, InFlight, Ready, Failed };

    struct Ref {
        int slot = -1;
        bool hit = false;       // resident (or already in flight) when asked
        bool mustRead = false;  // the caller owns the read: fill data, then call filled()
        uint8_t *data = nullptr;
    };

    explicit ExpertCache(const CacheConfig &config);
    ~ExpertCache();
    ExpertCache(const ExpertCache &) = delete;
    ExpertCache &operator=(const ExpertCache &) = delete;

    const CacheConfig &config() const { return m_config; }
    int slots() const { return m_config.slots; }
    int64_t slotBytes() const { return m_slotBytes; }
    // Commits the pages of the first `count` slots now, split over `threads` threads: a
    // kernel clears each fresh page as it is first touched, and where every slot is about
    // to be filled (StreamedExpertSource::loadEveryExpert) clearing them on every core at
    // once beats clearing them one read at a time on the thread that submits the reads.
    void commitPages(int count, int threads);

    // A forward pass (a decode token, a prefill chunk) starts: ages frequencies.
    void beginToken();
    // The router chose `experts` for `layer` in this pass; their acquires follow.
    // Throws waste::Error(Argument) for an id outside the cache's shape.
    void beginLayer(int layer, std::span<const int> experts);

    // Demand access (the router chose it). The slot comes back pinned: release() it.
    // Throws waste::Error(OutOfMemory) if every slot is pinned.
    Ref acquire(int layer, int expert);
    // Speculative access: claims a slot only if the record is absent and a victim exists.
    // Returns a Ref with mustRead set when the caller should read it; slot -1 otherwise.
    // Ref tryAcquire: as acquire(), but slot -1 (nothing counted) when every slot is pinned.
    Ref tryAcquire(int layer, int expert);
    // countAsSpeculative = false: a warm-start fill (no statistics).
    Ref prefetch(int layer, int expert, bool countAsSpeculative = true);
    // A reader finished the slot's read (ok = record read and checked).
    void filled(int slot, bool ok, int64_t bytes);
    // Blocks until the slot is no longer in flight; false if its read failed.
    bool waitReady(int slot);
    // Blocks until any of `slots` is no longer in flight (demand or speculative read,
    // whichever lands first) and returns the indices in `slots` of all that have landed by
    // then, in order (so a consumer can take several records at once); empty if `slots` is.
    std::vector<int> waitSome(std::span<const int> slots);
    bool failed(int slot) const;
    void release(int slot);
    // Drops the pins that prefetch() took (the predicted layer has been consumed).
    void releaseSpeculative();
    // A speculative read of (layer, expert) that never started is called off: the slot is
    // freed and the fill no longer counts.
    void cancelSpeculative(int layer, int expert);

    // A prompt's pass borrows RAM from the cache (plan/pass_plan.hpp): up to `count` slots
    // leave it, from the end of its block (the room's slots apart) back, passing over any a
    // caller holds and waiting for guesses in flight to land; their records are forgotten and
    // their pages given back to the system, until returnLent(). Returns how many slots left;
    // their bytes are lent() * slotBytes().
    int lend(int count);
    void returnLent();
    int lent() const;
    // The room's slots (CacheConfig::roomSlots) move in and out from the end: withhold()
    // takes up to `count` more out, the last first, forgetting their records and waiting for
    // reads in flight to land (a slot a caller holds stops it), and gives their pages back to
    // the system; restore() puts up to `count` back, empty. Each returns how many moved.
    int withhold(int count);
    int restore(int count);
    int withheld() const;
    // The slots records can use now: slots() less those lent and withheld.
    int working() const;

    // Warm start: counts as past use for the policy; no I/O, no statistics.
    void seedUses(int layer, int expert, double uses);
    // Resident records (layer, expert) in slot order, for --learn records.
    std::vector<std::pair<int, int>> residentRecords() const;
    bool resident(int layer, int expert) const;

    CacheStats stats() const;
    void resetStats();

private:
    struct Slot {
        int key = -1;
        State state = State::Empty;
        int pins = 0;
        bool speculative = false;     // filled by prefetch and not yet demanded
        bool speculativePin = false;  // holds one of the pins until releaseSpeculative()
        bool announced = false;       // in the current layer's demand, not yet acquired
        bool lent = false;            // out of the cache: lent to a pass, or withheld
    };
    int keyOf(int layer, int expert) const;
    int claimSlotLocked(int key, bool demand);
    Ref acquireLocked(int layer, int key, bool mayFail);
    void forgetLocked(int slot);
    void updateEvictableLocked(int slot);
    void dropAnnouncedLocked();
    // The slot leaves the cache (lent or withheld; the caller keeps m_empty): its record is
    // forgotten, and it is never a victim nor filled until it comes back. Held: lent already or
    // a caller holds it; Waited: a guess was in flight into it and has landed, look again.
    enum class TakeOut { Taken, Held, Waited };
    TakeOut takeOutLocked(int slot, std::unique_lock<std::mutex> &lock);
    void dropPages(int slot, int count); // slots slot .. slot + count - 1
    uint8_t *slotData(int slot) const;

    CacheConfig m_config;
    int64_t m_slotBytes = 0;
    io::AlignedBuffer m_memory; // the slots, one after another
    io::AlignedBuffer m_room;   // the room's slots, after them (CacheConfig::roomSlots)
    int m_roomFirst = 0;        // the room's first slot
    std::unique_ptr<EvictionPolicy> m_policy;
    std::vector<Slot> m_slots;
    std::vector<int> m_where; // record key -> slot, -1 absent
    int64_t m_pass = 0;             // forward passes begun (beginToken)
    std::vector<int64_t> m_evictedAt; // record key -> pass of its last eviction (for rereads)
    std::vector<int> m_empty; // empty slots, used before any eviction
    std::vector<int> m_specPinned;
    std::vector<int> m_announced; // slots protected by the current beginLayer()
    std::vector<int> m_lent;      // slots lent to a prompt's pass
    int m_withheld = 0;           // the room's last slots out of the cache (withhold)
    CacheStats m_stats;
    mutable std::mutex m_mutex;
    std::condition_variable m_ready;
};

} // namespace waste::cache
