// Text-path costs per token: BPE encoding throughput on the reference vocabulary, and
// the constrained-decoding mask over a vocabulary the size of K3's (160k tokens).
// Last line: the mask time per generated token inside a JSON string (the worst case).
#include "text/constraint_factory.hpp"
#include "text/tokenizer.hpp"
#include "text/token_trie.hpp"

#include <chrono>
#include <cstdio>
#include <random>
#include <set>

namespace {
double msSince(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
} // namespace

int main()
{
    using namespace waste::text;
    const Tokenizer tok = Tokenizer::load(std::string(WASTE_FIXTURES_DIR) + "/reference-container/r3.waste");
    std::string text;
    for (int i = 0; i < 4000; ++i)
        text += "The quick brown fox can't jump 1234 times; café Ελλάδα 你好 🙂\n  indented <|open|> ";
    auto t0 = std::chrono::steady_clock::now();
    const auto ids = tok.encode(text);
    const double encMs = msSince(t0);
    std::printf("tokenizer: %zu bytes -> %zu ids in %.1f ms (%.1f MB/s)\n", text.size(), ids.size(), encMs,
                text.size() / 1e3 / encMs);

    std::mt19937 rng(1);
    std::vector<std::string> vocab;
    for (int b = 0; b < 256; ++b)
        vocab.emplace_back(1, char(b));
    const std::string alphabet = "abcdefghijklmnopqrstuvwxyz  ,.\"{}[]:0123456789ETAOINSHRDLU";
    std::set<std::string> seen(vocab.begin(), vocab.end());
    while (vocab.size() < 160000) {
        std::string t;
        const int len = 2 + int(rng() % 9);
        for (int i = 0; i < len; ++i)
            t += alphabet[rng() % alphabet.size()];
        if (seen.insert(t).second)
            vocab.push_back(t);
    }
    const auto eos = int32_t(vocab.size());
    vocab.emplace_back();
    t0 = std::chrono::steady_clock::now();
    auto trie = std::make_shared<const TokenTrie>(vocab);
    const double trieMs = msSince(t0);
    auto c = makeJsonConstraint(trie, eos, R"({"type":"object","properties":{"note":{"type":"string"}},"required":["note"]})", 0);
    std::vector<bool> mask(vocab.size());
    for (char ch : std::string(R"({"note":"some text )"))
        c->accept(static_cast<unsigned char>(ch));
    const int reps = 20;
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i)
        c->allowed(mask);
    const double maskMs = msSince(t0) / reps;
    std::printf("token trie for %zu tokens built in %.1f ms\n", vocab.size(), trieMs);
    std::printf("constrained decoding mask: %.2f ms per token (160k vocabulary, inside a JSON string)\n", maskMs);
    return 0;
}
