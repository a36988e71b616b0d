// Budget resolution and the paging-cliff model.
#pragma once

#include <cstdint>

namespace waste::plan {

// Peak RSS may exceed the budget by at most this much (code, thread stacks, allocator
// slack); the RSS test holds the engine to it.
inline constexpr int64_t kRssSlackBytes = int64_t(512) << 20;

// The budget above which the OS is likely to page the expert cache (see budget.cpp).
int64_t pagingCliff(int64_t physical, int64_t usable, int64_t otherProcesses);

} // namespace waste::plan
