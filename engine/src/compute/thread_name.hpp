// Names the engine's own threads ("waste-compute", "waste-ring", "waste-reader"), so top -H,
// perf and a debugger tell the compute pool from the expert readers. At most 15 characters
// (Linux's limit); a no-op where the system has no such call.
#pragma once

namespace waste::compute {

void nameThisThread(const char *name);

} // namespace waste::compute
