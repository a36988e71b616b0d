#include "session/basic_plan.hpp"

#include "format/trunk.hpp"

#include <algorithm>
#include <fstream>
#include <string>
#include <unistd.h>

namespace waste::session {

int64_t trunkEntryBytes(const format::TrunkEntry &e)
{
    int64_t b = format::Trunk::payloadBytes(e);
    if (e.format == format::TrunkFormat::Q8G || e.format == format::TrunkFormat::Q4G || e.format == format::TrunkFormat::Q3G)
        b += e.rows * ((e.cols + e.group - 1) / e.group) * 2;
    return b;
}

int64_t machinePhysicalRam()
{
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? int64_t(pages) * int64_t(page) : 0;
}

int64_t machineUsableRam()
{
    int64_t ram = machinePhysicalRam();
    for (const char *f : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.high"}) {
        std::ifstream in(f);
        std::string v;
        if (in >> v && !v.empty() && v != "max" && v.find_first_not_of("0123456789") == std::string::npos) {
            const int64_t lim = std::stoll(v);
            if (lim > 0)
                ram = std::min(ram, lim);
        }
    }
    return ram;
}

MemoryPlan basicPlan(const format::Manifest &m, int ctx, int64_t budget, int64_t &budgetOut, int64_t &cacheOut)
{
    const format::ModelConfig &c = m.config;
    MemoryPlan p;
    p.ctx = ctx;
    for (const format::TrunkEntry &e : m.trunk) {
        if (!m.prefix.empty() && e.name.rfind(m.prefix, 0) != 0) {
            p.vision_bytes += trunkEntryBytes(e);
            continue;
        }
        if (e.name == m.prefix + "model.embed_tokens.weight" && e.format != format::TrunkFormat::F32)
            continue; // read row by row from disk
        p.trunk_bytes += trunkEntryBytes(e);
    }
    p.vision_bytes = 0; // only counted when a caller enables images
    const int64_t nKda = c.kdaLayerCount(), nMla = c.layers - nKda;
    const int64_t C = int64_t(c.kdaHeads) * c.kdaDim;
    p.state_bytes = nKda * C * c.kdaDim * 4 + nKda * 3 * std::max(c.convK - 1, 0) * C * 4 +
                    nMla * int64_t(ctx) * (c.kvLora + c.qkRope) * 4;
    const int64_t W = std::max<int64_t>({c.hidden, c.latentMoe, c.moeInter});
    const int64_t lut = (W / 8 + 1) * m.quant.stages * m.quant.entries * 4;
    const int64_t T = 64;
    p.scratch_bytes = 3 * int64_t(c.moeInter) * c.hidden * 4 +
                      std::max<int64_t>({int64_t(ctx) * c.heads, C, c.experts}) * 4 + int64_t(c.vocab) * 4 + 3 * lut +
                      T * c.hidden * 4 * 3 + (2 * T + 1) * lut;
    int64_t rec = 0;
    if (!m.banks.empty())
        rec = m.banks.begin()->second.recordBytes;
    p.min_expert_cache = rec * c.topK * 2;
    p.floor_bytes = p.trunk_bytes + p.state_bytes + p.scratch_bytes + p.min_expert_cache;
    p.working_set_bytes = rec * c.topK * c.layers;
    p.recommended_bytes = p.floor_bytes + 3 * p.working_set_bytes;
    p.physical_ram_bytes = machinePhysicalRam();
    p.usable_ram_bytes = machineUsableRam();
    if (budget > 0) {
        if (budget < p.floor_bytes)
            throw Error(ErrorCode::RamBudget, "budget of " + std::to_string(budget) + " bytes is below the floor of " +
                                                  std::to_string(p.floor_bytes) + " bytes; run `waste plan MODEL` to see the floor");
        budgetOut = budget;
    } else {
        const int64_t cap = p.usable_ram_bytes - p.usable_ram_bytes / 8;
        budgetOut = p.floor_bytes;
        for (int k = 3; k >= 1; --k)
            if (p.floor_bytes + k * p.working_set_bytes <= cap) {
                budgetOut = p.floor_bytes + k * p.working_set_bytes;
                break;
            }
    }
    cacheOut = budgetOut - p.floor_bytes + p.min_expert_cache;
    return p;
}

} // namespace waste::session
