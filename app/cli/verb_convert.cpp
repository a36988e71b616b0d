// `waste convert SRC_DIR OUT_DIR`: Hugging Face safetensors -> streaming container.
// Progress goes to stderr; Ctrl-C stops after the current expert and the same command
// resumes where it stopped. With --json the last line on stdout is one JSON object with
// the run's source bytes, seconds and throughput.
#include "verb.h"

#include "model_options.h"
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

waste::ExpertEncoding parseExperts(const std::string &v)
{
    for (auto e : {waste::ExpertEncoding::Native, waste::ExpertEncoding::VQ3R, waste::ExpertEncoding::Q4,
                   waste::ExpertEncoding::Auto})
        if (v == waste::expertEncodingName(e)) return e;
    throw cli::UsageError("--experts must be native, vq3r or q4, not '" + v + "'");
}

int runConvert(const cli::Args &args)
{
    waste::ConvertOptions o;
    o.jobs = static_cast<int>(args.integer("--jobs", 0));
    o.trunkBits = static_cast<int>(args.integer("--trunk-bits", 4));
    o.reclaim = args.flag("--reclaim");
    if (auto e = args.value("--experts")) o.experts = parseExperts(*e);
    if (o.jobs < 0) throw cli::UsageError("--jobs must be 0 (one per core) or more");
    if (o.trunkBits != 4 && o.trunkBits != 8 && o.trunkBits != 16) throw cli::UsageError("--trunk-bits must be 4, 8 or 16");
    const bool json = args.flag("--json");
    if (auto limit = args.value("--fail-after")) o.failAfterBytes = waste::parseSize(*limit);
    const std::string src = args.positional(0), out = args.positional(1);

    const waste::ConvertPlan plan = waste::planConversion(src, out, o);
    if (plan.alreadyComplete) {
        std::fprintf(stderr, "%s already holds this conversion; nothing to do\n", out.c_str());
        if (json) std::printf("{\"source_bytes\":0,\"seconds\":0,\"mb_per_s\":0,\"already_complete\":true}\n");
        return 0;
    }
    std::fprintf(stderr, "%s: %d layers (%d MoE x %d experts, %s records of %s), source %s -> container %s (%s to write, %s free)%s\n",
                 plan.arch.c_str(), plan.layers, plan.moeLayers, plan.experts, plan.expertFormat.c_str(),
                 qPrintable(Units::bytes(plan.recordBytes)), qPrintable(Units::bytes(plan.sourceBytes)),
                 qPrintable(Units::bytes(plan.outputBytes)), qPrintable(Units::bytes(plan.remainingOutputBytes)),
                 qPrintable(Units::bytes(plan.freeBytes)),
                 plan.unitsDone ? (", resuming after unit " + std::to_string(plan.unitsDone)).c_str() : "");
    if (!plan.note.empty())
        std::fprintf(stderr, "note: %s\n", plan.note.c_str());
    // Say when the container will hold approximations, and how to keep the release's values
    // (a float reference, a quality check): the defaults trade exactness for size.
    std::string approximate;
    if (plan.expertFormat == "VQ3R")
        approximate = "the routed experts as 3-bit codes";
    else if (plan.expertFormat == "INT4G32" && o.experts == waste::ExpertEncoding::Q4)
        approximate = "the routed experts in 4-bit groups";
    if (o.trunkBits != 16)
        approximate += (approximate.empty() ? "" : " and ") + std::string("large trunk matrices in ") +
                       (o.trunkBits == 4 ? "4-bit" : "8-bit") + " groups";
    if (!approximate.empty())
        std::fprintf(stderr, "note: the container holds %s; --experts native --trunk-bits 16 keeps the release's values "
                             "exactly, at a larger size\n",
                     approximate.c_str());
    std::signal(SIGINT, onInterrupt);
    std::signal(SIGTERM, onInterrupt);
    const waste::ConvertResult r = waste::convertModel(src, out, o, stderrProgress(), &g_interrupted);
    std::fprintf(stderr, "wrote %s in %.1f s (%s of source)%s\n", out.c_str(), r.seconds,
                 qPrintable(Units::rate(r.seconds > 0 ? r.sourceBytesRead / r.seconds : 0)),
                 r.shardsReclaimed ? (", deleted " + std::to_string(r.shardsReclaimed) + " source shards").c_str() : "");
    if (json) // MB = 10^6 bytes, as disks quote their sequential rates
        std::printf("{\"source_bytes\":%lld,\"seconds\":%.3f,\"mb_per_s\":%.1f,\"expert_format\":%s,\"record_bytes\":%lld,"
                    "\"output_bytes\":%lld,\"units_resumed\":%d}\n",
                    static_cast<long long>(r.sourceBytesRead), r.seconds, r.seconds > 0 ? r.sourceBytesRead / r.seconds / 1e6 : 0.0,
                    cli::jsonString(r.plan.expertFormat).c_str(), static_cast<long long>(r.plan.recordBytes),
                    static_cast<long long>(r.plan.outputBytes), r.unitsResumed);
    return 0;
}

} // namespace

WASTE_CLI_VERB({"convert", "SRC_DIR OUT_DIR [--experts native|vq3r|q4] [--jobs N] [--trunk-bits 4|8|16] [--reclaim] [--json]",
                "convert a Hugging Face safetensors model into a streaming container (resumable)",
                {{{"--experts", cli::OptionKind::Value,
                   "native|vq3r|q4  routed experts as the release stores them (MXFP4, FP8 blocks, INT4 groups, BF16; "
                   "the default for quantised releases), as 3-bit VQ codes (the default otherwise), or as INT4 groups of 32"},
                  {"--jobs", cli::OptionKind::Value, "N  worker threads (default: one per core)"},
                  {"--trunk-bits", cli::OptionKind::Value, "4|8|16  trunk matrices Q4G (default), Q8G, or the source's precision"},
                  {"--json", cli::OptionKind::Flag, "a last line on stdout: source_bytes, seconds, mb_per_s, expert_format, record_bytes"},
                  {"--reclaim", cli::OptionKind::Flag, "delete each source shard once it is converted"},
                  {"--fail-after", cli::OptionKind::Value, "SIZE  testing: fail writes as if the disk filled up"}},
                 2, 2},
                &runConvert});
