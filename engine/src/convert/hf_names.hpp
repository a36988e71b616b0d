// How the converter reads a Hugging Face checkpoint's tensor names: which layer a
// tensor belongs to, which routed expert and matrix (w1/w3/w2 or gate/up/down) it is,
// and the units the pipeline converts one at a time (0: everything outside the layers,
// then one per layer), each with its trunk tensors, experts and codebook base.
#pragma once

#include "convert/model_source.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace waste::convert {

struct ExpertNames {
    std::string name[3]; // gate (w1), up (w3), down (w2)
};

struct Unit {
    int layer = -1; // -1: globals
    std::vector<std::string> trunk;
    std::vector<ExpertNames> experts;
    int codebookBase = -1;
};

struct Layout {
    nlohmann::ordered_json config;      // as the manifest stores it (text_config hoisted)
    std::string prefix;
    std::string arch;
    int layers = 0;
    std::vector<Unit> units;
    std::map<std::string, int> unitOf; // every tensor -> its unit
    int moeLayers = 0;
    int experts = 0;
    // What the converter reads past and says so (Kimi K2.5's vision tower); empty: nothing.
    std::string note;
};

// Reads config.json and groups the source's tensors into units. Throws Error(Format)
// when the names or the config do not describe a model the converter can write.
Layout buildLayout(const ModelSource &src);

} // namespace waste::convert
