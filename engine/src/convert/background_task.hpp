// One task at a time on a thread of its own, each started once the one before has ended:
// the converter makes a finished unit durable (its fsyncs, the bank's rename, the journal)
// here while the next unit converts, instead of leaving the disk and the CPU idle for it.
#pragma once

#include <exception>
#include <functional>
#include <thread>

namespace waste::convert {

class BackgroundTask {
public:
    BackgroundTask() = default;
    ~BackgroundTask() {
        if (m_thread.joinable()) m_thread.join(); // an error nobody waited for is dropped: the caller is already failing
    }
    BackgroundTask(const BackgroundTask &) = delete;
    BackgroundTask &operator=(const BackgroundTask &) = delete;

    // Waits for the task before (rethrowing its error), then starts `task`.
    void start(std::function<void()> task) {
        wait();
        m_thread = std::thread([this, task = std::move(task)] {
            try {
                task();
            } catch (...) {
                m_error = std::current_exception();
            }
        });
    }

    // Waits for the running task, if any, and rethrows its error.
    void wait() {
        if (m_thread.joinable()) m_thread.join();
        if (m_error) {
            const std::exception_ptr e = m_error;
            m_error = nullptr;
            std::rethrow_exception(e);
        }
    }

private:
    std::thread m_thread;
    std::exception_ptr m_error;
};

} // namespace waste::convert
