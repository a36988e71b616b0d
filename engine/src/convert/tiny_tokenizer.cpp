#include "convert/tiny_tokenizer.hpp"

#include <map>
#include <set>
#include <utility>

namespace waste::convert {

namespace {

// Training text: plain English about what this program does, plus a few pangrams.
const char *kCorpus =
    "The quick brown fox jumps over the lazy dog. Hello, world! Hello again, and welcome. "
    "A mixture of experts model keeps a small shared trunk in memory and streams the experts that "
    "each token needs from the disk. The router picks the experts for every token, and the cache keeps "
    "the ones that are used again and again. When the cache is too small the engine reads more from "
    "the disk, and when it is large enough most reads are hits. The planner shows the memory that the "
    "model needs before it is opened, and it warns when the budget is close to the point where the "
    "computer starts paging. The converter turns the weights of a released model into a container with "
    "one record for each expert, so that one read brings in one expert. The records are aligned to "
    "pages of four thousand and ninety six bytes, and every record has a header that names its layer, "
    "its expert and its checksum. If the conversion is interrupted it continues where it stopped, and "
    "the result is the same as if it had never stopped. The tokenizer splits the text into pieces and "
    "then merges the most frequent pairs of bytes into tokens. Numbers such as 2024, 4096, 128 and 65536 "
    "are split into groups of up to three digits. The weather today is sunny with a light wind from the "
    "west, and the temperature will rise in the afternoon. She sells sea shells by the sea shore. "
    "How much wood would a woodchuck chuck if a woodchuck could chuck wood? The five boxing wizards jump "
    "quickly. Pack my box with five dozen liquor jugs. Sphinx of black quartz, judge my vow. "
    "In the beginning the model was small, and it answered every question with the same few words. "
    "Then it learned to listen, to remember, and to think before it spoke. What is the capital of "
    "France? The capital of France is Paris. What is two plus two? Two plus two is four. "
    "Thank you for your help. You are welcome. Please tell me a story about a brave little robot who "
    "wanted to see the ocean. Once upon a time there was a little robot that lived in a quiet town "
    "between the mountains and the sea. Every morning the robot looked at the water and dreamed. ";

bool isLetter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80; }
bool isDigit(unsigned char c) { return c >= '0' && c <= '9'; }

// A simplified version of the engine's pre-tokenizer: an optional leading space or
// punctuation mark with a letter run, digit runs of up to three, other runs.
std::vector<std::string> pieces(const std::string &text) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < text.size()) {
        size_t j = i;
        const auto c = static_cast<unsigned char>(text[i]);
        if (isLetter(c) || (i + 1 < text.size() && !isDigit(c) && isLetter(static_cast<unsigned char>(text[i + 1])))) {
            j = isLetter(c) ? i : i + 1;
            while (j < text.size() && isLetter(static_cast<unsigned char>(text[j]))) ++j;
        } else if (isDigit(c)) {
            while (j < text.size() && j - i < 3 && isDigit(static_cast<unsigned char>(text[j]))) ++j;
        } else {
            ++j;
        }
        out.push_back(text.substr(i, j - i));
        i = j;
    }
    return out;
}

} // namespace

std::string base64Encode(const std::string &bytes) {
    static const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const unsigned v = static_cast<unsigned char>(bytes[i]) << 16 | static_cast<unsigned char>(bytes[i + 1]) << 8 |
                           static_cast<unsigned char>(bytes[i + 2]);
        out += alphabet[(v >> 18) & 63];
        out += alphabet[(v >> 12) & 63];
        out += alphabet[(v >> 6) & 63];
        out += alphabet[v & 63];
    }
    if (i + 1 == bytes.size()) {
        const unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
        out += alphabet[(v >> 18) & 63];
        out += alphabet[(v >> 12) & 63];
        out += "==";
    } else if (i + 2 == bytes.size()) {
        const unsigned v = static_cast<unsigned char>(bytes[i]) << 16 | static_cast<unsigned char>(bytes[i + 1]) << 8;
        out += alphabet[(v >> 18) & 63];
        out += alphabet[(v >> 12) & 63];
        out += alphabet[(v >> 6) & 63];
        out += '=';
    }
    return out;
}

TinyVocabulary learnTinyVocabulary(int merges) {
    TinyVocabulary v;
    for (int b = 0; b < 256; ++b) v.tokens.push_back(std::string(1, static_cast<char>(b)));
    std::set<std::string> known(v.tokens.begin(), v.tokens.end());
    std::map<std::vector<int>, int> words;
    for (const auto &p : pieces(kCorpus)) {
        std::vector<int> ids;
        for (unsigned char c : p) ids.push_back(c);
        ++words[ids];
    }
    std::set<std::pair<int, int>> forbidden;
    for (int m = 0; m < merges; ++m) {
        std::map<std::pair<int, int>, int> counts;
        for (const auto &[w, n] : words)
            for (size_t i = 0; i + 1 < w.size(); ++i) counts[{w[i], w[i + 1]}] += n;
        std::pair<int, int> best{-1, -1};
        int bestCount = 1; // a pair seen once teaches nothing
        for (const auto &[pair, n] : counts) // map order: ties go to the lowest pair
            if (n > bestCount && !forbidden.count(pair)) {
                best = pair;
                bestCount = n;
            }
        if (best.first < 0) break;
        const std::string bytes = v.tokens[static_cast<size_t>(best.first)] + v.tokens[static_cast<size_t>(best.second)];
        if (known.count(bytes)) { // the same bytes by another route: skip the pair
            forbidden.insert(best);
            --m;
            continue;
        }
        const int id = static_cast<int>(v.tokens.size());
        v.tokens.push_back(bytes);
        known.insert(bytes);
        std::map<std::vector<int>, int> next;
        for (const auto &[w, n] : words) {
            std::vector<int> r;
            for (size_t i = 0; i < w.size(); ++i) {
                if (i + 1 < w.size() && w[i] == best.first && w[i + 1] == best.second) {
                    r.push_back(id);
                    ++i;
                } else {
                    r.push_back(w[i]);
                }
            }
            next[r] += n;
        }
        words.swap(next);
    }
    for (size_t r = 0; r < v.tokens.size(); ++r) v.rankFile += base64Encode(v.tokens[r]) + " " + std::to_string(r) + "\n";
    return v;
}

} // namespace waste::convert
