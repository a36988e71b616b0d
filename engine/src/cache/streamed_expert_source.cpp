#include "cache/streamed_expert_source.hpp"

#include "cache/usage_record.hpp"
#include "cache/warm_start.hpp"
#include <waste/usage_paths.hpp>
#include "format/expert_record.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <thread>

namespace waste::cache {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The pool's report of demand read `tag` (it carries the error text of a failed read), waited
// for; reports of other reads that come first are kept in `landed` for their turn.
io::ReadDone reportOf(io::ReaderPool &pool, uint64_t tag, std::map<uint64_t, io::ReadDone> &landed, int &outstanding)
{
    while (!landed.count(tag)) {
        std::optional<io::ReadDone> d = pool.next();
        --outstanding;
        landed.emplace(d->tag, std::move(*d));
    }
    io::ReadDone d = std::move(landed.at(tag));
    landed.erase(tag);
    return d;
}
constexpr size_t kMaxRoutingPasses = 4096; // a --learn record keeps the latest passes
} // namespace

StreamedExpertSource::StreamedExpertSource(std::map<int, std::shared_ptr<format::ExpertBank>> banks, int topK,
                                           const StreamOptions &options)
    : m_options(options), m_topK(std::max(topK, 1))
{
    if (banks.empty())
        throw Error(ErrorCode::Argument, "expert stream: no expert banks");
    int experts = 0;
    int64_t maxRecord = 0;
    m_directIo = options.directIo;
    std::map<std::string, std::vector<std::string>> bypassRefused; // reason -> bank paths
    for (auto &[layer, bank] : banks) {
        Bank b;
        b.layer = layer;
        b.bank = bank;
        b.file = io::DirectFile(bank->file().path(), options.directIo);
        if (options.directIo && !b.file.directIo()) {
            m_directIo = false;
            bypassRefused[b.file.reason()].push_back(b.file.path());
        }
        experts = std::max(experts, bank->experts());
        maxRecord = std::max(maxRecord, bank->recordBytes());
        m_layerIndex[layer] = int(m_banks.size());
        m_banks.push_back(std::move(b));
    }
    // One warning per reason, not one per bank: a big model has dozens of banks.
    for (const auto &[reason, paths] : bypassRefused)
        m_warnings.push_back(paths.front() + (paths.size() > 1 ? " and " + std::to_string(paths.size() - 1) +
                                                                     " other expert file" + (paths.size() > 2 ? "s" : "")
                                                               : std::string()) +
                             ": " + reason);
    CacheConfig cfg;
    cfg.layers = int(m_banks.size());
    cfg.experts = experts;
    cfg.recordBytes = maxRecord;
    cfg.policy = options.policy;
    cfg.retain = options.cacheEnabled;
    // Without a cache, one layer's top-k double-buffered is all that is ever held.
    const int64_t minSlots = 2 * int64_t(m_topK);
    int64_t slots = options.cacheEnabled ? std::max(options.cacheSlots, minSlots) : minSlots;
    slots = std::min<int64_t>(slots, int64_t(cfg.layers) * experts); // more slots than records buy nothing
    cfg.slots = int(std::max<int64_t>(slots, 1));
    // The floor's prompt room, beyond them: out of the cache until no pass needs it, and no
    // more than the cache lacks to hold every record (plan::promptRoomSlots).
    const int64_t room = options.cacheEnabled ? std::clamp<int64_t>(int64_t(cfg.layers) * experts - cfg.slots, 0,
                                                                    options.roomSlots)
                                              : 0;
    cfg.slots += int(room);
    cfg.roomSlots = int(room);
    m_cache = std::make_unique<ExpertCache>(cfg);
    m_roomSlots = int(room);
    int threads = options.readerThreads >= 0 ? options.readerThreads : std::clamp(m_topK, 2, 16);
    if (!options.readAhead)
        threads = 0;
    m_pool = std::make_unique<io::ReaderPool>(threads, options.ioRing ? io::ReaderPool::Backend::Auto
                                                                      : io::ReaderPool::Backend::Threads);
    m_predicted.resize(m_banks.size());
    m_predictedRank.resize(m_banks.size());
    m_uses.assign(m_banks.size(), std::vector<int64_t>(size_t(experts), 0));
    m_lastPass = m_uses;
}

