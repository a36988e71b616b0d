// waste chat MODEL [--budget SIZE]: an interactive conversation on stdin/stdout.
// The session state is kept across turns. Slash commands: /reset, /save FILE,
// /load FILE, /stats, /image FILE; Ctrl-D exits. User text is tokenized in plain
// mode, so typed chat markers stay text.
#include "generation_options.h"
#include "model_options.h"
#include "verb.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

namespace {

int runChat(const cli::Args &args)
{
    const waste::GenParams params = cli::genParams(args);
    auto model = cli::openModel(args);
    std::fprintf(stderr, "waste chat: %s, %d layers; raw continuation (this container has no chat template). "
                         "/reset /save FILE /load FILE /stats, Ctrl-D exits\n",
                 model->info().arch.c_str(), model->info().layers);
    std::string line;
    int64_t tokens = 0;
    double seconds = 0;
    while (true) {
        std::fprintf(stderr, "> ");
        if (!std::getline(std::cin, line))
            break;
        if (line.empty())
            continue;
        try {
            if (line == "/reset") {
                model->resetState();
                std::fprintf(stderr, "(conversation cleared)\n");
                continue;
            }
            if (line.rfind("/save ", 0) == 0) {
                model->saveState(line.substr(6));
                std::fprintf(stderr, "(saved at position %d)\n", model->position());
                continue;
            }
            if (line.rfind("/load ", 0) == 0) {
                model->loadState(line.substr(6));
                std::fprintf(stderr, "(loaded, position %d)\n", model->position());
                continue;
            }
            if (line == "/stats") {
                cli::printStatsLine(model->stats(), static_cast<int>(tokens), seconds);
                continue;
            }
            if (line.rfind("/image ", 0) == 0) {
                const int n = model->addImage(line.substr(7));
                std::fprintf(stderr, "[%s: %d image tokens, sent with your next message]\n", line.substr(7).c_str(), n);
                continue;
            }
            // Attached images go first, as their media blocks (markup); the words stay plain text.
            std::vector<int32_t> ids;
            if (const std::string media = model->pendingImageMarkup(); !media.empty())
                ids = model->tokenize(media, /*markup=*/true);
            const std::vector<int32_t> words = model->tokenize(line + "\n", /*markup=*/false);
            ids.insert(ids.end(), words.begin(), words.end());
            const auto t0 = std::chrono::steady_clock::now();
            const waste::GenResult r = model->generate(ids, params, [](const waste::TokenEvent &ev) {
                std::fwrite(ev.text.data(), 1, ev.text.size(), stdout);
                std::fflush(stdout);
                return true;
            });
            std::printf("\n");
            tokens += static_cast<int64_t>(r.tokens.size());
            seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        } catch (const waste::Error &e) {
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
    return o;
}

} // namespace

WASTE_CLI_VERB({"chat", "MODEL [--budget SIZE]", "Talk with a model interactively", {options(), 1, 1}, &runChat});
