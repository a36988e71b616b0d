// libwaste's expert-cache simulator, public: replays a recorded routing trace (the
// usage.routing.jsonl a --learn run writes) through the engine's real expert cache and
// compares it with Belady's optimum on the same trace and slot count (`waste cache-sim`).
// Demand accesses only, token by token, layer by layer, cold start, one slot per record.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace waste {

struct CacheSimResult {
    int64_t accesses = 0;
    int64_t hits = 0;
    double hitRate = 0;
    double optHitRate = 0; // Belady's MIN on the same trace and slots
    std::string policy;
    int slots = 0;
};

class CacheSimulator {
public:
    // Loads the trace; throws waste::Error (Io, Format) naming the file.
    explicit CacheSimulator(const std::string &tracePath);
    ~CacheSimulator();
    CacheSimulator(const CacheSimulator &) = delete;
    CacheSimulator &operator=(const CacheSimulator &) = delete;

    int64_t tokens() const;
    int layers() const;     // MoE layers per token
    int experts() const;    // 1 + the largest expert id seen
    int topK() const;
    int64_t workingSet() const; // records one token reads: layers x top-k

    // policy: "default", "reuse", "layerfreq", "lru" or "lfru"; throws Error(Argument) for
    // another name.
    CacheSimResult run(int slots, std::string_view policy = "default") const;

private:
    struct Trace;
    std::unique_ptr<Trace> m_trace;
};

} // namespace waste
