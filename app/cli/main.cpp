// `waste`: the command-line twin of WASTE Studio. JSON goes to stdout, human text and
// progress to stderr; every failure exits non-zero with one line saying what went wrong.
#include "verb.h"

#include <waste/waste.hpp>

#include <QCoreApplication>

#include <cstdio>
#include <iostream>

namespace {

void printHelp(FILE *out)
{
    std::fprintf(out, "usage: waste VERB [arguments]\n\n");
    for (const cli::Verb *v : cli::VerbRegistry::sorted())
        std::fprintf(out, "  %-10s %s\n", v->name.c_str(), v->summary.c_str());
    std::fprintf(out, "\n`waste VERB --help` shows a verb's options.\n");
}

void printVerbHelp(const cli::Verb &v)
{
    std::printf("usage: waste %s %s\n%s\n", v.name.c_str(), v.usage.c_str(), v.summary.c_str());
    for (const auto &o : v.spec.options)
        std::printf("  %-14s %s\n", o.name.c_str(), o.help.c_str());
}

} // namespace

int main(int argc, char **argv)
{
    // Verbs such as download and serve need an event loop; the others ignore it.
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("waste"));
    QCoreApplication::setOrganizationName(QStringLiteral("WASTE Studio"));
    QCoreApplication::setApplicationVersion(QString::fromLatin1(waste::kVersion));

    if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
        printHelp(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const std::string name = argv[1];
    if (name == "version" || name == "--version") {
        std::printf("%s\n", waste::buildInfo().c_str());
        return 0;
    }
    const cli::Verb *verb = cli::VerbRegistry::find(name);
    if (!verb) {
        std::fprintf(stderr, "waste: unknown verb '%s' (try `waste --help`)\n", name.c_str());
        return 2;
    }
    std::vector<std::string> rest(argv + 2, argv + argc);
    for (const auto &a : rest) {
        if (a == "--help" || a == "-h") {
            printVerbHelp(*verb);
            return 0;
        }
    }
    try {
        const cli::Args args = cli::Args::parse(rest, verb->spec);
        return verb->run(args);
    } catch (const cli::UsageError &e) {
        std::fprintf(stderr, "waste %s: %s\nusage: waste %s %s\n", name.c_str(), e.what(), name.c_str(),
                     verb->usage.c_str());
        return 2;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "waste %s: %s\n", name.c_str(), e.what());
        return 1;
    }
}
