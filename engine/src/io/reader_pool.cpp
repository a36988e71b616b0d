#include "io/reader_pool.hpp"

#include "compute/thread_name.hpp"
#include "io/uring.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace waste::io {

namespace {

// What both backends say of a read that got fewer bytes than asked: the file ends early.
std::string shortReadError(const ReadJob &job, int64_t got)
{
    return job.file->path() + ": short read at offset " + std::to_string(job.offset) + " (" + std::to_string(got) +
           " of " + std::to_string(job.bytes) + " bytes): truncated file?";
}

// Runs the job's finish step on the reader (e.g. checking the record); its failure fails the read.
void runFinish(const ReadJob &job, ReadDone &d)
{
    if (!job.finish)
        return;
    try {
        job.finish(d);
    } catch (const std::exception &e) {
        d.ok = false;
        d.error = e.what();
    }
}

} // namespace

ReaderPool::ReaderPool(int depth, Backend backend) : m_depth(std::max(depth, 0))
{
    if (m_depth > 0 && backend != Backend::Threads) {
        m_ring = Uring::open(unsigned(m_depth) + 1, m_ringRefused); // + 1: the wake-up watch
        if (!m_ring && backend == Backend::Ring)
            throw Error(ErrorCode::Io, "io_uring: " + m_ringRefused);
    } else {
        m_ringRefused.clear();
    }
    if (m_ring)
        m_threads.emplace_back([this] {
            compute::nameThisThread("waste-ring");
            runRing();
        });
    else
        for (int i = 0; i < m_depth; ++i)
            m_threads.emplace_back([this] {
                compute::nameThisThread("waste-reader");
                run();
            });
}

ReaderPool::~ReaderPool()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
        m_queue.clear();
    }
    m_work.notify_all();
    if (m_ring)
        m_ring->wake();
    for (auto &t : m_threads)
        t.join();
}

bool ReaderPool::takeable() const
{
    // Demand jobs sit at the front of the queue, so a speculative front means no demand
    // job is waiting; it still waits while one is being read.
    return !m_queue.empty() && (m_queue.front().report || m_demandReading == 0);
}

ReadDone ReaderPool::execute(const ReadJob &job)
{
    ReadDone d;
    d.tag = job.tag;
    auto t0 = std::chrono::steady_clock::now();
    try {
        d.bytes = job.file->readAt(job.dst, job.bytes, job.offset);
        d.ok = d.bytes == job.bytes;
        if (!d.ok)
            d.error = shortReadError(job, d.bytes);
    } catch (const std::exception &e) {
        d.ok = false;
        d.error = e.what();
    }
    d.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    runFinish(job, d);
    return d;
}

void ReaderPool::enqueue(const ReadJob &job)
{
    if (job.report) { // demand goes ahead of speculation still waiting for a thread
        auto firstSpeculative = std::find_if(m_queue.begin(), m_queue.end(), [](const ReadJob &j) { return !j.report; });
        m_queue.insert(firstSpeculative, job);
        ++m_inFlight;
    } else {
        m_queue.push_back(job);
    }
}

void ReaderPool::submit(const ReadJob &job)
{
    if (m_depth == 0) {
        ReadDone d = execute(job);
        if (job.report) {
            std::lock_guard lock(m_mutex);
            m_done.push_back(std::move(d));
        }
        return;
    }
    submit(std::vector<ReadJob>{job});
}

void ReaderPool::submit(std::vector<ReadJob> jobs)
{
    if (jobs.empty())
        return;
    if (m_depth == 0) {
        for (const ReadJob &job : jobs)
            submit(job);
        return;
    }
    bool wake = false; // none idle: the busy ones take the jobs when they finish
    {
        std::lock_guard lock(m_mutex);
        for (const ReadJob &job : jobs)
            enqueue(job);
        if (m_ring) { // one wake-up until the ring thread has run: it takes every job queued by then
            wake = !m_wakePending;
            m_wakePending = true;
        } else if (m_idle > m_waking) {
            ++m_waking;
            wake = true;
        }
    }
    if (wake && m_ring)
        m_ring->wake();
    else if (wake)
        m_work.notify_one(); // that reader wakes the next (run())
}

void ReaderPool::run()
{
    for (;;) {
        ReadJob job;
        int wakeNext = 0;
        {
            std::unique_lock lock(m_mutex);
            ++m_idle;
            m_work.wait(lock, [&] { return m_stop || takeable(); });
            --m_idle;
            if (m_waking > 0)
                --m_waking;
            if (m_stop)
                return;
            job = m_queue.front();
            m_queue.pop_front();
            ++m_reading;
            if (job.report)
                ++m_demandReading;
            // A batch's next jobs: pass the wake-up on to two more readers (a tree: a
            // layer's dozen reads all start after about four wake-ups, not twelve in a row).
            // Readers already woken and not yet running count against both the idle
            // ones and the jobs left, so no reader wakes to an empty queue.
            if (takeable())
                wakeNext = std::max(0, std::min({m_idle - m_waking, int(m_queue.size()) - m_waking, 2}));
            m_waking += wakeNext;
        }
        for (int i = 0; i < wakeNext; ++i)
            m_work.notify_one();
        ReadDone d = execute(job);
        if (!job.report) {
            std::lock_guard lock(m_mutex);
            --m_reading;
            continue;
        }
        bool heldGuesses = false;
        {
            std::lock_guard lock(m_mutex);
            m_done.push_back(std::move(d));
            --m_inFlight;
            --m_reading;
            heldGuesses = --m_demandReading == 0 && !m_queue.empty();
        }
        m_finished.notify_all();
        if (heldGuesses) // the threads that passed over a guess may take it now
            m_work.notify_all();
    }
}

