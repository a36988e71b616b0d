#include "io/reader_pool.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <chrono>

namespace waste::io {

ReaderPool::ReaderPool(int threads)
{
    for (int i = 0; i < threads; ++i)
        m_threads.emplace_back([this] { run(); });
}

ReaderPool::~ReaderPool()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
        m_queue.clear();
    }
    m_work.notify_all();
    for (auto &t : m_threads)
        t.join();
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
            d.error = job.file->path() + ": short read at offset " + std::to_string(job.offset) + " (" +
                      std::to_string(d.bytes) + " of " + std::to_string(job.bytes) + " bytes): truncated file?";
    } catch (const std::exception &e) {
        d.ok = false;
        d.error = e.what();
    }
    d.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (job.finish) {
        try {
            job.finish(d);
        } catch (const std::exception &e) {
            d.ok = false;
            d.error = e.what();
        }
    }
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
    if (m_threads.empty()) {
        ReadDone d = execute(job);
        if (job.report) {
            std::lock_guard lock(m_mutex);
            m_done.push_back(std::move(d));
        }
        return;
    }
    {
        std::lock_guard lock(m_mutex);
        enqueue(job);
    }
    m_work.notify_one();
}

void ReaderPool::submit(std::vector<ReadJob> jobs)
{
    if (jobs.empty())
        return;
    if (m_threads.empty()) {
        for (const ReadJob &job : jobs)
            submit(job);
        return;
    }
    bool wake = false; // none idle: the busy ones take the jobs when they finish
    {
        std::lock_guard lock(m_mutex);
        for (const ReadJob &job : jobs)
            enqueue(job);
        if (m_idle > m_waking) {
            ++m_waking;
            wake = true;
        }
    }
    if (wake)
        m_work.notify_one(); // that reader wakes the next (run())
}

void ReaderPool::run()
{
    for (;;) {
        ReadJob job;
        int wakeNext = 0;
        {
            std::unique_lock lock(m_mutex);
            // Demand jobs sit at the front of the queue, so a speculative front means no
            // demand job is waiting; it still waits while one is being read.
            auto takeable = [&] { return !m_queue.empty() && (m_queue.front().report || m_demandReading == 0); };
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

int ReaderPool::outstanding() const
{
    std::lock_guard lock(m_mutex);
    return m_inFlight + int(m_done.size());
}

} // namespace waste::io
