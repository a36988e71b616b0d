#include "plan/system_memory.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#if defined(_WIN32)
#define NOMINMAX
#include <windows.h>
#include <psapi.h>
#elif defined(__APPLE__)
#include <mach/mach.h>
#include <sys/resource.h>
#include <sys/sysctl.h>
#include <unistd.h>
#else
#include <sys/resource.h>
#include <unistd.h>
#endif

namespace waste {

namespace fs = std::filesystem;

namespace {

std::string slurp(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    if (!f)
        return {};
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// A limit file's value; -1 for "max", absent or effectively unlimited (v1 writes ~2^63).
int64_t readLimit(const fs::path &p)
{
    std::string s = slurp(p.string());
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.pop_back();
    if (s.empty() || s == "max")
        return -1;
    char *end = nullptr;
    unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (end == s.c_str() || v >= (1ull << 60))
        return -1;
    return int64_t(v);
}

struct Mount {
    std::string root, point, type, superOptions;
};

std::vector<Mount> cgroupMounts(const std::string &mountinfo)
{
    std::vector<Mount> out;
    std::istringstream in(mountinfo);
    std::string line;
    while (std::getline(in, line)) {
        auto dash = line.find(" - ");
        if (dash == std::string::npos)
            continue;
        std::istringstream a(line.substr(0, dash)), b(line.substr(dash + 3));
        std::string id, parent, dev;
        Mount m;
        a >> id >> parent >> dev >> m.root >> m.point;
        std::string source;
        b >> m.type >> source >> m.superOptions;
        if (m.type == "cgroup2" || m.type == "cgroup")
            out.push_back(m);
    }
    return out;
}

bool hasOption(const std::string &opts, const std::string &want)
{
    std::istringstream in(opts);
    std::string o;
    while (std::getline(in, o, ','))
        if (o == want)
            return true;
    return false;
}

// Smallest finite limit among `files` in `leaf` and every directory up to `top`.
int64_t walkUp(fs::path leaf, const fs::path &top, std::initializer_list<const char *> files)
{
    int64_t best = -1;
    const fs::path stop = top.lexically_normal();
    for (fs::path dir = leaf.lexically_normal();; dir = dir.parent_path()) {
        for (const char *f : files) {
            int64_t v = readLimit(dir / f);
            if (v >= 0 && (best < 0 || v < best))
                best = v;
        }
        if (dir == stop || dir == dir.parent_path() || dir.string().size() <= stop.string().size())
            break;
    }
    return best;
}

fs::path under(const Mount &m, const std::string &cgPath)
{
    // Inside a namespace /proc/self/cgroup paths are relative to the mount's root.
    std::string rel = cgPath;
    if (m.root != "/" && rel.rfind(m.root, 0) == 0)
        rel = rel.substr(m.root.size());
    return fs::path(m.point) / fs::path(rel).relative_path();
}

} // namespace

namespace plan {

int64_t cgroupMemoryLimit(const std::string &procSelfCgroup, const std::string &mountinfo)
{
    const auto mounts = cgroupMounts(mountinfo);
    int64_t best = -1;
    auto take = [&](int64_t v) {
        if (v >= 0 && (best < 0 || v < best))
            best = v;
    };
    std::istringstream in(procSelfCgroup);
    std::string line;
    while (std::getline(in, line)) {
        // hierarchy-id:controllers:path
        auto c1 = line.find(':'), c2 = line.find(':', c1 + 1);
        if (c1 == std::string::npos || c2 == std::string::npos)
            continue;
        const std::string controllers = line.substr(c1 + 1, c2 - c1 - 1), path = line.substr(c2 + 1);
        for (const Mount &m : mounts) {
            if (controllers.empty() && m.type == "cgroup2")
                take(walkUp(under(m, path), m.point, {"memory.max", "memory.high"}));
            else if (!controllers.empty() && m.type == "cgroup" && hasOption(controllers, "memory") &&
                     hasOption(m.superOptions, "memory"))
                take(walkUp(under(m, path), m.point, {"memory.limit_in_bytes"}));
        }
    }
    return best;
}

int64_t cgroupMemoryLimit()
{
#if defined(__linux__)
    return cgroupMemoryLimit(slurp("/proc/self/cgroup"), slurp("/proc/self/mountinfo"));
#else
    return -1;
#endif
}

int64_t ownResidentBytes()
{
#if defined(_WIN32)
    PROCESS_MEMORY_COUNTERS pmc{};
    return ::GetProcessMemoryInfo(::GetCurrentProcess(), &pmc, sizeof pmc) ? int64_t(pmc.WorkingSetSize) : 0;
#elif defined(__APPLE__)
    mach_task_basic_info info{};
    mach_msg_type_number_t count = MACH_TASK_BASIC_INFO_COUNT;
    if (task_info(mach_task_self(), MACH_TASK_BASIC_INFO, reinterpret_cast<task_info_t>(&info), &count) != KERN_SUCCESS)
        return 0;
    return int64_t(info.resident_size);
#else
    std::istringstream in(slurp("/proc/self/statm"));
    int64_t size = 0, rss = 0;
    in >> size >> rss;
    return rss * int64_t(::sysconf(_SC_PAGESIZE));
#endif
}

int64_t peakResidentBytes()
{
#if defined(_WIN32)
    PROCESS_MEMORY_COUNTERS pmc{};
    return ::GetProcessMemoryInfo(::GetCurrentProcess(), &pmc, sizeof pmc) ? int64_t(pmc.PeakWorkingSetSize) : 0;
#else
    struct rusage ru {};
    ::getrusage(RUSAGE_SELF, &ru);
#if defined(__APPLE__)
    return int64_t(ru.ru_maxrss); // bytes on macOS
#else
    return int64_t(ru.ru_maxrss) * 1024; // KiB on Linux
#endif
#endif
}

int64_t otherProcessesBytes()
{
    int64_t used = 0;
#if defined(_WIN32)
    MEMORYSTATUSEX ms{};
    ms.dwLength = sizeof ms;
    if (::GlobalMemoryStatusEx(&ms))
        used = int64_t(ms.ullTotalPhys - ms.ullAvailPhys);
#elif defined(__APPLE__)
    vm_statistics64_data_t vm{};
    mach_msg_type_number_t count = HOST_VM_INFO64_COUNT;
    if (host_statistics64(mach_host_self(), HOST_VM_INFO64, reinterpret_cast<host_info64_t>(&vm), &count) == KERN_SUCCESS)
        used = (int64_t(vm.active_count) + int64_t(vm.wire_count) + int64_t(vm.compressor_page_count)) *
               int64_t(::sysconf(_SC_PAGESIZE));
#else
    std::istringstream in(slurp("/proc/meminfo"));
    std::string key, unit;
    int64_t value = 0, total = -1, avail = -1;
    while (in >> key >> value) {
        std::getline(in, unit);
        if (key == "MemTotal:")
            total = value * 1024;
        else if (key == "MemAvailable:")
            avail = value * 1024;
    }
    if (total > 0 && avail >= 0)
        used = total - avail;
#endif
    return std::max<int64_t>(0, used - ownResidentBytes());
}

} // namespace plan

int64_t physicalRam()
{
#if defined(_WIN32)
    MEMORYSTATUSEX ms{};
    ms.dwLength = sizeof ms;
    return ::GlobalMemoryStatusEx(&ms) ? int64_t(ms.ullTotalPhys) : 0;
#elif defined(__APPLE__)
    int64_t mem = 0;
    size_t len = sizeof mem;
    return ::sysctlbyname("hw.memsize", &mem, &len, nullptr, 0) == 0 ? mem : 0;
#else
    return int64_t(::sysconf(_SC_PHYS_PAGES)) * int64_t(::sysconf(_SC_PAGESIZE));
#endif
}

int64_t usableRam()
{
    // Capacity only, never current pressure: the same command gives the same budget.
    const int64_t phys = physicalRam();
    const int64_t cg = plan::cgroupMemoryLimit();
    return cg > 0 && cg < phys ? cg : phys;
}

int64_t parseSize(std::string_view text)
{
    auto bad = [&] {
        return Error(ErrorCode::Argument, "cannot read size '" + std::string(text) + "' (use e.g. 8G, 512M, 1.5G or bytes)");
    };
    std::string s(text);
    s.erase(std::remove_if(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); }), s.end());
    size_t i = 0;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.'))
        ++i;
    if (i == 0)
        throw bad();
    std::string number = s.substr(0, i), unit = s.substr(i);
    for (auto &ch : unit)
        ch = char(std::toupper(static_cast<unsigned char>(ch)));
    if (unit.size() > 1 && (unit.ends_with("IB") || unit.ends_with("B")))
        unit = unit.substr(0, unit.size() - (unit.ends_with("IB") ? 2 : 1));
    int shift;
    if (unit.empty() || unit == "B")
        shift = 0;
    else if (unit == "K")
        shift = 10;
    else if (unit == "M")
        shift = 20;
    else if (unit == "G")
        shift = 30;
    else if (unit == "T")
        shift = 40;
    else
        throw bad();
    if (std::count(number.begin(), number.end(), '.') > 1)
        throw bad();
    double v = std::strtod(number.c_str(), nullptr);
    double bytes = std::ldexp(v, shift);
    if (!(bytes >= 0) || bytes > 9.0e18 || (shift == 0 && number.find('.') != std::string::npos))
        throw bad();
    return int64_t(std::llround(bytes));
}

} // namespace waste