StreamedExpertSource::~StreamedExpertSource() { m_pool.reset(); }

int StreamedExpertSource::indexOf(int layer) const
{
    auto it = m_layerIndex.find(layer);
    if (it == m_layerIndex.end())
        throw Error(ErrorCode::Format, "no expert bank for layer " + std::to_string(layer));
    return it->second;
}

io::ReadJob StreamedExpertSource::makeJob(const Bank &b, int expert, const ExpertCache::Ref &ref, uint64_t tag)
{
    const format::ExpertBank *bank = b.bank.get();
    io::ReadJob job;
    job.file = &b.file;
    job.offset = int64_t(expert) * bank->recordBytes();
    job.bytes = bank->recordBytes();
    job.dst = ref.data;
    job.tag = tag;
    ExpertCache *cache = m_cache.get();
    const int slot = ref.slot;
    const bool verify = m_options.verifyCrc;
    const uint8_t *record = ref.data;
    // On the reader thread: check the record before anyone may use it, then publish it.
    job.finish = [cache, bank, slot, expert, verify, record](io::ReadDone &d) {
        if (d.ok) {
            try {
                bank->check(record, expert, verify);
            } catch (const Error &e) {
                d.ok = false;
                d.error = e.what();
                d.code = e.code();
            } catch (const std::exception &e) {
                d.ok = false;
                d.error = e.what();
            }
        }
        cache->filled(slot, d.ok, d.bytes);
    };
    return job;
}

void StreamedExpertSource::readNow(const Bank &b, int expert, const ExpertCache::Ref &ref)
{
    io::ReadJob job = makeJob(b, expert, ref, 0);
    const auto t0 = Clock::now();
    io::ReadDone d;
    try {
        d.bytes = b.file.readAt(job.dst, job.bytes, job.offset);
        d.ok = d.bytes == job.bytes;
        if (!d.ok)
            d.error = b.file.path() + ": short read of expert " + std::to_string(expert) + ": truncated bank?";
    } catch (const std::exception &e) {
        d.error = e.what();
    }
    job.finish(d);
    m_ioWait += since(t0);
    if (!d.ok)
        throw Error(d.code, d.error);
}

void StreamedExpertSource::fetch(int layer, std::span<const int> experts, const Consumer &consume,
                                 const Hook &whileReading)
{
    fetchBatches(
        layer, experts,
        [&](std::span<const size_t> indices, std::span<const uint8_t *const> records) {
            for (size_t k = 0; k < indices.size(); ++k)
                consume(indices[k], records[k]);
        },
        whileReading);
}

int StreamedExpertSource::beginFetch(int layer, std::span<const int> experts)
{
    const int L = indexOf(layer);
    const Bank &b = m_banks[size_t(L)];
    for (int e : experts)
        if (e < 0 || e >= b.bank->experts())
            throw Error(ErrorCode::Argument, b.file.path() + ": expert " + std::to_string(e) + " out of range");
    if (L <= m_lastIndex) { // a new forward pass (decode token or prefill chunk)
        m_cache->beginToken();
        ++m_passes;
        if (m_routing.size() >= kMaxRoutingPasses)
            m_routing.erase(m_routing.begin());
        m_routing.emplace_back(m_banks.size());
    }
    m_lastIndex = L;
    m_cache->beginLayer(L, experts); // the policy learns from the whole choice; its hits stay put
    settlePredictions(L, experts);
    // One token's routing is a trace row; a prefill chunk (more than top-k ids at some layer)
    // is not: its pass is emptied and stays empty for the chunk's later layers (writing a
    // layer into an emptied pass wrote past its end; ASan found it).
    std::vector<std::vector<int>> &pass = m_routing.back();
    if (int(experts.size()) > m_topK)
        pass.clear();
    else if (!pass.empty())
        pass[size_t(L)].assign(experts.begin(), experts.end());
    for (int e : experts) {
        ++m_uses[size_t(L)][size_t(e)];
        m_lastPass[size_t(L)][size_t(e)] = m_passes;
    }
    if (!m_predicted[size_t(L)].empty()) { // how good was the lookahead for this layer?
        // A guess is right when the step needs that record: in a batched step, when any
        // of its sequences chose it (the read was then of use, whoever it was made for).
        const std::vector<int> &guess = m_predicted[size_t(L)];
        const std::vector<int> &rank = m_predictedRank[size_t(L)];
        for (size_t i = 0; i < guess.size(); ++i) {
            const size_t r = size_t(rank[i]);
            if (m_rankGuessed.size() <= r) {
                m_rankGuessed.resize(r + 1, 0);
                m_rankRight.resize(r + 1, 0);
            }
            m_rankRight[r] += std::find(experts.begin(), experts.end(), guess[i]) != experts.end();
            ++m_rankGuessed[r];
        }
        m_predicted[size_t(L)].clear();
        m_predictedRank[size_t(L)].clear();
    }

    return L;
}

