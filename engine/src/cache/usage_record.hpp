// The --learn record: which experts a run used, to warm the cache at the next open.
//
// usage.waste keeps the reference engine's layout (so either tool reads the other's):
// 16-byte header {u32 magic "WUSG", u32 version 1, u64 clock} and 16-byte entries
// {u16 layer, u16 expert, u32 hits, u32 last_seen, u32 reserved}, little-endian.
// usage.routing.jsonl beside it holds the session's routing in the trace format
// (one line per forward pass) so the planner can replay it through the real policy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace waste::cache {

struct UsageEntry {
    int layer = 0;
    int expert = 0;
    uint32_t hits = 0;
    uint32_t lastSeen = 0;
};

void writeUsage(const std::string &path, const std::vector<UsageEntry> &entries, uint64_t clock);
// Missing file: empty. Malformed: Error(Format) naming the file.
std::vector<UsageEntry> readUsage(const std::string &path);

void writeRouting(const std::string &path, const std::vector<std::vector<std::vector<int>>> &passes);

} // namespace waste::cache
