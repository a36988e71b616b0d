#include "capi/capi_call.hpp"

namespace {
thread_local std::string t_lastError;
}

namespace waste::capi {

waste_status statusOf(ErrorCode code)
{
    switch (code) {
    case ErrorCode::Io: return WASTE_E_IO;
    case ErrorCode::Format: return WASTE_E_FORMAT;
    case ErrorCode::RamBudget: return WASTE_E_RAM_BUDGET;
    case ErrorCode::OutOfMemory: return WASTE_E_OOM;
    case ErrorCode::Argument: return WASTE_E_ARG;
    case ErrorCode::ContextFull: return WASTE_E_ARG;
    case ErrorCode::Unsupported: return WASTE_E_UNSUPPORTED;
    case ErrorCode::Cancelled: return WASTE_E_CANCELLED;
    }
    return WASTE_E_INTERNAL;
}

waste_status fail(waste_model *model, waste_status status, const std::string &message)
{
    // Storing the message must not throw out of a noexcept guard; an allocation failure
    // here leaves the previous message.
    try {
        t_lastError = message;
        if (model)
            model->error = message;
    } catch (...) {
    }
    return status;
}

waste_status nullArgument(waste_model *model, const char *function, const char *argument)
{
    return fail(model, WASTE_E_ARG, std::string(function) + ": " + argument + " is NULL");
}

} // namespace waste::capi

extern "C" {

const char *waste_last_error(void) { return t_lastError.c_str(); }

const char *waste_error_detail(const waste_model *model) { return model ? model->error.c_str() : ""; }

const char *waste_strerror(waste_status status)
{
    switch (status) {
    case WASTE_OK: return "ok";
    case WASTE_E_IO: return "I/O error";
    case WASTE_E_FORMAT: return "bad container format";
    case WASTE_E_RAM_BUDGET: return "RAM budget below the floor";
    case WASTE_E_OOM: return "out of memory";
    case WASTE_E_ARG: return "bad argument";
    case WASTE_E_UNSUPPORTED: return "unsupported";
    case WASTE_E_CANCELLED: return "cancelled";
    case WASTE_E_INTERNAL: return "internal error";
    }
    return "unknown status";
}

} // extern "C"
