// `waste convert SRC_DIR OUT_DIR`: Hugging Face safetensors -> streaming container.
// Progress goes to stderr; Ctrl-C stops after the current expert and the same command
// resumes where it stopped.
#include "verb.h"

#include "units/units.h"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>

namespace {

std::atomic<bool> g_interrupted{false};

void onInterrupt(int) { g_interrupted.store(true); }

const char *phaseName(waste::ConvertProgress::Phase p)
{
    using P = waste::ConvertProgress::Phase;
    switch (p) {
    case P::Planning: return "planning";
    case P::Trunk: return "trunk";
    case P::Codebooks: return "codebooks";
    case P::Experts: return "experts";
    case P::Finishing: return "finishing";
    case P::Done: return "done";
    }
    return "";
}

// Prints one line per unit change and otherwise at most one a second.
waste::ConvertProgressCallback stderrProgress()
{
    auto last = std::make_shared<std::chrono::steady_clock::time_point>();
    auto lastUnit = std::make_shared<int>(-1);
    return [last, lastUnit](const waste::ConvertProgress &p) {
        const auto now = std::chrono::steady_clock::now();
        using P = waste::ConvertProgress::Phase;
        if (p.unit == *lastUnit && p.phase != P::Done && p.phase != P::Finishing && now - *last < std::chrono::seconds(1))
            return;
        *last = now;
        *lastUnit = p.unit;
        const std::string where = p.layer < 0 ? std::string("globals") : "layer " + std::to_string(p.layer);
        const double rate = p.elapsedSeconds > 0 ? p.sourceBytesDone / p.elapsedSeconds : 0;
        std::fprintf(stderr, "[%d/%d] %-9s %-10s %-28s %s / %s  %s  ETA %s%s\n", p.unit + 1, p.units, where.c_str(),
                     phaseName(p.phase), p.tensor.substr(0, 28).c_str(), qPrintable(Units::bytes(p.sourceBytesDone)),
                     qPrintable(Units::bytes(p.sourceBytesTotal)), qPrintable(Units::rate(rate)),
                     qPrintable(Units::duration(std::llround(p.etaSeconds))), p.resumed ? "  (resumed)" : "");
    };
}

int runConvert(const cli::Args &args)
{
    waste::ConvertOptions o;
    o.jobs = static_cast<int>(args.integer("--jobs", 0));
    o.trunkBits = static_cast<int>(args.integer("--trunk-bits", 4));
    o.reclaim = args.flag("--reclaim");
    if (o.jobs < 0) throw cli::UsageError("--jobs must be 0 (one per core) or more");
    if (o.trunkBits != 4 && o.trunkBits != 8) throw cli::UsageError("--trunk-bits must be 4 or 8");
    if (auto limit = args.value("--fail-after")) o.failAfterBytes = waste::parseSize(*limit);
    const std::string src = args.positional(0), out = args.positional(1);

    const waste::ConvertPlan plan = waste::planConversion(src, out, o);
    if (plan.alreadyComplete) {
        std::fprintf(stderr, "%s already holds this conversion; nothing to do\n", out.c_str());
        return 0;
    }
    std::fprintf(stderr, "%s: %d layers (%d MoE x %d experts), source %s -> container %s (%s to write, %s free)%s\n",
                 plan.arch.c_str(), plan.layers, plan.moeLayers, plan.experts, qPrintable(Units::bytes(plan.sourceBytes)),
                 qPrintable(Units::bytes(plan.outputBytes)), qPrintable(Units::bytes(plan.remainingOutputBytes)),
                 qPrintable(Units::bytes(plan.freeBytes)),
                 plan.unitsDone ? (", resuming after unit " + std::to_string(plan.unitsDone)).c_str() : "");
    std::signal(SIGINT, onInterrupt);
    std::signal(SIGTERM, onInterrupt);
    const waste::ConvertResult r = waste::convertModel(src, out, o, stderrProgress(), &g_interrupted);
    std::fprintf(stderr, "wrote %s in %.1f s (%s of source)%s\n", out.c_str(), r.seconds,
                 qPrintable(Units::rate(r.seconds > 0 ? r.sourceBytesRead / r.seconds : 0)),
                 r.shardsReclaimed ? (", deleted " + std::to_string(r.shardsReclaimed) + " source shards").c_str() : "");
    return 0;
}

} // namespace

WASTE_CLI_VERB({"convert", "SRC_DIR OUT_DIR [--jobs N] [--trunk-bits 4|8] [--reclaim]",
                "convert a Hugging Face safetensors model into a streaming container (resumable)",
                {{{"--jobs", cli::OptionKind::Value, "N  worker threads (default: one per core)"},
                  {"--trunk-bits", cli::OptionKind::Value, "4|8  trunk matrices Q4G (default) or Q8G"},
                  {"--reclaim", cli::OptionKind::Flag, "delete each source shard once it is converted"},
                  {"--fail-after", cli::OptionKind::Value, "SIZE  testing: fail writes as if the disk filled up"}},
                 2, 2},
                &runConvert});
