#include "cache/expert_cache.hpp"

#include <sys/mman.h>

#include <waste/waste.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

namespace waste::cache {

namespace {
constexpr int64_t kAlign = 4096;
}

ExpertCache::ExpertCache(const CacheConfig &config) : m_config(config)
{
    if (config.slots <= 0 || config.layers <= 0 || config.experts <= 0 || config.recordBytes < 0)
        throw Error(ErrorCode::Argument, "expert cache: slots, layers and experts must be positive (got " +
                                             std::to_string(config.slots) + " slots, " + std::to_string(config.layers) +
                                             " layers, " + std::to_string(config.experts) + " experts)");
    m_slotBytes = (config.recordBytes + kAlign - 1) / kAlign * kAlign;
    if (config.allocate && m_slotBytes > 0) {
        // One block; pages are committed as slots are first filled, so an idle slot costs
        // address space only. From 2 MiB up io::AlignedBuffer puts it on 2 MiB boundaries,
        // advised into huge pages where the kernel leaves that to the program (THP
        // "madvise"): every direct read pins the pages it fills, and pinning a 412 KiB record
        // page by page was 7 % of a 4-stream decode's CPU at a small budget (bench_concurrent,
        // native case). The benches' disk ceiling reads into the same layout.
        try {
            const int room = std::clamp(config.roomSlots, 0, config.slots);
            m_memory = io::AlignedBuffer(m_slotBytes * (config.slots - room));
            if (room > 0)
                m_room = io::AlignedBuffer(m_slotBytes * room);
        } catch (const Error &) {
            throw Error(ErrorCode::OutOfMemory, "expert cache: cannot allocate " +
                                                    std::to_string(m_slotBytes * config.slots) + " bytes for " +
                                                    std::to_string(config.slots) + " slots; lower --budget");
        }
    }
    m_policy = makePolicy(config.policy, {config.slots, config.layers, config.experts});
    m_slots.resize(config.slots);
    m_where.assign(size_t(config.layers) * size_t(config.experts), -1);
    m_evictedAt.assign(m_where.size(), -2);
    m_empty.reserve(config.slots);
    m_roomFirst = config.slots - std::clamp(config.roomSlots, 0, config.slots);
    m_withheld = config.slots - m_roomFirst;
    for (int s = m_roomFirst - 1; s >= 0; --s)
        m_empty.push_back(s);
    for (int s = m_roomFirst; s < config.slots; ++s) {
        m_slots[s].lent = true;
        m_slots[s].pins = 1;
    }
}

uint8_t *ExpertCache::slotData(int slot) const
{
    if (slot >= m_roomFirst)
        return m_room.data() ? m_room.data() + int64_t(slot - m_roomFirst) * m_slotBytes : nullptr;
    return m_memory.data() ? m_memory.data() + int64_t(slot) * m_slotBytes : nullptr;
}

ExpertCache::~ExpertCache() = default;

ExpertCache::TakeOut ExpertCache::takeOutLocked(int slot, std::unique_lock<std::mutex> &lock)
{
    Slot &s = m_slots[slot];
    if (s.lent || s.pins > (s.state == State::InFlight ? 1 : 0))
        return TakeOut::Held;
    if (s.state == State::InFlight) {
        m_ready.wait(lock); // a guess nobody demanded lands into it first
        return TakeOut::Waited;
    }
    if (s.key >= 0 && m_where[s.key] == slot) {
        m_where[s.key] = -1;
        m_evictedAt[s.key] = m_pass;
        ++m_stats.evictions;
    }
    m_policy->setEvictable(slot, false);
    s = Slot{};
    s.lent = true;
    s.pins = 1; // never a victim, never filled, until it comes back
    return TakeOut::Taken;
}

void ExpertCache::dropPages(int slot, int count)
{
    // The pages go back to the system (zero-filled when the slot is next read into). Slots
    // next to each other in one call: a block that spans whole huge pages frees them whole.
    if (count > 0 && slotData(slot))
        ::madvise(slotData(slot), size_t(m_slotBytes * count), MADV_DONTNEED);
}

void ExpertCache::commitPages(int count, int threads)
{
    count = std::clamp(count, 0, m_roomFirst); // the main block's slots
    if (count == 0 || !m_memory.data())
        return;
    uint8_t *base = m_memory.data();
    const int64_t bytes = m_slotBytes * count;
    // Pieces of whole 2 MiB pages, one per thread.
    constexpr int64_t kHuge = int64_t(2) << 20;
    const int n = int(std::clamp<int64_t>(threads, 1, std::max<int64_t>(1, bytes / kHuge)));
    const int64_t piece = (bytes / n + kHuge - 1) / kHuge * kHuge;
    auto commit = [base, bytes](int64_t from, int64_t to) {
        to = std::min(to, bytes);
        if (from >= to)
            return;
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
        if (::madvise(base + from, size_t(to - from), MADV_POPULATE_WRITE) == 0)
            return;
#endif
        for (int64_t at = from; at < to; at += 4096) // kernels before 5.14: touch each page
            base[at] = 0;
    };
    std::vector<std::thread> others;
    for (int i = 1; i < n; ++i)
        others.emplace_back(commit, i * piece, (i + 1) * piece);
    commit(0, piece);
    for (std::thread &t : others)
        t.join();
}

int ExpertCache::lend(int count)
{
    // From the end of the cache's block, the last slot first, as withhold() takes the room's:
    // what goes back to the system is then whole huge pages. Slots taken here and there (the
    // policy's victims, as a pass once borrowed) split the pages around them, and every read
    // into a split page pins it 4 KiB at a time, for as long as the cache lives (the room's
    // first version cost a four-stream step 5 CPU ms a token so). The records there are
    // forgotten whatever the policy would have kept: a pass long enough to borrow fills the
    // cache with its own experts anyway.
    std::vector<int> taken;
    {
        std::unique_lock lock(m_mutex);
        dropAnnouncedLocked();
        for (int slot = m_roomFirst - 1; slot >= 0 && int(taken.size()) < count;) {
            const TakeOut t = takeOutLocked(slot, lock);
            if (t == TakeOut::Waited)
                continue; // look at it again
            if (t == TakeOut::Taken)
                taken.push_back(slot);
            --slot; // taken, or held by a caller or lent already: the next one
        }
        std::erase_if(m_empty, [this](int slot) { return m_slots[slot].lent; });
        m_lent.insert(m_lent.end(), taken.begin(), taken.end());
    }
    // One madvise per run of neighbours (taken is in descending order).
    for (size_t i = 0; i < taken.size();) {
        size_t j = i + 1;
        while (j < taken.size() && taken[j] == taken[j - 1] - 1)
            ++j;
        dropPages(taken[j - 1], int(j - i));
        i = j;
    }
    return int(taken.size());
}

void ExpertCache::returnLent()
{
    std::lock_guard lock(m_mutex);
    for (int slot : m_lent) {
        m_slots[slot] = Slot{};
        m_empty.push_back(slot);
    }
    m_lent.clear();
}

int ExpertCache::lent() const
{
    std::lock_guard lock(m_mutex);
    return int(m_lent.size());
}

int ExpertCache::withhold(int count)
{
    int moved = 0;
    {
        std::unique_lock lock(m_mutex);
        dropAnnouncedLocked();
        while (moved < count && m_withheld < m_config.slots - m_roomFirst) {
            const TakeOut t = takeOutLocked(m_config.slots - m_withheld - 1, lock);
            if (t == TakeOut::Held)
                break; // a caller holds it
            if (t == TakeOut::Waited)
                continue;
            ++m_withheld;
            ++moved;
        }
        if (moved > 0)
            std::erase_if(m_empty, [this](int slot) { return m_slots[slot].lent; });
    }
    dropPages(m_config.slots - m_withheld, moved);
    return moved;
}

int ExpertCache::restore(int count)
{
    std::lock_guard lock(m_mutex);
    int moved = 0;
    for (; moved < count && m_withheld > 0; ++moved) {
        const int slot = m_config.slots - m_withheld;
        m_slots[slot] = Slot{};
        m_empty.push_back(slot);
        --m_withheld;
    }
    return moved;
}

int ExpertCache::withheld() const
{
    std::lock_guard lock(m_mutex);
    return m_withheld;
}

int ExpertCache::working() const
{
    std::lock_guard lock(m_mutex);
    return m_config.slots - int(m_lent.size()) - m_withheld;
}

int ExpertCache::keyOf(int layer, int expert) const
{
    if (layer < 0 || layer >= m_config.layers || expert < 0 || expert >= m_config.experts)
        throw Error(ErrorCode::Argument, "expert cache: record (layer " + std::to_string(layer) + ", expert " +
                                             std::to_string(expert) + ") is outside the cache's " +
                                             std::to_string(m_config.layers) + " x " + std::to_string(m_config.experts));
    return layer * m_config.experts + expert;
}

void ExpertCache::beginToken()
{
    std::lock_guard lock(m_mutex);
    ++m_pass;
    m_policy->beginToken();
}

void ExpertCache::beginLayer(int layer, std::span<const int> experts)
{
    for (int e : experts)
        keyOf(layer, e); // validates before anything changes
    std::lock_guard lock(m_mutex);
    dropAnnouncedLocked();
    m_policy->atLayer(layer);
    m_policy->layerDemand(layer, experts);
    for (int e : experts) {
        const int slot = m_where[layer * m_config.experts + e];
        if (slot < 0 || m_slots[slot].announced || m_slots[slot].state == State::Failed)
            continue;
        m_slots[slot].announced = true;
        m_announced.push_back(slot);
        updateEvictableLocked(slot);
    }
}

void ExpertCache::dropAnnouncedLocked()
{
    for (int slot : m_announced)
        if (m_slots[slot].announced) {
            m_slots[slot].announced = false;
            updateEvictableLocked(slot);
        }
    m_announced.clear();
}

void ExpertCache::updateEvictableLocked(int slot)
{
    const Slot &s = m_slots[slot];
    m_policy->setEvictable(slot, s.pins == 0 && s.key >= 0 && s.state != State::InFlight && !s.announced);
}

int ExpertCache::claimSlotLocked(int key, bool demand)
{
    int slot;
    if (!m_empty.empty()) {
        slot = m_empty.back();
        m_empty.pop_back();
    } else {
        slot = m_policy->victim();
        if (slot < 0 && !m_announced.empty()) { // only the layer's own hits are left: give way
            dropAnnouncedLocked();
            slot = m_policy->victim();
        }
        if (slot < 0)
            return -1;
        Slot &old = m_slots[slot];
        m_where[old.key] = -1;
        m_evictedAt[old.key] = m_pass;
        ++m_stats.evictions;
    }
    if (m_evictedAt[key] >= m_pass - 1)
        ++m_stats.rereads;
    Slot &s = m_slots[slot];
    s.key = key;
    s.state = State::InFlight;
    s.pins = 1; // the read's pin, dropped by filled()
    s.speculative = !demand;
    s.speculativePin = false;
    m_where[key] = slot;
    m_policy->setEvictable(slot, false);
    m_policy->filled(slot, key, demand);
    return slot;
}

ExpertCache::Ref ExpertCache::acquire(int layer, int expert)
{
    const int key = keyOf(layer, expert);
    std::lock_guard lock(m_mutex);
    return acquireLocked(layer, key, false);
}

ExpertCache::Ref ExpertCache::tryAcquire(int layer, int expert)
{
    const int key = keyOf(layer, expert);
    std::lock_guard lock(m_mutex);
    return acquireLocked(layer, key, true);
}

ExpertCache::Ref ExpertCache::acquireLocked(int layer, int key, bool mayFail)
{
    m_policy->atLayer(layer);
    Ref ref;
    int slot = m_where[key];
    if (slot >= 0 && m_slots[slot].state != State::Failed) {
        Slot &s = m_slots[slot];
        ++m_stats.demandHits;
        if (s.speculative) {
            ++m_stats.speculativeUsed;
            s.speculative = false;
        }
        ++s.pins;
        s.announced = false;
        m_policy->used(slot, key);
        updateEvictableLocked(slot);
        ref.slot = slot;
        ref.hit = true;
    } else {
        if (slot >= 0) { // a failed earlier read: try again in the same slot
            Slot &s = m_slots[slot];
            s.state = State::InFlight;
            s.pins += 1;
            s.speculative = false;
            m_policy->used(slot, key);
            updateEvictableLocked(slot);
        } else {
            slot = claimSlotLocked(key, true);
            if (slot < 0) {
                if (mayFail)
                    return ref;
                throw Error(ErrorCode::OutOfMemory,
                            "expert cache: all " + std::to_string(m_config.slots) +
                                " slots are pinned; the budget is too small for this layer (raise --budget)");
            }
        }
        ++m_stats.demandMisses;
        ++m_slots[slot].pins; // the caller's pin, next to the read's pin
        ref.slot = slot;
        ref.mustRead = true;
    }
    ref.data = slotData(ref.slot);
    return ref;
}

ExpertCache::Ref ExpertCache::prefetch(int layer, int expert, bool countAsSpeculative)
{
    const int key = keyOf(layer, expert);
    std::lock_guard lock(m_mutex);
    Ref ref;
    if (m_where[key] >= 0)
        return ref;
    int slot = claimSlotLocked(key, false);
    if (slot < 0)
        return ref;
    Slot &s = m_slots[slot];
    ++s.pins; // the speculative pin, held until releaseSpeculative()
    s.speculativePin = true;
    s.speculative = countAsSpeculative;
    m_specPinned.push_back(slot);
    if (countAsSpeculative)
        ++m_stats.speculativeFills;
    ref.slot = slot;
    ref.mustRead = true;
    ref.data = slotData(slot);
    return ref;
}

void ExpertCache::filled(int slot, bool ok, int64_t bytes)
{
    {
        std::lock_guard lock(m_mutex);
        Slot &s = m_slots[slot];
        s.state = ok ? State::Ready : State::Failed;
        --s.pins;
        m_stats.bytesRead += bytes;
        if (s.pins == 0 && (s.state == State::Failed || !m_config.retain))
            forgetLocked(slot);
        else
            updateEvictableLocked(slot);
    }
    m_ready.notify_all();
}

bool ExpertCache::waitReady(int slot)
{
    std::unique_lock lock(m_mutex);
    if (m_slots[slot].state == State::InFlight) {
        auto t0 = std::chrono::steady_clock::now();
        m_ready.wait(lock, [&] { return m_slots[slot].state != State::InFlight; });
        m_stats.ioWaitSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    return m_slots[slot].state == State::Ready;
}

std::vector<int> ExpertCache::waitSome(std::span<const int> slots)
{
    std::vector<int> landed;
    if (slots.empty())
        return landed;
    std::unique_lock lock(m_mutex);
    auto collect = [&] {
        for (size_t i = 0; i < slots.size(); ++i)
            if (m_slots[slots[i]].state != State::InFlight)
                landed.push_back(int(i));
        return !landed.empty();
    };
    if (!collect()) {
        auto t0 = std::chrono::steady_clock::now();
        m_ready.wait(lock, collect);
        m_stats.ioWaitSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    return landed;
}

bool ExpertCache::failed(int slot) const
{
    std::lock_guard lock(m_mutex);
    return m_slots[slot].state == State::Failed;
}

void ExpertCache::release(int slot)
{
    std::lock_guard lock(m_mutex);
    Slot &s = m_slots[slot];
    if (s.pins > 0)
        --s.pins;
    if (s.pins == 0 && (s.state == State::Failed || !m_config.retain)) { // never serve a failed record
        forgetLocked(slot);
        return;
    }
    updateEvictableLocked(slot);
}

void ExpertCache::forgetLocked(int slot)
{
    Slot &s = m_slots[slot];
    m_where[s.key] = -1;
    m_policy->setEvictable(slot, false);
    s = Slot{};
    m_empty.push_back(slot);
}

void ExpertCache::releaseSpeculative()
{
    std::lock_guard lock(m_mutex);
    for (int slot : m_specPinned) {
        Slot &s = m_slots[slot];
        if (s.speculativePin) {
            s.speculativePin = false;
            --s.pins;
            if (s.pins == 0 && (s.state == State::Failed || !m_config.retain))
                forgetLocked(slot);
            else
                updateEvictableLocked(slot);
        }
    }
    m_specPinned.clear();
}

void ExpertCache::cancelSpeculative(int layer, int expert)
{
    const int key = keyOf(layer, expert);
    {
        std::lock_guard lock(m_mutex);
        const int slot = m_where[key];
        if (slot < 0 || m_slots[slot].state != State::InFlight || !m_slots[slot].speculative)
            return;
        Slot &s = m_slots[slot];
        s.state = State::Failed;
        --s.pins; // the read's pin
        --m_stats.speculativeFills;
        if (s.pins == 0)
            forgetLocked(slot);
    }
    m_ready.notify_all();
}

void ExpertCache::seedUses(int layer, int expert, double uses)
{
    const int key = keyOf(layer, expert);
    std::lock_guard lock(m_mutex);
    m_policy->seedUses(key, uses);
}

std::vector<std::pair<int, int>> ExpertCache::residentRecords() const
{
    std::lock_guard lock(m_mutex);
    std::vector<std::pair<int, int>> out;
    for (const Slot &s : m_slots)
        if (s.key >= 0 && s.state == State::Ready)
            out.emplace_back(s.key / m_config.experts, s.key % m_config.experts);
    return out;
}

bool ExpertCache::resident(int layer, int expert) const
{
    const int key = keyOf(layer, expert);
    std::lock_guard lock(m_mutex);
    int slot = m_where[key];
    return slot >= 0 && m_slots[slot].state == State::Ready;
}

CacheStats ExpertCache::stats() const
{
    std::lock_guard lock(m_mutex);
    return m_stats;
}

void ExpertCache::resetStats()
{
    std::lock_guard lock(m_mutex);
    m_stats = {};
}

} // namespace waste::cache