void ReaderPool::runRing()
{
#ifndef _WIN32
    using Clock = std::chrono::steady_clock;
    constexpr uint64_t kWake = ~uint64_t(0);
    struct Slot {
        ReadJob job;
        int64_t done = 0; // bytes landed so far (a read may come back short and go on)
        Clock::time_point t0;
    };
    std::vector<Slot> slots(static_cast<size_t>(m_depth));
    std::vector<int> freeSlots;
    for (int i = m_depth - 1; i >= 0; --i)
        freeSlots.push_back(i);
    int inRing = 0;
    // The ring holds depth + 1 requests: every slot's read and the wake-up watch, so
    // queueing never finds it full.
    auto queueRest = [&](int i) {
        Slot &s = slots[size_t(i)];
        const int64_t rest = std::min<int64_t>(s.job.bytes - s.done, int64_t(1) << 30);
        m_ring->queueRead(s.job.file->fd(), s.job.dst + s.done, uint32_t(rest), s.job.offset + s.done, uint64_t(i));
    };
    m_ring->queueWakeWatch(kWake);
    std::vector<std::pair<uint64_t, int>> landed;
    for (;;) {
        {
            std::lock_guard lock(m_mutex);
            if (m_stop && inRing == 0)
                return;
            while (!m_stop && inRing < m_depth && takeable()) {
                const int i = freeSlots.back();
                freeSlots.pop_back();
                Slot &s = slots[size_t(i)];
                s.job = std::move(m_queue.front());
                m_queue.pop_front();
                s.done = 0;
                s.t0 = Clock::now();
                ++m_reading;
                if (s.job.report)
                    ++m_demandReading;
                ++inRing;
                queueRest(i);
            }
        }
        // Submits what was queued and sleeps until something lands (a read or a wake-up).
        const int err = m_ring->submit(true);
        if (err < 0 && err != -EINTR && err != -EAGAIN && err != -EBUSY)
            std::this_thread::sleep_for(std::chrono::milliseconds(1)); // not expected: retry, do not spin
        landed.clear();
        m_ring->reap([&](uint64_t data, int res) { landed.emplace_back(data, res); });
        for (auto [data, res] : landed) {
            if (data == kWake) {
                m_ring->clearWake();
                {
                    std::lock_guard lock(m_mutex);
                    m_wakePending = false;
                }
                m_ring->queueWakeWatch(kWake);
                continue;
            }
            const int i = int(data);
            Slot &s = slots[size_t(i)];
            if (res == -EINTR || res == -EAGAIN) {
                queueRest(i);
                continue;
            }
            if (res > 0) {
                s.done += res;
                if (s.done < s.job.bytes) { // short, not at the end of the file: read on
                    queueRest(i);
                    continue;
                }
            }
            const ReadJob &job = s.job;
            ReadDone d;
            d.tag = job.tag;
            d.bytes = s.done;
            if (res < 0) {
                d.error = job.file->path() + ": read of " + std::to_string(job.bytes) + " bytes at offset " +
                          std::to_string(job.offset) + " failed: " + std::strerror(-res);
            } else {
                d.ok = d.bytes == job.bytes;
                if (!d.ok)
                    d.error = shortReadError(job, d.bytes);
            }
            d.seconds = std::chrono::duration<double>(Clock::now() - s.t0).count();
            runFinish(job, d);
            const bool report = job.report;
            s.job = ReadJob{};
            {
                std::lock_guard lock(m_mutex);
                if (report) {
                    m_done.push_back(std::move(d));
                    --m_inFlight;
                    --m_demandReading;
                }
                --m_reading;
                --inRing;
                freeSlots.push_back(i);
            }
            if (report)
                m_finished.notify_all();
        }
    }
#endif
}

std::optional<ReadDone> ReaderPool::next()
{
    std::unique_lock lock(m_mutex);
    m_finished.wait(lock, [&] { return !m_done.empty() || m_inFlight == 0; });
    if (m_done.empty())
        return std::nullopt;
    ReadDone d = std::move(m_done.front());
    m_done.pop_front();
    return d;
}

std::optional<ReadDone> ReaderPool::poll()
{
    std::lock_guard lock(m_mutex);
    if (m_done.empty())
        return std::nullopt;
    ReadDone d = std::move(m_done.front());
    m_done.pop_front();
    return d;
}

std::vector<ReadJob> ReaderPool::sweepQueued(const std::function<Queued(const ReadJob &)> &decide)
{
    std::vector<ReadJob> dropped;
    std::lock_guard lock(m_mutex);
    std::deque<ReadJob> front, rest;
    for (ReadJob &job : m_queue) {
        switch (decide(job)) {
        case Queued::Keep: rest.push_back(std::move(job)); break;
        case Queued::Promote: front.push_back(std::move(job)); break;
        case Queued::Drop:
            if (job.report)
                --m_inFlight;
            dropped.push_back(std::move(job));
            break;
        }
    }
    m_queue = std::move(front);
    for (ReadJob &job : rest)
        m_queue.push_back(std::move(job));
    if (m_inFlight == 0)
        m_finished.notify_all();
    return dropped;
}

int ReaderPool::busy() const
{
    std::lock_guard lock(m_mutex);
    return m_reading + int(m_queue.size());
}

int ReaderPool::queued() const
{
    std::lock_guard lock(m_mutex);
    return int(m_queue.size());
}

int ReaderPool::outstanding() const
{
    std::lock_guard lock(m_mutex);
    return m_inFlight + int(m_done.size());
}

} // namespace waste::io