void StreamedExpertSource::fetchBatches(int layer, std::span<const int> experts, const BatchConsumer &consume,
                                        const Hook &whileReading)
{
    const int L = beginFetch(layer, experts);
    const Bank &b = m_banks[size_t(L)];

    // Two phases. First every id is looked up and every miss goes to the reader threads,
    // before any compute: a hit computed early would hold back the layer's reads. Then
    // records are consumed as they land: the hits already resident, then whichever read
    // (demand, or a prediction still in flight) finishes first.
    std::vector<int> held;        // slots this call pinned and has not released yet
    std::vector<size_t> ready;    // resident hits, not yet consumed
    std::vector<size_t> pending;  // reads in flight: demand misses and predicted hits
    std::vector<char> demand(experts.size(), 0);
    std::map<uint64_t, io::ReadDone> landed; // demand reads the pool has reported
    int outstanding = 0;          // demand reads submitted, not yet collected from the pool
    std::vector<int> slotOf(experts.size(), -1);
    std::vector<const uint8_t *> dataOf(experts.size(), nullptr);
    // The layer's misses go to the readers together, once all are known (one wake-up).
    std::vector<io::ReadJob> toSubmit;
    auto submitQueued = [&] {
        outstanding += int(toSubmit.size());
        m_pool->submit(std::move(toSubmit));
        toSubmit.clear();
    };
    // Hands records over together, then unpins them.
    auto handAll = [&](const std::vector<size_t> &is) {
        std::vector<const uint8_t *> records(is.size());
        for (size_t k = 0; k < is.size(); ++k)
            records[k] = dataOf[is[k]];
        consume(is, records);
        for (size_t i : is) {
            m_cache->release(slotOf[i]);
            held.erase(std::find(held.begin(), held.end(), slotOf[i]));
        }
    };
    auto hand = [&](size_t i) { handAll(std::vector<size_t>{i}); };
    // Consume what is there: every resident hit if any, else the reads that have landed
    // once the first one has; false if nothing is left.
    auto consumeSome = [&]() -> bool {
        if (!ready.empty()) {
            const std::vector<size_t> batch = std::move(ready);
            ready.clear();
            handAll(batch);
            return true;
        }
        if (pending.empty())
            return false;
        std::vector<int> slots(pending.size());
        for (size_t k = 0; k < pending.size(); ++k)
            slots[k] = slotOf[pending[k]];
        const auto t0 = Clock::now();
        const std::vector<int> landedNow = m_cache->waitSome(slots);
        std::vector<size_t> batch;
        for (int k : landedNow)
            batch.push_back(pending[size_t(k)]);
        for (auto k = landedNow.rbegin(); k != landedNow.rend(); ++k)
            pending.erase(pending.begin() + *k);
        for (size_t i : batch) {
            if (demand[i]) {
                const io::ReadDone d = reportOf(*m_pool, i, landed, outstanding);
                if (!d.ok) {
                    m_ioWait += since(t0);
                    throw Error(d.code, d.error);
                }
            } else if (m_cache->failed(slotOf[i])) {
                m_ioWait += since(t0);
                throw Error(ErrorCode::Io, b.file.path() + ": read of expert " + std::to_string(experts[i]) + " failed");
            }
        }
        m_ioWait += since(t0);
        handAll(batch);
        return true;
    };
    try {
        for (size_t i = 0; i < experts.size(); ++i) {
            ExpertCache::Ref ref = m_cache->tryAcquire(L, experts[i]);
            bool dropped = false;
            while (ref.slot < 0) { // every slot pinned: finish something first
                submitQueued();
                if (!consumeSome()) {
                    if (dropped)
                        throw Error(ErrorCode::OutOfMemory, "expert cache: no free slot for layer " + std::to_string(layer) +
                                                                " with nothing in flight; raise --budget");
                    m_cache->releaseSpeculative(); // demand comes before predictions
                    dropped = true;
                }
                ref = m_cache->tryAcquire(L, experts[i]);
            }
            held.push_back(ref.slot);
            slotOf[i] = ref.slot;
            dataOf[i] = ref.data;
            if (ref.mustRead) {
                if (m_options.readAhead) {
                    toSubmit.push_back(makeJob(b, experts[i], ref, i));
                    demand[i] = 1;
                    pending.push_back(i);
                } else {
                    readNow(b, experts[i], ref);
                    hand(i);
                }
            } else if (m_cache->resident(L, experts[i])) {
                if (m_options.readAhead)
                    ready.push_back(i);
                else
                    hand(i);
            } else if (!m_options.readAhead) {
                const auto t0 = Clock::now();
                const bool ok = m_cache->waitReady(ref.slot);
                m_ioWait += since(t0);
                if (!ok)
                    throw Error(ErrorCode::Io, b.file.path() + ": read of expert " + std::to_string(experts[i]) + " failed");
                hand(i);
            } else {
                pending.push_back(i);
            }
        }
        submitQueued();
        if (whileReading)
            whileReading(); // the lookahead: its reads queue behind this layer's, never ahead
        while (consumeSome()) {
        }
    } catch (...) {
        // Leave no read in flight into a slot we no longer own, and no pin behind (reads
        // not yet handed to the readers go now, so that every pinned slot lands).
        submitQueued();
        while (outstanding > 0) {
            m_pool->next();
            --outstanding;
        }
        for (int slot : held) {
            m_cache->waitReady(slot);
            m_cache->release(slot);
        }
        m_cache->releaseSpeculative();
        m_deferred.clear();
        throw;
    }
    m_cache->releaseSpeculative(); // predictions for this layer have had their chance
    issueDeferred();
}

