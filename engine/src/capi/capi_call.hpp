// The C API's plumbing: the opaque model handle, and one guard that turns every C++
// exception into a waste_status plus a remembered one-line message, so no exception ever
// crosses the C boundary.
#pragma once

#include "waste/waste.h"
#include "waste/waste.hpp"

#include <memory>
#include <string>
#include <vector>

struct waste_model {
    std::unique_ptr<waste::Model> model;
    std::string error;          // last failure on this model (waste_error_detail)
    std::vector<float> logits;  // what waste_eval returned last
    std::string replyText;      // waste_gen_result::text
};

namespace waste::capi {

waste_status statusOf(ErrorCode code);
// Records `message` as this thread's last error (and the model's, when given).
waste_status fail(waste_model *model, waste_status status, const std::string &message);

// Runs f(); returns WASTE_OK, or the status of the exception it threw with the message
// recorded.
template <typename F> waste_status guarded(waste_model *model, F &&f) noexcept
{
    try {
        f();
        return WASTE_OK;
    } catch (const Error &e) {
        return fail(model, statusOf(e.code()), e.what());
    } catch (const std::bad_alloc &) {
        return fail(model, WASTE_E_OOM, "out of memory");
    } catch (const std::exception &e) {
        return fail(model, WASTE_E_INTERNAL, e.what());
    } catch (...) {
        return fail(model, WASTE_E_INTERNAL, "unknown failure inside the engine");
    }
}

waste_status nullArgument(waste_model *model, const char *function, const char *argument);

void fillPlan(const MemoryPlan &plan, waste_memplan *out);
void fillStats(const Stats &stats, waste_stats *out);

} // namespace waste::capi
