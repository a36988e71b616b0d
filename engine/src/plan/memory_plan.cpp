// waste::planMemory: the plan from the manifest plus what the machine offers.
#include "plan/budget.hpp"
#include "plan/checkpoint.hpp"
#include "plan/floor.hpp"
#include "plan/memory_plan.hpp"
#include "plan/pass_plan.hpp"
#include "plan/plan_inputs.hpp"
#include "plan/system_memory.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <thread>

namespace waste {

namespace plan {

MemoryPlan planFromInputs(const PlanInputs &in, int ctxTokens)
{
    if (ctxTokens <= 0 || ctxTokens > (1 << 24))
        throw Error(ErrorCode::Argument, "ctx must be between 1 and 16777216 tokens (got " + std::to_string(ctxTokens) + ")");
    const plan::FloorTerms f = plan::computeFloor(in, ctxTokens);
    MemoryPlan p;
    p.ctx = ctxTokens;
    p.generated_weights = in.generatedWeights;
    p.trunk_bytes = f.trunk;
    p.state_bytes = f.state;
    p.scratch_bytes = f.scratch;
    p.min_expert_cache = f.minExpertCache;
    p.vision_bytes = f.vision;
    p.floor_bytes = f.floor();
    p.recommended_bytes = f.recommended();
    p.working_set_bytes = f.workingSet;
    p.physical_ram_bytes = physicalRam();
    p.usable_ram_bytes = usableRam();
    p.cap_bytes = p.usable_ram_bytes - p.usable_ram_bytes / 8;
    p.other_process_bytes = plan::otherProcessesBytes();
    p.cliff_bytes = plan::pagingCliff(p.physical_ram_bytes, p.usable_ram_bytes, p.other_process_bytes);
    p.max_record_bytes = in.maxRecordBytes;
    p.moe_layers = in.moeLayers;
    p.top_k = in.topK;
    p.expert_bytes_total = in.expertBytesTotal;
    p.checkpoint_bytes = plan::checkpointBytes(in, ctxTokens);
    const plan::PassCost pass = plan::passCost(in, int(std::max(1u, std::thread::hardware_concurrency())));
    p.pass_token_bytes = pass.perToken;
    p.pass_fixed_bytes = pass.fixed;
    p.pass_piece_token_bytes = pass.pieceToken;
    p.pass_floor_bytes = f.passScratch;
    return p;
}

} // namespace plan

MemoryPlan planMemory(const std::string &containerPath, int ctxTokens)
{
    MemoryPlan p = plan::planFromInputs(plan::readPlanInputs(containerPath), ctxTokens);
    p.container = containerPath;
    return p;
}

} // namespace waste
