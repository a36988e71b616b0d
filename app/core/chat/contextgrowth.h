// ContextGrowth: the smallest larger context a prompt needs and what it costs in RAM, by the
// engine's planner (waste::planMemory, the arithmetic the Planner page shows): the floor at the
// larger context less the floor at the open one, i.e. the attention state (KV cache, recurrent
// state) and scratch the extra positions take. For the chat's "the tools do not fit" way out.
#pragma once

#include <QString>

struct ContextGrowth {
    int tokens = 0;         // the larger context; 0: none of the choices is large enough
    qint64 extraBytes = -1; // more RAM than at the open context; -1: the planner could not say
};

// `neededTokens`: the prompt and the room it must leave. Contexts are the Planner page's
// choices (4K, 8K, 32K, 128K, 256K, 1M), so the one offered is one the Planner also shows.
ContextGrowth contextGrowthFor(const QString &containerPath, int openContext, int neededTokens);
