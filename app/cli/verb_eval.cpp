// waste eval MODEL PROMPT [--top-k K] [--json]: prefill only and print the next-token
// distribution of the last prompt position (markup tokenization, no BOS). With
// --ids 1,2,3 instead of a prompt, those token ids are evaluated as given.
#include "model_options.h"
#include "prefill_meter.h"
#include "token_ids.h"
#include "verb.h"

#include <cstdio>

namespace {

// The K most likely next tokens after `promptTokens` positions, as JSON or a table.
int printTop(waste::Model &model, const std::vector<float> &logits, size_t promptTokens, long long k, bool json)
{
    const auto top = waste::topTokens(logits, static_cast<int>(std::min<long long>(k, 1 << 30)));
    if (json) {
        std::printf("{\"prompt_tokens\":%zu,\"vocab\":%d,\"top\":[", promptTokens, model.info().vocab);
        for (size_t i = 0; i < top.size(); ++i)
            std::printf("%s{\"id\":%d,\"logit\":%.4f,\"prob\":%.6f}", i ? "," : "", top[i].id, double(top[i].logit),
                        top[i].prob);
        std::printf("]}\n");
        return 0;
    }
    std::fprintf(stderr, "%zu prompt tokens, vocab %d\n", promptTokens, model.info().vocab);
    for (const auto &t : top)
        std::printf("%8d  %10.4f  %8.6f  %s\n", t.id, double(t.logit), t.prob,
                    cli::jsonString(model.tokenText(t.id)).c_str());
    return 0;
}

int runEval(const cli::Args &args)
{
    const auto givenIds = args.value("--ids");
    if (givenIds && (args.positionals().size() > 1 || args.value("--file") || !args.values("--image").empty()))
        throw cli::UsageError("--ids replaces the prompt: give no PROMPT, --file or --image with it");
    const std::string text = givenIds ? std::string() : cli::readPrompt(args, 1);
    const long long k = args.integer("--top-k", 10);
    if (k < 1)
        throw cli::UsageError("--top-k must be at least 1");
    auto model = cli::openModel(args);
    if (givenIds) {
        const std::vector<int32_t> ids = cli::parseTokenIds(*givenIds, model->info().vocab);
        if (ids.size() > 8192)
            throw cli::UsageError("--ids gives " + std::to_string(ids.size()) + " tokens, more than eval's 8192-token limit");
        cli::PrefillMeter meter(*model, args.flag("-q") || args.flag("--quiet") || args.flag("--json"));
        const std::vector<float> logits = model->eval(ids, meter.callback());
        meter.finish();
        return printTop(*model, logits, ids.size(), k, args.flag("--json"));
    }
    // Images: their media blocks (markup) go before the prompt; eval expands each block's
    // placeholder into the image's positions, so prompt_tokens counts those positions.
    const std::vector<std::string> images = args.values("--image");
    size_t imagePositions = 0;
    model->clearImages();
    for (const std::string &path : images) {
        const int n = model->addImage(path);
        imagePositions += size_t(n);
        if (!args.flag("-q") && !args.flag("--quiet"))
            std::fprintf(stderr, "[%s: %d image tokens]\n", path.c_str(), n);
    }
    std::vector<int32_t> ids;
    if (!images.empty())
        ids = model->tokenize(model->pendingImageMarkup(), /*markup=*/true);
    const std::vector<int32_t> words = model->tokenize(text, /*markup=*/true);
    ids.insert(ids.end(), words.begin(), words.end());
    if (ids.empty())
        throw cli::UsageError("the prompt has no tokens");
    const size_t promptTokens = ids.size() - images.size() + imagePositions;
    if (ids.size() > 8192)
        throw waste::Error(waste::ErrorCode::Argument, "prompt of " + std::to_string(ids.size()) +
                                                           " tokens is longer than eval's 8192-token limit");
    cli::PrefillMeter meter(*model, args.flag("-q") || args.flag("--quiet") || args.flag("--json"));
    const std::vector<float> logits = model->eval(ids, meter.callback());
    meter.finish();
    return printTop(*model, logits, promptTokens, k, args.flag("--json"));
}

std::vector<cli::OptionSpec> options()
{
    auto o = cli::modelOptions();
    o.push_back(cli::fileOption());
    o.push_back({"--top-k", cli::OptionKind::Value, "K     how many entries to print (default 10)"});
    o.push_back({"--image", cli::OptionKind::Repeated, "FILE  attach an image (vision containers)"});
    o.push_back({"--ids", cli::OptionKind::Value, "1,2,3 evaluate these token ids instead of a prompt (no tokenizer)"});
    o.push_back({"--json", cli::OptionKind::Flag, "      {\"prompt_tokens\",\"vocab\",\"top\":[{\"id\",\"logit\",\"prob\"}]}"});
    return o;
}

} // namespace

WASTE_CLI_VERB({"eval", "MODEL (PROMPT | --ids 1,2,3) [--top-k K] [--json]", "Print the next-token distribution after a prompt",
                {options(), 1, 2}, &runEval});
