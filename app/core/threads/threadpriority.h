// Scheduling priority for the app's worker threads.
//
// On a 2-core laptop the engine, a conversion's workers and a download's hashing all want a
// core while the GUI thread needs one for a few milliseconds every frame. At equal priority
// the scheduler lets the GUI wait behind them (stalls of 100 ms and more were measured).
// Lowering the workers' priority keeps the GUI responsive and costs them nothing when
// cores are free. Threads a worker starts afterwards inherit its priority (Linux: the nice
// value is per thread and copied on creation), so the engine's reader and compute threads
// follow the engine thread.
#pragma once

enum class ThreadRole {
    Engine,     // generation: below the GUI, above background jobs
    Background, // conversion, downloads, hashing: only what is left over
};

// Applies the role's priority to the calling thread. Returns false where the platform
// refused (the thread then keeps its priority; nothing else changes).
bool setCurrentThreadRole(ThreadRole role);
