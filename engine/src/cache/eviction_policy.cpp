#include "cache/eviction_policy.hpp"

#include "cache/layer_freq_policy.hpp"
#include "cache/lru_policy.hpp"
#include "cache/reuse_policy.hpp"
#include "cache/sampled_lfru_policy.hpp"

#include <waste/waste.hpp>

namespace waste::cache {

std::vector<std::string> policyNames() { return {"reuse", "layerfreq", "lru", "lfru"}; }

std::string policyName(PolicyKind kind)
{
    switch (kind) {
    case PolicyKind::Reuse: return "reuse";
    case PolicyKind::LayerFreq: return "layerfreq";
    case PolicyKind::Lru: return "lru";
    case PolicyKind::SampledLfru: return "lfru";
    }
    return "?";
}

PolicyKind parsePolicy(std::string_view name)
{
    if (name == "default")
        return kDefaultPolicy;
    if (name == "reuse")
        return PolicyKind::Reuse;
    if (name == "layerfreq")
        return PolicyKind::LayerFreq;
    if (name == "lru")
        return PolicyKind::Lru;
    if (name == "lfru")
        return PolicyKind::SampledLfru;
    throw Error(ErrorCode::Argument, "unknown cache policy '" + std::string(name) + "' (known: reuse, layerfreq, lru, lfru)");
}

std::unique_ptr<EvictionPolicy> makePolicy(PolicyKind kind, const PolicyShape &shape)
{
    switch (kind) {
    case PolicyKind::Reuse: return std::make_unique<ReusePolicy>(shape);
    case PolicyKind::LayerFreq: return std::make_unique<LayerFreqPolicy>(shape);
    case PolicyKind::Lru: return std::make_unique<LruPolicy>(shape);
    case PolicyKind::SampledLfru: return std::make_unique<SampledLfruPolicy>(shape);
    }
    throw Error(ErrorCode::Argument, "unknown cache policy");
}

} // namespace waste::cache
