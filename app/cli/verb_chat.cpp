// waste chat MODEL [--budget SIZE] [--system TEXT] [--think]: an interactive conversation on
// stdin/stdout. Slash commands: /reset, /save FILE, /load FILE, /stats, /image FILE; Ctrl-D exits.
//
// A model with a chat template: every turn renders the whole conversation with it (the GUI
// chat's renderer, app/core/prompt) and feeds only what the engine state does not hold yet
// (PromptFeeder), so earlier turns and images are not read again. /save keeps the state and the
// conversation together. A model without one: each line is plain text continued on the state.
// User text is always tokenized in plain mode, so typed chat markers stay text.
#include "prompt/assistantturn.h"
#include "prompt/dialoguerenderer.h"
#include "generation_options.h"
#include "prompt/mediablock.h"
#include "model_options.h"
#include "observed_runs.h"
#include "prefill_meter.h"
#include "engine/promptfeeder.h"
#include "verb.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

namespace {

struct Totals {
    std::string model; // its path: each answer is kept among its real runs (observed_runs.h)
    int64_t tokens = 0;
    double seconds = 0;       // after each prompt was read
    double promptSeconds = 0; // reading the prompts
    int64_t promptRead = 0;   // prompt tokens fed to the engine
    int64_t promptReused = 0; // prompt tokens its state or a checkpoint already held
};

waste::GenResult streamed(waste::Model &model, std::span<const int32_t> ids, const waste::GenParams &params,
                          Totals &totals)
{
    const auto t0 = std::chrono::steady_clock::now();
    cli::PrefillMeter meter(model, false);
    bool read = false;
    double readSecs = 0;
    waste::GenResult r = model.generate(ids, params, [&](const waste::TokenEvent &ev) {
        if (!read) { // the first token: the prompt has been read
            read = true;
            readSecs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            meter.finish();
        }
        std::fwrite(ev.text.data(), 1, ev.text.size(), stdout);
        std::fflush(stdout);
        return true;
    }, meter.callback());
    std::printf("\n");
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    totals.tokens += static_cast<int64_t>(r.tokens.size());
    totals.seconds += read ? secs - readSecs : 0;
    totals.promptSeconds += read ? readSecs : secs;
    if (r.stats.directIo)
        cli::recordAnswer(totals.model, model.info().budgetBytes, r, readSecs, secs);
    return r;
}

// One line of a raw-continuation chat: pending images first (their media blocks), then the words.
void rawTurn(waste::Model &model, const std::string &line, const waste::GenParams &params, Totals &totals)
{
    std::vector<int32_t> ids;
    if (const std::string media = model.pendingImageMarkup(); !media.empty())
        ids = model.tokenize(media, /*markup=*/true);
    const std::vector<int32_t> words = model.tokenize(line + "\n", /*markup=*/false);
    ids.insert(ids.end(), words.begin(), words.end());
    streamed(model, ids, params, totals);
}

int runChat(const cli::Args &args)
{
    const waste::GenParams params = cli::genParams(args);
    auto model = cli::openModel(args);
    const waste::ChatFormat format = model->info().chatFormat;
    const bool templated = waste::chatFormatTraits(format).templated;
    std::fprintf(stderr, "waste chat: %s, %d layers; %s. /reset /save FILE /load FILE /stats /image FILE, Ctrl-D exits\n",
                 model->info().arch.c_str(), model->info().layers, waste::chatFormatTraits(format).description);

    PromptFeeder feeder;
    feeder.setModel(model.get(), savedstate::modelIdentity(QString::fromStdString(args.positional(0)),
                                                           int(args.integer("--ctx", 4096)), model->info().trainedRounding));
    Dialogue dialogue;
    dialogue.systemPrompt = QString::fromStdString(args.text("--system", ""));
    dialogue.thinking = args.flag("--think");
    QStringList images; // attached with /image, sent with the next message (templated mode)

    std::string line;
    Totals totals;
    totals.model = args.positional(0);
    while (true) {
        std::fprintf(stderr, "> ");
        if (!std::getline(std::cin, line))
            break;
        if (line.empty())
            continue;
        try {
            if (line == "/reset") {
                feeder.reset();
                dialogue.turns.clear();
                images.clear();
                model->clearImages();
                std::fprintf(stderr, "(conversation cleared)\n");
                continue;
            }
            if (line.rfind("/save ", 0) == 0) {
                const QString file = QString::fromStdString(line.substr(6));
                if (templated)
                    feeder.save(file, dialogueToJson(dialogue));
                else
                    model->saveState(file.toStdString());
                std::fprintf(stderr, "(saved at position %d)\n", model->position());
                continue;
            }
            if (line.rfind("/load ", 0) == 0) {
                const QString file = QString::fromStdString(line.substr(6));
                if (templated) {
                    const std::optional<QJsonObject> extra = feeder.restore(file);
                    if (!extra)
                        throw std::runtime_error(line.substr(6) + ": not a conversation saved by `waste chat` with this model");
                    dialogue = dialogueFromJson(*extra);
                    images.clear();
                } else {
                    model->loadState(file.toStdString());
                }
                std::fprintf(stderr, "(loaded, position %d)\n", model->position());
                continue;
            }
            if (line == "/stats") {
                cli::printStatsLine(model->stats(), static_cast<int>(totals.tokens), totals.seconds, totals.promptSeconds);
                std::fprintf(stderr, "prompts: %lld tokens read, %lld not read again (held by the state or a checkpoint)\n",
                             static_cast<long long>(totals.promptRead), static_cast<long long>(totals.promptReused));
                continue;
            }
            if (line.rfind("/image ", 0) == 0) {
                const std::string path = line.substr(7);
                if (templated) {
                    // Read its header now so a bad file is refused before the message.
                    const QString block = imageMediaBlock(QString::fromStdString(path));
                    images << QString::fromStdString(path);
                    std::fprintf(stderr, "[%s: %s, sent with your next message]\n", path.c_str(),
                                 block.section(QLatin1Char(' '), 1).section(QLatin1Char('<'), 0, 0).toUtf8().constData());
                } else {
                    const int n = model->addImage(path);
                    std::fprintf(stderr, "[%s: %d image tokens, sent with your next message]\n", path.c_str(), n);
                }
                continue;
            }
            if (!templated) {
                rawTurn(*model, line, params, totals);
                continue;
            }
            DialogueTurn user;
            user.role = QStringLiteral("user");
            user.text = QString::fromStdString(line);
            user.imagePaths = images;
            dialogue.turns << user;
            try {
                const RenderedPrompt prompt = renderDialogue(dialogue, format);
                const PromptFeeder::Prepared prepared = feeder.prepare(prompt.segments, prompt.imagePaths, true, {});
                totals.promptRead += static_cast<int64_t>(prepared.rest().size());
                totals.promptReused += prepared.reused;
                const waste::GenResult r = streamed(*model, prepared.rest(), params, totals);
                feeder.record(prepared, r);
                dialogue.turns << assistantTurn(*model, prepared.prompt, r, params, prompt.opensThinking);
                images.clear();
            } catch (...) {
                // The turn did not happen; the state may be half-fed: the next turn starts clean.
                dialogue.turns.removeLast();
                feeder.reset();
                throw;
            }
        } catch (const std::exception &e) {
            std::fprintf(stderr, "waste chat: %s\n", e.what());
        }
    }
    std::fprintf(stderr, "\n");
    return 0;
}

std::vector<cli::OptionSpec> options()
{
    auto o = cli::modelOptions();
    for (auto &s : cli::samplingOptions())
        o.push_back(s);
    for (auto &s : cli::templateOptions())
        o.push_back(s);
    return o;
}

} // namespace

WASTE_CLI_VERB({"chat", "MODEL [--budget SIZE] [--system TEXT] [--think]", "Talk with a model interactively",
                {options(), 1, 1}, &runChat});
