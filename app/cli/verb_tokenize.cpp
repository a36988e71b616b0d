// waste tokenize MODEL TEXT [--json]: ids in markup mode (specials resolved), no BOS.
#include "model_options.h"
#include "verb.h"

#include <cstdio>

namespace {

int runTokenize(const cli::Args &args)
{
    const std::string text = cli::readPrompt(args, 1);
    auto model = cli::openModel(args);
    const std::vector<int32_t> ids = model->tokenize(text, /*markup=*/true);
    if (args.flag("--json")) {
        std::string out = "{\"n\":" + std::to_string(ids.size()) + ",\"ids\":[";
        for (size_t i = 0; i < ids.size(); ++i)
            out += (i ? "," : "") + std::to_string(ids[i]);
        std::printf("%s]}\n", out.c_str());
        return 0;
    }
    for (int32_t id : ids)
        std::printf("%d\t%s\n", id, cli::jsonString(model->tokenText(id)).c_str());
    std::fprintf(stderr, "%zu tokens\n", ids.size());
    return 0;
}

std::vector<cli::OptionSpec> options()
{
    auto o = cli::modelOptions();
    o.push_back(cli::fileOption());
    o.push_back({"--json", cli::OptionKind::Flag, "      {\"n\":N,\"ids\":[...]} on stdout"});
    return o;
}

} // namespace

WASTE_CLI_VERB({"tokenize", "MODEL TEXT [--json]", "Turn text into token ids (chat markers resolved)",
                {options(), 1, 2}, &runTokenize});
