// C API over an open model: open/close, info, tokenizer, eval, session state.
#include "capi/capi_call.hpp"

#include <cstring>
#include <new>

using waste::capi::fail;
using waste::capi::guarded;
using waste::capi::nullArgument;

namespace waste::capi {

void fillStats(const Stats &s, waste_stats *out)
{
    *out = waste_stats{};
    out->tokens_generated = s.tokensGenerated;
    out->tokens_prefilled = s.tokensPrefilled;
    out->experts_hit = s.demandHits;
    out->experts_missed = s.demandMisses;
    out->bytes_read = s.bytesRead;
    out->speculative_fills = s.speculativeFills;
    out->sec_total = s.secondsTotal;
    out->sec_io_wait = s.secondsIoWait;
    out->direct_io = s.directIo ? 1 : 0;
}

} // namespace waste::capi

extern "C" {

void waste_open_options_init(waste_open_options *options)
{
    if (!options)
        return;
    const waste::OpenOptions d;
    *options = waste_open_options{};
    options->ram_budget_bytes = d.ramBudget;
    options->ctx_tokens = d.ctxTokens;
    options->threads = d.threads;
    options->direct_io = d.directIo;
    options->verify_records = d.verifyRecords;
    options->expert_cache = d.expertCache;
    options->read_ahead = d.readAhead;
    options->lookahead = d.lookahead;
}

waste_status waste_open(const char *container_path, const waste_open_options *options, waste_model **model_out)
{
    if (!model_out)
        return nullArgument(nullptr, "waste_open", "model_out");
    *model_out = nullptr;
    if (!container_path)
        return nullArgument(nullptr, "waste_open", "container_path");
    waste_open_options o;
    waste_open_options_init(&o);
    if (options)
        o = *options;
    if (o.threads < 0)
        return fail(nullptr, WASTE_E_ARG, "waste_open: threads " + std::to_string(o.threads) + " must be 0 or more");
    return guarded(nullptr, [&] {
        waste::OpenOptions opts;
        opts.ramBudget = o.ram_budget_bytes;
        opts.ctxTokens = o.ctx_tokens;
        opts.threads = o.threads;
        opts.directIo = o.direct_io != 0;
        opts.verifyRecords = o.verify_records != 0;
        opts.expertCache = o.expert_cache != 0;
        opts.readAhead = o.read_ahead != 0;
        opts.lookahead = o.lookahead != 0;
        auto handle = std::make_unique<waste_model>();
        handle->model = waste::Model::open(container_path, opts);
        *model_out = handle.release();
    });
}

void waste_close(waste_model *model) { delete model; }

waste_status waste_model_get_info(const waste_model *model, waste_model_info *info_out)
{
    if (!model)
        return nullArgument(nullptr, "waste_model_get_info", "model");
    if (!info_out)
        return nullArgument(nullptr, "waste_model_get_info", "info_out");
    const waste::ModelInfo &i = model->model->info(); // lives as long as the model
    *info_out = waste_model_info{};
    info_out->arch = i.arch.c_str();
    info_out->quantization = i.quantization.c_str();
    info_out->layers = i.layers;
    info_out->experts = i.experts;
    info_out->top_k = i.topK;
    info_out->hidden = i.hidden;
    info_out->vocab = i.vocab;
    info_out->ctx_max = i.ctxMax;
    info_out->params_total = i.paramsTotal;
    info_out->params_active = i.paramsActive;
    info_out->budget_bytes = i.budgetBytes;
    info_out->expert_cache_bytes = i.expertCacheBytes;
    info_out->bos_id = i.bosId;
    info_out->eos_id = i.eosId;
    return WASTE_OK;
}

waste_status waste_model_memory_plan(const waste_model *model, waste_memplan *plan_out)
{
    if (!model)
        return nullArgument(nullptr, "waste_model_memory_plan", "model");
    if (!plan_out)
        return nullArgument(nullptr, "waste_model_memory_plan", "plan_out");
    waste::capi::fillPlan(model->model->memoryPlan(), plan_out);
    return WASTE_OK;
}

waste_status waste_get_stats(const waste_model *model, waste_stats *stats_out)
{
    if (!model)
        return nullArgument(nullptr, "waste_get_stats", "model");
    if (!stats_out)
        return nullArgument(nullptr, "waste_get_stats", "stats_out");
    waste::capi::fillStats(model->model->stats(), stats_out);
    return WASTE_OK;
}

waste_status waste_tokenize(waste_model *model, const char *text, size_t text_len, int markup, int32_t *ids_out,
                            size_t capacity, size_t *n_out)
{
    if (!model)
        return nullArgument(nullptr, "waste_tokenize", "model");
    if (!text && text_len > 0)
        return nullArgument(model, "waste_tokenize", "text");
    if (!n_out)
        return nullArgument(model, "waste_tokenize", "n_out");
    if (!ids_out && capacity > 0)
        return nullArgument(model, "waste_tokenize", "ids_out");
    bool tooSmall = false;
    const waste_status st = guarded(model, [&] {
        const auto ids = model->model->tokenize(std::string_view(text ? text : "", text_len), markup != 0);
        *n_out = ids.size();
        tooSmall = ids.size() > capacity;
        if (!tooSmall && !ids.empty())
            std::memcpy(ids_out, ids.data(), ids.size() * sizeof(int32_t));
    });
    if (st == WASTE_OK && tooSmall)
        return fail(model, WASTE_E_ARG,
                    "waste_tokenize: the text has " + std::to_string(*n_out) + " tokens, more than the capacity of " +
                        std::to_string(capacity));
    return st;
}

waste_status waste_detokenize(waste_model *model, const int32_t *ids, size_t n, char *buf, size_t capacity,
                              size_t *len_out)
{
    if (!model)
        return nullArgument(nullptr, "waste_detokenize", "model");
    if (!ids && n > 0)
        return nullArgument(model, "waste_detokenize", "ids");
    if (!len_out)
        return nullArgument(model, "waste_detokenize", "len_out");
    if (!buf && capacity > 0)
        return nullArgument(model, "waste_detokenize", "buf");
    bool tooSmall = false;
    const waste_status st = guarded(model, [&] {
        const int vocab = model->model->info().vocab;
        for (size_t i = 0; i < n; ++i)
            if (ids[i] < 0 || ids[i] >= vocab)
                throw waste::Error(waste::ErrorCode::Argument, "waste_detokenize: token id " + std::to_string(ids[i]) +
                                                                   " is out of range [0, " + std::to_string(vocab) + ")");
        const std::string text = model->model->detokenize(std::span<const int32_t>(ids, n));
        *len_out = text.size();
        tooSmall = text.size() + 1 > capacity;
        if (!tooSmall)
            std::memcpy(buf, text.c_str(), text.size() + 1);
    });
    if (st == WASTE_OK && tooSmall)
        return fail(model, WASTE_E_ARG,
                    "waste_detokenize: the text needs " + std::to_string(*len_out + 1) + " bytes, the buffer has " +
                        std::to_string(capacity));
    return st;
}

waste_status waste_eval(waste_model *model, const int32_t *tokens, size_t n, const float **logits_out, int *vocab_out)
{
    if (!model)
        return nullArgument(nullptr, "waste_eval", "model");
    if (!tokens && n > 0)
        return nullArgument(model, "waste_eval", "tokens");
    if (logits_out)
        *logits_out = nullptr;
    return guarded(model, [&] {
        model->logits = model->model->eval(std::span<const int32_t>(tokens, n));
        if (logits_out)
            *logits_out = model->logits.data();
        if (vocab_out)
            *vocab_out = static_cast<int>(model->logits.size());
    });
}

void waste_cancel(waste_model *model)
{
    if (model)
        model->model->cancel();
}

int waste_position(const waste_model *model) { return model ? model->model->position() : -1; }

waste_status waste_state_save(waste_model *model, const char *path)
{
    if (!model)
        return nullArgument(nullptr, "waste_state_save", "model");
    if (!path)
        return nullArgument(model, "waste_state_save", "path");
    return guarded(model, [&] { model->model->saveState(path); });
}

waste_status waste_state_load(waste_model *model, const char *path)
{
    if (!model)
        return nullArgument(nullptr, "waste_state_load", "model");
    if (!path)
        return nullArgument(model, "waste_state_load", "path");
    return guarded(model, [&] { model->model->loadState(path); });
}

waste_status waste_state_reset(waste_model *model)
{
    if (!model)
        return nullArgument(nullptr, "waste_state_reset", "model");
    return guarded(model, [&] { model->model->resetState(); });
}

} // extern "C"
