// Prefix reuse across chat turns, in figures (README "Multi-turn chats read each token once").
//  1. The tiny containers, 6 turns per architecture and thinking mode: tokens read per turn
//     with and without reuse, and whether the logits equal a fresh read (chat_turns.hpp).
//  2. Full-size K3 (tests/fixtures/k3-full-manifest) at the reference's ~2 s per prefill
//     token: the wait a 20-turn chat saves, for a stated conversation shape.
//  3. The saved conversation state of a full-size K3 (live state + checkpoint): its size
//     from the memory plan, and its write time at this disk's measured write rate.
// Usage: bench_prefix_reuse [state-dir]   (state-dir: where the write rate is measured)
#include "chat_turns.hpp"

#include "waste/prefix.hpp"
#include "waste/waste.hpp"

#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

const std::string kFixtures = WASTE_FIXTURES_DIR;

bool table(const char *title, const std::string &container, chat_turns::Format f, bool keepReasoning)
{
    const std::vector<chat_turns::TurnFigures> turns = chat_turns::converse(container, f, keepReasoning);
    std::printf("\n%s\n\n| turn | prompt tokens | read without reuse | read with reuse | logits identical |\n"
                "| ---: | ---: | ---: | ---: | :---: |\n", title);
    size_t without = 0, with = 0;
    bool all = true;
    for (size_t i = 0; i < turns.size(); ++i) {
        const chat_turns::TurnFigures &t = turns[i];
        const size_t read = t.promptTokens - size_t(t.reused);
        without += t.promptTokens;
        with += read;
        all = all && t.identical;
        std::printf("| %zu | %zu | %zu | %zu | %s |\n", i + 1, t.promptTokens, t.promptTokens, read, t.identical ? "yes" : "NO");
    }
    std::printf("| all | | %zu | %zu | %s |\n", without, with, all ? "yes" : "NO");
    return all;
}

// A 20-turn chat on the full K3: tokens read per turn without reuse (the whole prompt) and
// with it (the new user message, the headers, and the part of the last answer the format
// rewrote: with thinking on and reasoning dropped, the answer's response is read again
// from the checkpoint at its start).
void fullK3Chat(double secondsPerToken)
{
    const int system = 300, user = 150, reasoning = 600, response = 400, frame = 12; // frame: tags per message
    std::printf("\nFull-size K3, 20 turns at %.1f s per prefill token (system %d tokens, user %d, "
                "reasoning %d, response %d, %d tokens of tags per message):\n\n"
                "| thinking | read without reuse | read with reuse | wait without | wait with | saved |\n"
                "| --- | ---: | ---: | ---: | ---: | ---: |\n",
                secondsPerToken, system, user, reasoning, response, frame);
    const struct {
        const char *name;
        int keptAnswer; // tokens of a past answer in the next prompt
        int reread;     // tokens of the last answer read again
    } modes[] = {{"off", response + frame, 0},
                 {"on, reasoning_content sent back", reasoning + response + frame, 0},
                 {"on, reasoning dropped", response + frame, response + frame}};
    for (const auto &m : modes) {
        double without = 0, with = 0;
        for (int turn = 1; turn <= 20; ++turn) {
            const double prompt = system + frame + turn * (user + frame) + (turn - 1) * m.keptAnswer + frame;
            without += prompt;
            with += turn == 1 ? prompt : user + 2 * frame + m.reread;
        }
        const auto hours = [&](double tokens) { return tokens * secondsPerToken / 3600.0; };
        std::printf("| %s | %.0f | %.0f | %.1f h | %.1f h | %.1f h |\n", m.name, without, with, hours(without),
                    hours(with), hours(without - with));
    }
}

double writeRate(const std::string &dir)
{
    const std::string path = dir + "/bench_prefix_reuse.write";
    std::vector<char> block(size_t(64) << 20, 'w');
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return 0;
    const auto t0 = std::chrono::steady_clock::now();
    size_t written = 0;
    for (int i = 0; i < 8; ++i)
        if (::write(fd, block.data(), block.size()) == ssize_t(block.size()))
            written += block.size();
    ::fsync(fd);
    ::close(fd);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ::unlink(path.c_str());
    return s > 0 ? double(written) / s : 0;
}

void fullK3SavedState(const std::string &dir)
{
    const std::string manifest = kFixtures + "/k3-full-manifest";
    const waste::MemoryPlan a = waste::planMemory(manifest, 4096), b = waste::planMemory(manifest, 8192);
    const int64_t perPosition = (b.state_bytes - a.state_bytes) / 4096; // MLA latent rows
    const int64_t recurrent = a.state_bytes - 4096 * perPosition;       // KDA matrices and conv rings
    const int64_t checkpoint = waste::checkpointBytes(manifest);
    const double rate = writeRate(dir);
    const double GiB = 1024.0 * 1024 * 1024;
    std::printf("\nFull-size K3 saved conversation state (live state + the checkpoint at the last answer's start; "
                "recurrent %.2f GiB, %.1f KiB per position, checkpoint %.2f GiB), written at %.2f GB/s measured in %s:\n\n"
                "| tokens read | live state | with checkpoint | write time |\n| ---: | ---: | ---: | ---: |\n",
                recurrent / GiB, perPosition / 1024.0, checkpoint / GiB, rate / 1e9, dir.c_str());
    for (int tokens : {2000, 8000, 32000, 128000}) {
        // + 4 bytes per token read, + the last logits
        const int64_t live = recurrent + int64_t(tokens) * (perPosition + 4) + int64_t(163840) * 4;
        const int64_t both = live + checkpoint;
        std::printf("| %d | %.2f GiB | %.2f GiB | %.2f s |\n", tokens, live / GiB, both / GiB, rate > 0 ? both / rate : 0.0);
    }
}

} // namespace

int main(int argc, char **argv)
{
    const std::string kimi = kFixtures + "/reference-container/r3.waste", k3 = kFixtures + "/k3-container/k3s1.waste";
    using chat_turns::Format;
    bool ok = table("Kimi-Linear (r3, ChatML), answers sent back as written", kimi, Format::ChatMl, true);
    ok = table("Kimi-Linear (r3, ChatML), <think> dropped from past answers", kimi, Format::ChatMl, false) && ok;
    ok = table("K3 (k3s1), thinking off", k3, Format::K3Plain, false) && ok;
    ok = table("K3 (k3s1), thinking on, reasoning_content sent back", k3, Format::K3Thinking, true) && ok;
    ok = table("K3 (k3s1), thinking on, reasoning dropped", k3, Format::K3Thinking, false) && ok;
    fullK3Chat(2.0);
    fullK3SavedState(argc > 1 ? argv[1] : ".");
    std::printf("\nlogits identical to a fresh read on every turn: %s\n", ok ? "yes" : "NO");
    return ok ? 0 : 1;
}
