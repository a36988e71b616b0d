// The tiny K3 in a release's expert layout (mktiny --k3 --hf --experts-layout X) and its
// conversions with a 16-bit trunk, made once per test program under build/test-output/SUITE
// (each program its own SUITE, so that ctest may run them side by side); and the error
// measure the native-expert tests use.
#pragma once

#include "k3_reference.hpp"
#include "opened_container.hpp"
#include "test_files.hpp"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace native_fixture {

using waste::TinyExperts;

// The tiny K3 in `layout` (seed 5), converted with `encoding` and --trunk-bits 16 (cached).
struct Made {
    std::string hf, dir;
};

inline const Made &made(const std::string &suite, TinyExperts layout,
                        waste::ExpertEncoding encoding = waste::ExpertEncoding::Native)
{
    static std::map<std::pair<int, int>, Made> cache;
    static std::map<int, std::string> sources;
    const auto key = std::make_pair(int(layout), int(encoding));
    auto it = cache.find(key);
    if (it != cache.end())
        return it->second;
    const std::string tag = std::string(waste::tinyExpertsName(layout));
    Made m;
    if (!sources.count(int(layout))) {
        const std::string hf = freshOutputDir(suite, tag + "-hf");
        waste::TinyModelOptions t;
        t.k3 = true;
        t.seed = 5;
        t.experts = layout;
        waste::makeTinyHf(hf, t);
        sources[int(layout)] = hf;
    }
    m.hf = sources[int(layout)];
    m.dir = freshOutputDir(suite, tag + "-" + waste::expertEncodingName(encoding));
    waste::ConvertOptions o;
    o.jobs = 2;
    o.experts = encoding;
    o.trunkBits = 16;
    waste::convertModel(m.hf, m.dir, o);
    return cache.emplace(key, m).first->second;
}

// max |engine - reference| / max |reference|.
using enginetest::relErr;

} // namespace native_fixture