void StreamedExpertSource::fetchInOrder(int layer, std::span<const int> experts, const Consumer &consume,
                                        const Hook &whileReading)
{
    const int L = beginFetch(layer, experts);
    const Bank &b = m_banks[size_t(L)];
    // Slots are taken in the order of `experts` and every miss is queued for the readers as
    // it is found, so the next record to hand over was always asked for before any later
    // one: waiting for it (when every slot is pinned) always makes progress. Records that
    // land early stay pinned until their turn.
    enum class Held : char { Resident, Demand, Speculative };
    const size_t count = experts.size();
    std::vector<int> slotOf(count, -1);
    std::vector<const uint8_t *> dataOf(count, nullptr);
    std::vector<Held> how(count, Held::Resident);
    std::map<uint64_t, io::ReadDone> landed; // demand reads the pool has reported
    int outstanding = 0;                     // demand reads submitted, not yet collected
    std::vector<io::ReadJob> toSubmit;
    size_t next = 0, taken = 0;
    auto submitQueued = [&] {
        if (toSubmit.empty())
            return;
        outstanding += int(toSubmit.size());
        m_pool->submit(std::move(toSubmit));
        toSubmit.clear();
    };
    // Hands over experts[next] once it is there; false when nothing taken is left.
    auto handNext = [&]() -> bool {
        if (next >= taken)
            return false;
        const size_t i = next;
        if (how[i] != Held::Resident) {
            submitQueued();
            const auto t0 = Clock::now();
            const bool ok = m_cache->waitReady(slotOf[i]);
            if (how[i] == Held::Demand) {
                const io::ReadDone d = reportOf(*m_pool, i, landed, outstanding);
                if (!d.ok) {
                    m_ioWait += since(t0);
                    throw Error(d.code, d.error);
                }
            } else if (!ok) {
                m_ioWait += since(t0);
                throw Error(ErrorCode::Io, b.file.path() + ": read of expert " + std::to_string(experts[i]) + " failed");
            }
            m_ioWait += since(t0);
        }
        consume(i, dataOf[i]);
        m_cache->release(slotOf[i]);
        slotOf[i] = -1;
        ++next;
        return true;
    };
    try {
        for (size_t i = 0; i < count; ++i) {
            ExpertCache::Ref ref = m_cache->tryAcquire(L, experts[i]);
            bool dropped = false;
            while (ref.slot < 0) { // every slot pinned: hand over the next record first
                submitQueued();
                if (!handNext()) {
                    if (dropped)
                        throw Error(ErrorCode::OutOfMemory, "expert cache: no free slot for layer " + std::to_string(layer) +
                                                                " with nothing in flight; raise --budget");
                    m_cache->releaseSpeculative(); // demand comes before predictions
                    dropped = true;
                }
                ref = m_cache->tryAcquire(L, experts[i]);
            }
            slotOf[i] = ref.slot;
            dataOf[i] = ref.data;
            if (ref.mustRead && !m_options.readAhead) {
                readNow(b, experts[i], ref); // one read at a time, on this thread
                how[i] = Held::Resident;
            } else if (ref.mustRead) {
                how[i] = Held::Demand;
                toSubmit.push_back(makeJob(b, experts[i], ref, i));
                if (toSubmit.size() >= 8) // keep the readers busy from the start
                    submitQueued();
            } else {
                how[i] = m_cache->resident(L, experts[i]) ? Held::Resident : Held::Speculative;
            }
            ++taken;
            if (!m_options.readAhead) // one read at a time: each record is used as soon as it is read
                while (handNext()) {
                }
        }
        submitQueued();
        if (whileReading)
            whileReading();
        while (handNext()) {
        }
    } catch (...) {
        // Leave no read in flight into a slot we no longer own, and no pin behind.
        submitQueued();
        while (outstanding > 0) {
            m_pool->next();
            --outstanding;
        }
        for (size_t i = next; i < taken; ++i)
            if (slotOf[i] >= 0) {
                m_cache->waitReady(slotOf[i]);
                m_cache->release(slotOf[i]);
            }
        m_cache->releaseSpeculative();
        throw;
    }
    m_cache->releaseSpeculative();
}

