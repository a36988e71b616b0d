// A small byte-level BPE vocabulary in tiktoken's rank-file format, learned from a text
// embedded here, so tiny models tokenize real text into more than single bytes and any
// text (all 256 byte values are tokens) round-trips.
#pragma once

#include <string>
#include <vector>

namespace waste::convert {

struct TinyVocabulary {
    std::vector<std::string> tokens;   // rank -> bytes
    std::string rankFile;              // "BASE64 RANK\n" lines
};

// Learns up to `merges` merges; deterministic.
TinyVocabulary learnTinyVocabulary(int merges);

std::string base64Encode(const std::string &bytes);

} // namespace waste::convert
