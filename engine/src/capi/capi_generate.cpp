// C API generation: parameters in, a per-token callback with text and cache statistics,
// the reply and its finish reason out.
#include "capi/capi_call.hpp"

using waste::capi::fail;
using waste::capi::guarded;
using waste::capi::nullArgument;

namespace {

waste_finish finishOf(waste::FinishReason f)
{
    switch (f) {
    case waste::FinishReason::Stop: return WASTE_FINISH_STOP;
    case waste::FinishReason::Length: return WASTE_FINISH_LENGTH;
    case waste::FinishReason::Cancelled: return WASTE_FINISH_CANCELLED;
    case waste::FinishReason::ContextFull: return WASTE_FINISH_CONTEXT_FULL;
    }
    return WASTE_FINISH_STOP;
}

} // namespace

extern "C" {

void waste_gen_params_init(waste_gen_params *params)
{
    if (!params)
        return;
    const waste::GenParams d;
    *params = waste_gen_params{};
    params->temperature = d.temperature;
    params->top_p = d.topP;
    params->top_k = d.topK;
    params->seed = d.seed;
    params->max_tokens = d.maxTokens;
}

waste_status waste_generate(waste_model *model, const int32_t *prompt, size_t n, const waste_gen_params *params,
                            waste_token_callback callback, void *user, waste_gen_result *result_out)
{
    if (!model)
        return nullArgument(nullptr, "waste_generate", "model");
    if (!prompt && n > 0)
        return nullArgument(model, "waste_generate", "prompt");
    waste_gen_params p;
    waste_gen_params_init(&p);
    if (params)
        p = *params;
    if (p.n_stop_strings < 0 || (p.n_stop_strings > 0 && !p.stop_strings) || p.n_stop_tokens < 0 ||
        (p.n_stop_tokens > 0 && !p.stop_tokens))
        return fail(model, WASTE_E_ARG, "waste_generate: stop_strings/stop_tokens and their counts disagree");
    if (p.max_tokens < 1)
        return fail(model, WASTE_E_ARG, "waste_generate: max_tokens " + std::to_string(p.max_tokens) + " must be at least 1");
    if (result_out)
        *result_out = waste_gen_result{};
    waste::FinishReason finish = waste::FinishReason::Stop;
    const waste_status st = guarded(model, [&] {
        waste::GenParams gp;
        gp.temperature = p.temperature;
        gp.topP = p.top_p;
        gp.topK = p.top_k;
        gp.seed = p.seed;
        gp.maxTokens = p.max_tokens;
        for (int i = 0; i < p.n_stop_strings; ++i) {
            if (!p.stop_strings[i])
                throw waste::Error(waste::ErrorCode::Argument, "waste_generate: stop_strings[" + std::to_string(i) + "] is NULL");
            gp.stopStrings.emplace_back(p.stop_strings[i]);
        }
        gp.stopTokens.assign(p.stop_tokens, p.stop_tokens + p.n_stop_tokens);
        waste::TokenCallback onToken;
        if (callback)
            onToken = [&](const waste::TokenEvent &e) {
                waste_token_event ev{};
                ev.index = e.index;
                ev.token = e.token;
                ev.text = e.text.c_str();
                ev.text_len = e.text.size();
                ev.logprob = e.logprob;
                waste::capi::fillStats(e.stats, &ev.stats);
                return callback(&ev, user) == 0;
            };
        model->replyText.clear();
        const waste::GenResult r = model->model->generate(std::span<const int32_t>(prompt, n), gp, onToken);
        model->replyText = r.text;
        finish = r.finish;
        if (result_out) {
            result_out->text = model->replyText.c_str();
            result_out->text_len = model->replyText.size();
            result_out->n_tokens = static_cast<int>(r.tokens.size());
            result_out->prompt_tokens = r.promptTokens;
            result_out->finish = finishOf(r.finish);
            waste::capi::fillStats(r.stats, &result_out->stats);
        }
    });
    if (result_out && !result_out->text)
        result_out->text = ""; // a failed call still leaves a valid (empty) string
    if (st == WASTE_OK && finish == waste::FinishReason::Cancelled)
        return fail(model, WASTE_E_CANCELLED, "generation stopped by the caller");
    return st;
}

} // extern "C"