void StreamedExpertSource::settlePredictions(int L, std::span<const int> chosen)
{
    // The router has chosen: guesses for this layer that have not started reading are now
    // either needed (to the front of the queue) or useless (dropped, their slots freed).
    if (!m_pool || m_pool->threads() == 0)
        return;
    std::vector<io::ReadJob> dropped = m_pool->sweepQueued([&](const io::ReadJob &j) {
        if (j.report || (j.tag >> 32) != uint64_t(L) + 1)
            return io::ReaderPool::Queued::Keep;
        const int e = int(j.tag & 0xffffffffu);
        return std::find(chosen.begin(), chosen.end(), e) != chosen.end() ? io::ReaderPool::Queued::Promote
                                                                           : io::ReaderPool::Queued::Drop;
    });
    for (const io::ReadJob &j : dropped)
        m_cache->cancelSpeculative(L, int(j.tag & 0xffffffffu));
}

void StreamedExpertSource::prefetch(int layer, std::span<const int> experts, int rows)
{
    if (m_options.lookahead <= 0 || !m_options.readAhead || rows < 1 || experts.size() % size_t(rows) != 0)
        return;
    const int L = indexOf(layer);
    // Rank by rank: every token's best guess before any token's second, so the readers
    // start on the likeliest records of every sequence of a batched step; an id that
    // several tokens guess is read once, at its best rank.
    const size_t width = experts.size() / size_t(rows);
    std::vector<int> &ids = m_predicted[size_t(L)];
    std::vector<int> &ranks = m_predictedRank[size_t(L)];
    ids.clear();
    ranks.clear();
    for (size_t r = 0; r < width; ++r)
        for (size_t t = 0; t < size_t(rows); ++t) {
            const int e = experts[t * width + r];
            if (std::find(ids.begin(), ids.end(), e) == ids.end()) {
                ids.push_back(e);
                ranks.push_back(int(r));
            }
        }
    if (!m_options.cacheEnabled)
        return; // nothing is kept: a guess would be gone before its layer runs
    // Predictions may pin at most what two layers' demand leaves free. The ids come best
    // first. A guess is read only while its rank has been right at least half the time so
    // far (counted from the start, with one right and one wrong assumed): a wrong one costs
    // a read, a slot and, on a virtual disk, real CPU (0.15 ms of kernel time per 299 KB
    // direct read on this project's test machines), so a rank that is more often wrong
    // than right does more harm than good. On the benchmark container ranks 1-4 pass
    // (right 97 / 91 / 89 / 71 %), ranks 5-6 do not (30 / 10 %); reading those had made a
    // decode at one working set of cache read 515 records where 348 do. Beyond the first
    // top-k - 1 a guess also goes only while a reader is idle, so a weaker guess never
    // holds the disk while demand reads wait.
    // With several tokens the slots kept free grow with them: this layer's demand (pinned
    // by now) is up to one top-k per token, and the next layer's wrong guesses must still
    // leave it room for its own.
    // When this layer's demand leaves no slot to spare (several sequences at a small cache),
    // the guesses wait until its records are consumed (issueDeferred): then they still load
    // during the next layer's attention, which otherwise waits for every read after its router.
    int64_t spare = m_cache->working() - int64_t(rows + 1) * m_topK;
    m_deferred.clear();
    m_deferredLayer = L;
    for (size_t i = 0; i < ids.size(); ++i) {
        const size_t rank = size_t(ranks[i]);
        if (!rankTrusted(rank))
            continue; // more often wrong than right
        if (spare <= 0) {
            m_deferred.push_back(i);
            continue;
        }
        if (int(rank) >= m_topK - 1 && m_pool->busy() >= m_pool->threads())
            break;
        --spare;
        readGuess(L, ids[i]);
    }
}

