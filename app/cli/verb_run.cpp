// waste run MODEL PROMPT [-n N] [--temp F] [--top-p F] [--top-k K] [--seed N] [--budget SIZE]
// [--image FILE]... [--system TEXT] [--think] [--raw] [--learn [--usage FILE]]: one generation,
// text streamed to stdout, a stats line on stderr. A model with a chat template gets PROMPT as a
// user message rendered with it (the GUI chat's renderer, app/core/prompt); --raw, or a model
// without a template, continues PROMPT as plain text. --learn records the run's experts
// (usage.waste, the reference's layout) and its routing (usage.routing.jsonl, the trace format
// `waste cache-sim` and bench_cache replay); the next open warms the cache from the record.
#include "prompt/dialoguerenderer.h"
#include "generation_options.h"
#include "model_options.h"
#include "observed_runs.h"
#include "prefill_meter.h"
#include <waste/usage_paths.hpp>
#include "engine/promptfeeder.h"
#include "units/units.h"
#include "verb.h"

#include <chrono>
#include <cstdio>

namespace {

int runRun(const cli::Args &args)
{
    const std::string text = cli::readPrompt(args, 1);
    const waste::GenParams params = cli::genParams(args);
    auto model = cli::openModel(args);
    if (!args.value("--budget"))
        std::fprintf(stderr, "waste: no --budget, using %s (expert cache %s)\n", qPrintable(Units::bytes(model->info().budgetBytes)),
                     qPrintable(Units::bytes(model->info().expertCacheBytes)));
    const waste::ChatFormat format = model->info().chatFormat;
    std::vector<int32_t> ids;
    if (!waste::chatFormatTraits(format).templated || args.flag("--raw")) {
        // Media blocks of --image files (in order) before the prompt; one path for every front end.
        ids = waste::promptWithImages(*model, args.values("--image"), text);
    } else {
        Dialogue d;
        d.systemPrompt = QString::fromStdString(args.text("--system", ""));
        d.thinking = args.flag("--think");
        DialogueTurn user;
        user.role = QStringLiteral("user");
        user.text = QString::fromStdString(text);
        for (const std::string &image : args.values("--image"))
            user.imagePaths << QString::fromStdString(image);
        d.turns << user;
        const RenderedPrompt prompt = renderDialogue(d, format);
        PromptFeeder feeder;
        feeder.setModel(model.get(), {});
        ids = feeder.prepare(prompt.segments, prompt.imagePaths, false, {}).prompt;
    }
    if (ids.empty())
        throw cli::UsageError("the prompt has no tokens");
    const bool quiet = args.flag("-q") || args.flag("--quiet");
    const auto t0 = std::chrono::steady_clock::now();
    cli::PrefillMeter meter(*model, quiet);
    bool read = false;
    double readSecs = 0;
    const waste::GenResult r = model->generate(ids, params, [&](const waste::TokenEvent &ev) {
        if (!read) { // the first token: the prompt has been read
            read = true;
            readSecs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            meter.finish();
        }
        if (!quiet) {
            std::fwrite(ev.text.data(), 1, ev.text.size(), stdout);
            std::fflush(stdout);
        }
        return true;
    }, meter.callback());
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!quiet)
        std::printf("\n");
    // Speed after the prompt, as the run is recorded (observed_runs.cpp): the prompt reads at its
    // own, much higher speed, and its time is shown beside.
    cli::printStatsLine(r.stats, static_cast<int>(r.tokens.size()), read ? secs - readSecs : 0, read ? readSecs : secs);
    // A real run of the model on this machine: `waste plan` and the app's Planner correct their
    // forecasts by it (observed_runs.h), as they do by the app's answers.
    if (r.stats.directIo)
        cli::recordAnswer(args.positional(0), model->info().budgetBytes, r, readSecs, secs);
    if (args.flag("--learn")) {
        model->saveUsage();
        const std::string usage = cli::usagePath(args);
        std::fprintf(stderr, "waste: --learn: experts recorded in %s, routing in %s\n", usage.c_str(),
                     waste::routingRecordPath(usage).c_str());
    }
    return 0;
}

} // namespace

WASTE_CLI_VERB({"run",
                "MODEL PROMPT [-n N] [--temp F] [--top-p F] [--top-k K] [--seed N] [--budget SIZE] [--image FILE]... "
                "[--system TEXT] [--think] [--raw] [--learn [--usage FILE]]",
                "Generate text from a prompt (as a chat message when the model has a chat template)",
                {cli::runOptions(), 1, 2}, &runRun});
