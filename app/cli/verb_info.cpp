// waste info MODEL [--json]: architecture, size, quantization and the expert cache size.
#include "model_options.h"
#include "units/units.h"
#include "verb.h"

#include <cstdio>

namespace {

int runInfo(const cli::Args &args)
{
    auto model = cli::openModel(args);
    const waste::ModelInfo &i = model->info();
    if (args.flag("--json")) {
        std::printf("{\"engine\":%s,\"arch\":%s,\"layers\":%d,\"experts\":%d,\"top_k\":%d,\"hidden\":%d,"
                    "\"params_total\":%lld,\"params_active\":%lld,\"quantization\":%s,\"expert_format\":%s,"
                    "\"record_bytes\":%lld,\"expert_cache_bytes\":%lld,\"checkpoint_bytes\":%lld,\"chat_format\":%s,"
                    "\"vocab\":%d,\"ctx_max\":%d,\"budget_bytes\":%lld,\"build\":%s}\n",
                    cli::jsonString(waste::kVersion).c_str(), cli::jsonString(i.arch).c_str(), i.layers, i.experts,
                    i.topK, i.hidden, static_cast<long long>(i.paramsTotal), static_cast<long long>(i.paramsActive),
                    cli::jsonString(i.quantization).c_str(), cli::jsonString(i.expertFormat).c_str(),
                    static_cast<long long>(i.recordBytes), static_cast<long long>(i.expertCacheBytes),
                    static_cast<long long>(i.checkpointBytes),
                    cli::jsonString(waste::chatFormatName(i.chatFormat)).c_str(), i.vocab,
                    i.ctxMax, static_cast<long long>(i.budgetBytes), cli::jsonString(waste::buildInfo()).c_str());
        return 0;
    }
    std::printf("%s\n", waste::buildInfo().c_str());
    std::printf("arch          %s\n", i.arch.c_str());
    std::printf("layers        %d\n", i.layers);
    std::printf("experts       %d (top-%d)\n", i.experts, i.topK);
    std::printf("hidden        %d\n", i.hidden);
    std::printf("vocab         %d\n", i.vocab);
    std::printf("params        %.3f B total, %.3f B active\n", double(i.paramsTotal) / 1e9, double(i.paramsActive) / 1e9);
    std::printf("quantization  %s\n", i.quantization.c_str());
    std::printf("chat format   %s\n", waste::chatFormatName(i.chatFormat));
    if (i.recordBytes > 0)
        std::printf("expert record %s (%s)\n", qPrintable(Units::bytes(i.recordBytes)), i.expertFormat.c_str());
    std::printf("budget        %s (expert cache %s)\n", qPrintable(Units::bytes(i.budgetBytes)), qPrintable(Units::bytes(i.expertCacheBytes)));
    return 0;
}

std::vector<cli::OptionSpec> options()
{
    auto o = cli::modelOptions();
    o.push_back({"--json", cli::OptionKind::Flag, "      one JSON object on stdout"});
    return o;
}

} // namespace

WASTE_CLI_VERB({"info", "MODEL [--json]", "Show a container's architecture, size and quantization",
                {options(), 1, 1}, &runInfo});
