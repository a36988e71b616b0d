// waste eval MODEL PROMPT [--top-k K] [--json]: prefill only and print the next-token
// distribution of the last prompt position (markup tokenization, no BOS).
#include "model_options.h"
#include "verb.h"

#include <cstdio>

namespace {

int runEval(const cli::Args &args)
{
    const std::string text = cli::readPrompt(args, 1);
    if (!args.values("--image").empty())
        throw waste::Error(waste::ErrorCode::Unsupported, "--image: image input is not wired into this engine build yet");
    const long long k = args.integer("--top-k", 10);
    if (k < 1)
        throw cli::UsageError("--top-k must be at least 1");
    auto model = cli::openModel(args);
    const std::vector<int32_t> ids = model->tokenize(text, /*markup=*/true);
    if (ids.empty())
        throw cli::UsageError("the prompt has no tokens");
    if (ids.size() > 8192)
        throw waste::Error(waste::ErrorCode::Argument, "prompt of " + std::to_string(ids.size()) +
                                                           " tokens is longer than eval's 8192-token limit");
    const std::vector<float> logits = model->eval(ids);
    const auto top = waste::topTokens(logits, static_cast<int>(std::min<long long>(k, 1 << 30)));
    if (args.flag("--json")) {
        std::printf("{\"prompt_tokens\":%zu,\"vocab\":%d,\"top\":[", ids.size(), model->info().vocab);
        for (size_t i = 0; i < top.size(); ++i)
            std::printf("%s{\"id\":%d,\"logit\":%.4f,\"prob\":%.6f}", i ? "," : "", top[i].id, double(top[i].logit),
                        top[i].prob);
        std::printf("]}\n");
        return 0;
    }
    std::fprintf(stderr, "%zu prompt tokens, vocab %d\n", ids.size(), model->info().vocab);
    for (const auto &t : top)
        std::printf("%8d  %10.4f  %8.6f  %s\n", t.id, double(t.logit), t.prob,
                    cli::jsonString(model->tokenText(t.id)).c_str());
    return 0;
}

std::vector<cli::OptionSpec> options()
{
    auto o = cli::modelOptions();
    o.push_back(cli::fileOption());
    o.push_back({"--top-k", cli::OptionKind::Value, "K     how many entries to print (default 10)"});
    o.push_back({"--image", cli::OptionKind::Repeated, "FILE  attach an image (vision containers)"});
    o.push_back({"--json", cli::OptionKind::Flag, "      {\"prompt_tokens\",\"vocab\",\"top\":[{\"id\",\"logit\",\"prob\"}]}"});
    return o;
}

} // namespace

WASTE_CLI_VERB({"eval", "MODEL PROMPT [--top-k K] [--json]", "Print the next-token distribution after a prompt",
                {options(), 1, 2}, &runEval});
