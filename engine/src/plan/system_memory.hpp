// What the machine offers: physical RAM, the cgroup limit, what other processes hold.
#pragma once

#include <cstdint>
#include <string>

namespace waste::plan {

// The smallest finite cgroup memory limit over this process's cgroup and its ancestors:
// v2 memory.max and memory.high (a leaf saying "max" does not cancel a finite parent),
// v1 memory.limit_in_bytes. -1 when there is none. Inputs are the texts of
// /proc/self/cgroup and /proc/self/mountinfo (parameters so tests can fake a hierarchy).
int64_t cgroupMemoryLimit(const std::string &procSelfCgroup, const std::string &mountinfo);
int64_t cgroupMemoryLimit(); // this process, read from /proc

// RAM held right now by everything but this process: MemTotal - MemAvailable - own RSS
// (Linux), wired + active + compressed - own (macOS), total - available - own (Windows).
int64_t otherProcessesBytes();
int64_t ownResidentBytes();
int64_t peakResidentBytes(); // high-water mark of this process (VmHWM / ru_maxrss)

} // namespace waste::plan
