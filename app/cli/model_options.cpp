#include "model_options.h"

#include <waste/usage_paths.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <unistd.h>

namespace cli {

std::vector<OptionSpec> modelOptions()
{
    return {{"--budget", OptionKind::Value, "SIZE  RAM ceiling (8G, 512M, bytes); default: the engine chooses"},
            {"--ctx", OptionKind::Value, "N     context positions (default 4096)"},
            {"--verify", OptionKind::Flag, "      crc32-check every expert record read"},
            {"--usage", OptionKind::Value, "FILE  the --learn record to warm from and write (default MODEL/usage.waste)"}};
}

OptionSpec fileOption() { return {"--file", OptionKind::Value, "F     read the prompt from F ('-': stdin)"}; }

std::unique_ptr<waste::Model> openModel(const Args &args)
{
    waste::OpenOptions opt;
    if (auto b = args.value("--budget"))
        opt.ramBudget = waste::parseSize(*b);
    const long long ctx = args.integer("--ctx", 4096);
    if (ctx < 1 || ctx > (1 << 20))
        throw UsageError("--ctx must be between 1 and 1048576");
    opt.ctxTokens = static_cast<int>(ctx);
    opt.verifyRecords = args.flag("--verify");
    if (auto u = args.value("--usage"))
        opt.usagePath = *u;
    auto model = waste::Model::open(args.positional(0), waste::withEnvironment(opt));
    for (const std::string &w : model->info().warnings)
        std::fprintf(stderr, "waste: warning: %s\n", w.c_str());
    return model;
}

std::string usagePath(const Args &args)
{
    return waste::usageRecordPath(args.positional(0), args.value("--usage").value_or(std::string()));
}

static std::string stripTrailingNewlines(std::string s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}

static std::string readStream(std::istream &in) { return std::string(std::istreambuf_iterator<char>(in), {}); }

std::string readPrompt(const Args &args, size_t index)
{
    if (auto f = args.value("--file")) {
        if (args.positionals().size() > index)
            throw UsageError("give the prompt either as an argument or with --file, not both");
        if (*f == "-")
            return stripTrailingNewlines(readStream(std::cin));
        std::ifstream in(*f, std::ios::binary);
        if (!in)
            throw UsageError("cannot read prompt file " + *f);
        return stripTrailingNewlines(readStream(in));
    }
    if (args.positionals().size() > index) {
        const std::string &p = args.positional(index);
        if (p == "-")
            return stripTrailingNewlines(readStream(std::cin));
        return p;
    }
    if (!::isatty(0))
        return stripTrailingNewlines(readStream(std::cin));
    throw UsageError("no prompt given");
}

std::string jsonString(const std::string &s)
{
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += static_cast<char>(c);
            }
        }
    }
    return out + "\"";
}

} // namespace cli
