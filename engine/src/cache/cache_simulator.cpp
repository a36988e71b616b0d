// waste::CacheSimulator (waste/cache_sim.hpp): the public door to trace replay; the loaded
// trace stays private, the replay is cacheSim().
#include "waste/cache_sim.hpp"

#include "cache/cache_sim.hpp"

namespace waste {

struct CacheSimulator::Trace {
    cache::RoutingTrace routing;
};

CacheSimulator::CacheSimulator(const std::string &tracePath)
    : m_trace(std::make_unique<Trace>(Trace{cache::loadRoutingTrace(tracePath)}))
{
}

CacheSimulator::~CacheSimulator() = default;

int64_t CacheSimulator::tokens() const { return int64_t(m_trace->routing.tokens.size()); }
int CacheSimulator::layers() const { return m_trace->routing.layers; }
int CacheSimulator::experts() const { return m_trace->routing.experts; }
int CacheSimulator::topK() const { return m_trace->routing.topK; }
int64_t CacheSimulator::workingSet() const { return m_trace->routing.workingSet(); }

CacheSimResult CacheSimulator::run(int slots, std::string_view policy) const
{
    return cache::cacheSim(m_trace->routing, slots, cache::parsePolicy(policy));
}

} // namespace waste
