#include "generation_options.h"

#include "model_options.h"

#include <cstdio>

namespace cli {

std::vector<OptionSpec> samplingOptions()
{
    return {{"-n", OptionKind::Value, "N     most tokens to generate (default 128)"},
            {"--temp", OptionKind::Value, "F     temperature, 0 = greedy (default 0)"},
            {"--top-p", OptionKind::Value, "F     nucleus sampling, in (0, 1] (default 1)"},
            {"--top-k", OptionKind::Value, "K     keep the K most likely tokens (default off)"},
            {"--seed", OptionKind::Value, "N     sampling seed (same seed, same text)"},
            {"--stop", OptionKind::Repeated, "STR   stop when the text contains STR"}};
}

std::vector<OptionSpec> templateOptions()
{
    return {{"--system", OptionKind::Value, "TEXT  system prompt (models with a chat template)"},
            {"--think", OptionKind::Flag, "      let a K3 model think first (its thinking channel)"}};
}

std::vector<OptionSpec> runOptions()
{
    auto o = modelOptions();
    for (auto &s : samplingOptions())
        o.push_back(s);
    for (auto &s : templateOptions())
        o.push_back(s);
    o.push_back(fileOption());
    o.push_back({"--image", OptionKind::Repeated, "FILE  attach an image (vision containers)"});
    o.push_back({"--raw", OptionKind::Flag, "      plain continuation of PROMPT, no chat template"});
    o.push_back({"-q", OptionKind::Flag, "      no streamed text"});
    o.push_back({"--learn", OptionKind::Flag, "      record the experts and routing of this run (see --usage)"});
    return o;
}

waste::GenParams genParams(const Args &args)
{
    waste::GenParams p;
    const long long n = args.integer("-n", 128);
    if (n < 1 || n > (1 << 24))
        throw UsageError("-n must be at least 1");
    p.maxTokens = static_cast<int>(n);
    p.temperature = static_cast<float>(args.number("--temp", 0.0));
    if (!(p.temperature >= 0.0f))
        throw UsageError("--temp must be >= 0");
    p.topP = static_cast<float>(args.number("--top-p", 1.0));
    if (!(p.topP > 0.0f && p.topP <= 1.0f))
        throw UsageError("--top-p must be in (0, 1]");
    const long long k = args.integer("--top-k", 0);
    if (k < 0)
        throw UsageError("--top-k must be >= 0");
    p.topK = static_cast<int>(k);
    const long long seed = args.integer("--seed", 0);
    p.seed = static_cast<uint64_t>(seed);
    p.stopStrings = args.values("--stop");
    return p;
}

void printStatsLine(const waste::Stats &s, int tokens, double seconds, double promptSeconds)
{
    const int64_t all = s.demandHits + s.demandMisses;
    std::fprintf(stderr, "[%d tokens, %.2f s, %.2f tok/s after the prompt (read in %.2f s) | experts %lld hit / %lld miss = %.0f%%]\n",
                 tokens, seconds, seconds > 0 ? tokens / seconds : 0.0, promptSeconds, static_cast<long long>(s.demandHits),
                 static_cast<long long>(s.demandMisses), all > 0 ? 100.0 * double(s.demandHits) / double(all) : 0.0);
}

} // namespace cli
