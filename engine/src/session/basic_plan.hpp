// The memory plan of an open container, following the reference rules for the floor,
// the default budget and the expert cache size (waste-engine.md §4.1–4.2).
#pragma once

#include "format/manifest.hpp"
#include "waste/waste.hpp"

namespace waste::session {

// Bytes a trunk entry occupies in trunk.bin (payload plus scales).
int64_t trunkEntryBytes(const format::TrunkEntry &e);

// Plan for `ctx` positions; budget <= 0 resolves the default budget.
// Fills budget and expert cache in `budgetOut`/`cacheOut`; throws Error(RamBudget)
// when a given budget is below the floor.
MemoryPlan basicPlan(const format::Manifest &m, int ctx, int64_t budget, int64_t &budgetOut, int64_t &cacheOut);

int64_t machinePhysicalRam();
int64_t machineUsableRam();

} // namespace waste::session