bool StreamedExpertSource::rankTrusted(size_t rank) const
{
    return rank >= m_rankGuessed.size() || 2 * (m_rankRight[rank] + 1) >= m_rankGuessed[rank] + 2;
}

bool StreamedExpertSource::readGuess(int L, int e)
{
    const Bank &b = m_banks[size_t(L)];
    if (e < 0 || e >= b.bank->experts())
        return false;
    ExpertCache::Ref ref = m_cache->prefetch(L, e);
    if (ref.slot < 0)
        return false; // resident already, or no slot to spare
    io::ReadJob job = makeJob(b, e, ref, (uint64_t(L) + 1) << 32 | uint64_t(e)); // settlePredictions() finds it by this
    job.report = false;
    m_pool->submit(job);
    return true;
}

void StreamedExpertSource::issueDeferred()
{
    if (m_deferred.empty() || m_deferredLayer < 0)
        return;
    const int L = m_deferredLayer;
    const std::vector<int> &ids = m_predicted[size_t(L)];
    const std::vector<int> &ranks = m_predictedRank[size_t(L)];
    // Every slot is unpinned now: the guesses may take all but one token's demand, so the
    // next layer's first misses never wait for a guess to be let go.
    int64_t spare = m_cache->working() - m_topK;
    for (size_t i : m_deferred) {
        if (spare <= 0 || i >= ids.size())
            break;
        if (ranks[i] >= m_topK - 1 && m_pool->busy() >= m_pool->threads())
            break; // a weaker guess goes only while a reader is idle
        --spare;
        readGuess(L, ids[i]);
    }
    m_deferred.clear();
}

