#include "threads/threadpriority.h"

#if defined(__linux__)
#include <cerrno>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#elif defined(__APPLE__)
#include <pthread.h>
#include <sys/qos.h>
#elif defined(_WIN32)
#include <windows.h>
#endif

bool setCurrentThreadRole(ThreadRole role)
{
#if defined(__linux__)
    // Nice values: each step is about 1.25x less CPU under contention, so the GUI (0) gets
    // about 2.4x the engine's share (4) and the engine about 9x a background job's (10).
    const int nice = role == ThreadRole::Engine ? 4 : 10;
    const auto tid = static_cast<id_t>(syscall(SYS_gettid));
    // Only ever lowers the priority: raising it back would need CAP_SYS_NICE.
    errno = 0;
    const int current = getpriority(PRIO_PROCESS, tid);
    if (errno == 0 && current >= nice)
        return true;
    return setpriority(PRIO_PROCESS, tid, nice) == 0;
#elif defined(__APPLE__)
    return pthread_set_qos_class_self_np(role == ThreadRole::Engine ? QOS_CLASS_USER_INITIATED : QOS_CLASS_UTILITY, 0) == 0;
#elif defined(_WIN32)
    return SetThreadPriority(GetCurrentThread(),
                             role == ThreadRole::Engine ? THREAD_PRIORITY_BELOW_NORMAL : THREAD_PRIORITY_LOWEST) != 0;
#else
    (void)role;
    return false;
#endif
}
