#include "convert/container_manifest.hpp"

#include "convert/file_io.hpp"
#include "convert/vq.hpp"
#include "format/manifest_keys.hpp"
#include "format/manifest_writer.hpp"

#include <waste/waste.hpp>

namespace waste::convert {

namespace {

constexpr const char *kFingerprint = "fingerprint";

} // namespace

void writeManifest(const std::string &out, const Layout &layout, const ResumeState &st, const ConvertOptions &o,
                   const ExpertChoice &experts, const std::string &fingerprint) {
    format::ManifestOut m;
    m.arch = layout.arch;
    m.prefix = layout.prefix;
    m.config = layout.config;
    const VqGeometry geom;
    m.quant.fmtName = "VQ3R";
    m.quant.stages = geom.stages;
    m.quant.vecDim = geom.dim;
    m.quant.entries = geom.entries;
    m.quant.indexBits = geom.indexBits;
    if (experts.native()) {
        m.quant.fmtName = experts.name();
        m.quant.native = experts.fmt;
    }
    for (const auto &u : layout.units)
        if (!u.experts.empty()) m.layers[std::to_string(u.layer)] = st.layers.at(std::to_string(u.layer));
    for (auto e : st.trunkEntries) {
        e.erase("unit");
        m.trunk.push_back(e);
    }
    m.converter = {{"name", "WASTE Studio"}, {"version", kVersion}, {kFingerprint, fingerprint},
                   {"trunk_bits", o.trunkBits}, {"seed", o.seed}};
    if (experts.native()) // how the records were made: a copy of the release's bytes, or q4's encoding
        m.converter["experts"] = experts.encode ? "q4" : "native";
    writeFileAtomic(joinPath(out, "manifest.json"), format::manifestText(m));
}

std::string manifestFingerprint(const std::string &out) {
    nlohmann::ordered_json m;
    try {
        m = nlohmann::ordered_json::parse(readWholeFile(joinPath(out, "manifest.json")));
    } catch (...) {
    }
    if (m.is_object() && m.contains(format::key::kConverter))
        return m[format::key::kConverter].value(kFingerprint, std::string());
    return {};
}

} // namespace waste::convert