model::ExpertFetchStats StreamedExpertSource::stats() const
{
    const CacheStats c = m_cache->stats();
    model::ExpertFetchStats s;
    s.hits = c.demandHits;
    s.misses = c.demandMisses;
    s.bytesRead = c.bytesRead;
    s.secondsIo = m_ioWait;
    s.speculativeFills = c.speculativeFills;
    s.speculativeUsed = c.speculativeUsed;
    s.rereads = c.rereads;
    s.lookaheadPredicted = std::accumulate(m_rankGuessed.begin(), m_rankGuessed.end(), int64_t(0));
    s.lookaheadCorrect = std::accumulate(m_rankRight.begin(), m_rankRight.end(), int64_t(0));
    s.directIo = m_directIo;
    s.ioRing = m_pool && m_pool->ring();
    return s;
}

void StreamedExpertSource::saveUsage(const std::string &usagePath) const
{
    const std::vector<std::pair<int, int>> resident = m_cache->residentRecords();
    std::vector<UsageEntry> entries = learnedEntries(resident, m_uses, m_lastPass);
    for (UsageEntry &u : entries)
        u.layer = m_banks[size_t(u.layer)].layer; // the record names absolute layers
    writeUsage(usagePath, entries, uint64_t(m_passes));
    writeRouting(routingRecordPath(usagePath), m_routing);
}

int StreamedExpertSource::warmFrom(const std::string &usagePath)
{
    std::vector<UsageEntry> entries;
    for (UsageEntry u : readUsage(usagePath)) {
        auto it = m_layerIndex.find(u.layer);
        if (it == m_layerIndex.end() || u.expert >= m_banks[size_t(it->second)].bank->experts())
            continue; // recorded on another container
        u.layer = it->second;
        entries.push_back(u);
    }
    // Keep two layers' worth free so the first token never waits on an eviction scan.
    const int64_t room = m_options.cacheEnabled ? m_cache->working() - 2 * int64_t(m_topK) : 0;
    const int loaded = warmStart(*m_cache, std::move(entries), room, [this](const UsageEntry &u, const ExpertCache::Ref &ref) {
        readNow(m_banks[size_t(u.layer)], u.expert, ref);
    });
    m_ioWait = 0;
    return loaded;
}

int64_t StreamedExpertSource::records() const
{
    int64_t n = 0;
    for (const Bank &b : m_banks)
        n += b.bank->experts();
    return n;
}

bool StreamedExpertSource::holdsEveryExpert() const
{
    const int64_t n = records();
    return m_options.cacheEnabled && m_pool && n > 0 && n <= m_cache->working();
}

int StreamedExpertSource::loadEveryExpert(const std::function<bool(double)> &progress)
{
    if (!holdsEveryExpert())
        return 0;
    m_cache->commitPages(int(records()), int(std::max(1u, std::thread::hardware_concurrency())));
    int loaded = 0;
    for (size_t L = 0; L < m_banks.size(); ++L) {
        const Bank &b = m_banks[L];
        std::vector<io::ReadJob> jobs;
        std::vector<std::pair<int, int>> slots; // (slot, expert)
        for (int e = 0; e < b.bank->experts(); ++e) {
            const ExpertCache::Ref ref = m_cache->prefetch(int(L), e, false);
            if (ref.slot < 0)
                continue; // resident already (a warm start)
            io::ReadJob job = makeJob(b, e, ref, 0);
            job.report = false; // waited for through the cache, as a guess is
            jobs.push_back(std::move(job));
            slots.emplace_back(ref.slot, e);
        }
        m_pool->submit(std::move(jobs));
        std::string failure;
        for (auto [slot, e] : slots)
            if (!m_cache->waitReady(slot) && failure.empty())
                failure = b.file.path() + ": read of expert " + std::to_string(e) +
                          " failed while loading every expert; the container may be damaged (re-convert it)";
        m_cache->releaseSpeculative();
        if (!failure.empty())
            throw Error(ErrorCode::Io, failure);
        loaded += int(slots.size());
        if (progress && !progress(double(L + 1) / double(m_banks.size()))) {
            m_cache->resetStats();
            throw Error(ErrorCode::Cancelled, "loading every expert cancelled");
        }
    }
    m_cache->resetStats();
    m_ioWait = 0;
    return loaded;
}

} // namespace waste::cache
