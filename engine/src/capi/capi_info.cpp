// C API functions that need no open model: version, sizes, the planner, top-k.
#include "capi/capi_call.hpp"

#include <waste/prefix.hpp>

#include <cstdio>
#include <span>

using waste::capi::guarded;
using waste::capi::nullArgument;

namespace waste::capi {

void fillPlan(const MemoryPlan &p, waste_memplan *out)
{
    *out = waste_memplan{};
    out->ctx_tokens = p.ctx;
    out->trunk_bytes = p.trunk_bytes;
    out->state_bytes = p.state_bytes;
    out->scratch_bytes = p.scratch_bytes;
    out->min_expert_cache = p.min_expert_cache;
    out->vision_bytes = p.vision_bytes;
    out->floor_bytes = p.floor_bytes;
    out->recommended_bytes = p.recommended_bytes;
    out->working_set_bytes = p.working_set_bytes;
    out->physical_ram_bytes = p.physical_ram_bytes;
    out->usable_ram_bytes = p.usable_ram_bytes;
    out->cliff_bytes = p.cliff_bytes;
}

} // namespace waste::capi

extern "C" {

const char *waste_version(void) { return waste::kVersion; }

int waste_version_number(void)
{
    int major = 0, minor = 0, patch = 0;
    std::sscanf(waste::kVersion, "%d.%d.%d", &major, &minor, &patch);
    return major * 10000 + minor * 100 + patch;
}

const char *waste_build_info(void)
{
    static const std::string info = waste::buildInfo(); // thread-safe initialisation
    return info.c_str();
}

waste_status waste_parse_size(const char *text, int64_t *bytes_out)
{
    if (!text)
        return nullArgument(nullptr, "waste_parse_size", "text");
    if (!bytes_out)
        return nullArgument(nullptr, "waste_parse_size", "bytes_out");
    return guarded(nullptr, [&] { *bytes_out = waste::parseSize(text); });
}

waste_status waste_plan_memory(const char *container_path, int ctx_tokens, waste_memplan *plan_out)
{
    if (!container_path)
        return nullArgument(nullptr, "waste_plan_memory", "container_path");
    if (!plan_out)
        return nullArgument(nullptr, "waste_plan_memory", "plan_out");
    return guarded(nullptr, [&] {
        if (ctx_tokens < 1)
            throw waste::Error(waste::ErrorCode::Argument,
                               "context of " + std::to_string(ctx_tokens) + " tokens is out of range [1, 1048576]");
        waste::capi::fillPlan(waste::planMemory(container_path, ctx_tokens), plan_out);
    });
}

waste_status waste_plan_checkpoint(const char *container_path, int ctx_tokens, int64_t *bytes_out)
{
    if (!container_path)
        return nullArgument(nullptr, "waste_plan_checkpoint", "container_path");
    if (!bytes_out)
        return nullArgument(nullptr, "waste_plan_checkpoint", "bytes_out");
    return guarded(nullptr, [&] {
        if (ctx_tokens < 1 || ctx_tokens > (1 << 20))
            throw waste::Error(waste::ErrorCode::Argument,
                               "context of " + std::to_string(ctx_tokens) + " tokens is out of range [1, 1048576]");
        *bytes_out = waste::checkpointBytes(container_path, ctx_tokens);
    });
}

waste_status waste_top_tokens(const float *logits, int vocab, int k, waste_top_token *top_out, int *n_out)
{
    if (!logits)
        return nullArgument(nullptr, "waste_top_tokens", "logits");
    if (!top_out)
        return nullArgument(nullptr, "waste_top_tokens", "top_out");
    if (vocab < 1 || k < 0)
        return waste::capi::fail(nullptr, WASTE_E_ARG,
                                 "waste_top_tokens: vocab " + std::to_string(vocab) + " and k " + std::to_string(k) +
                                     " must be positive");
    return guarded(nullptr, [&] {
        const auto top = waste::topTokens(std::span<const float>(logits, static_cast<size_t>(vocab)), k);
        for (size_t i = 0; i < top.size(); ++i)
            top_out[i] = waste_top_token{top[i].id, top[i].logit, top[i].prob};
        if (n_out)
            *n_out = static_cast<int>(top.size());
    });
}

} // extern "C"
