#include "convert/resume_journal.hpp"

#include "convert/file_io.hpp"
#include "convert/random.hpp"
#include "format/manifest_writer.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <cstdio>

namespace waste::convert {

using ojson = nlohmann::ordered_json;

namespace {

std::string hex64(uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

} // namespace

std::string fingerprintOf(const ModelSource &src, const ConvertOptions &o, const std::string &experts) {
    std::string text = "waste-convert/1|" + src.identity() + "|bits=" + std::to_string(o.trunkBits) +
                       "|seed=" + std::to_string(o.seed) + "|cbx=" + std::to_string(o.codebookExperts) +
                       "|cbv=" + std::to_string(o.codebookVectors) + "|it=" + std::to_string(o.kmeansIterations);
    if (!experts.empty()) text += "|experts=" + experts;
    return hex64(hashString(text)) + hex64(hashString(text, 0x84222325cbf29ce4ull));
}

ResumeState loadResume(const std::string &out, const std::string &fingerprint, const Layout &L) {
    ResumeState st;
    const std::string jp = joinPath(out, kJournal);
    if (!fileExists(jp)) return st;
    ojson j;
    try {
        j = ojson::parse(readWholeFile(jp));
    } catch (const std::exception &) {
        return st; // an unreadable journal is never half-written (atomic rename); treat as absent
    }
    if (j.value("fingerprint", std::string()) != fingerprint)
        throw Error(ErrorCode::Argument, out + " holds an unfinished conversion of another model or with other options; "
                                               "delete the folder or choose another one");
    for (const auto &r : j.value("reclaimed", ojson::array())) st.reclaimed.push_back(r.get<std::string>());
    int done = std::min<int>(j.value("units_done", 0), static_cast<int>(L.units.size()));
    const ojson ends = j.value("unit_ends", ojson::array());
    done = std::min<int>(done, static_cast<int>(ends.size()));
    // A bank that is missing or the wrong size sends the resume point back to its layer.
    const ojson layers = j.value("layers", ojson::object());
    for (int u = 0; u < done; ++u) {
        const Unit &unit = L.units[static_cast<size_t>(u)];
        if (unit.experts.empty()) continue;
        const std::string key = std::to_string(unit.layer);
        if (!layers.contains(key) || fileSize(joinPath(out, format::bankFileName(unit.layer))) != layers[key].value("bytes", int64_t(-1))) {
            done = u;
            break;
        }
    }
    // The append-only files must still hold every committed byte.
    const auto partialSize = [&](const char *partial, const char *final) {
        int64_t s = fileSize(joinPath(out, partial));
        return s >= 0 ? s : fileSize(joinPath(out, final));
    };
    const int64_t trunkHave = partialSize(kTrunkPartial, "trunk.bin");
    const int64_t cbHave = partialSize(kCodebooksPartial, "codebooks.bin");
    while (done > 0) {
        const auto &e = ends[static_cast<size_t>(done - 1)];
        if (trunkHave >= e.value("trunk", int64_t(0)) && cbHave >= e.value("codebooks", int64_t(0))) break;
        --done;
    }
    st.unitsDone = done;
    for (int u = 0; u < done; ++u)
        st.ends.push_back({ends[static_cast<size_t>(u)].value("trunk", int64_t(0)), ends[static_cast<size_t>(u)].value("codebooks", int64_t(0))});
    for (const auto &e : j.value("trunk", ojson::array()))
        if (e.value("unit", 1 << 30) < done) st.trunkEntries.push_back(e);
    for (int u = 0; u < done; ++u) {
        const Unit &unit = L.units[static_cast<size_t>(u)];
        const std::string key = std::to_string(unit.layer);
        if (!unit.experts.empty()) st.layers[key] = layers[key];
    }
    return st;
}

void saveJournal(const std::string &out, const std::string &fingerprint, const Layout &L, const ResumeState &st) {
    ojson j;
    j["journal"] = 1;
    j["fingerprint"] = fingerprint;
    j["units_total"] = L.units.size();
    j["units_done"] = st.unitsDone;
    ojson ends = ojson::array();
    for (const auto &e : st.ends) ends.push_back({{"trunk", e.trunk}, {"codebooks", e.codebooks}});
    j["unit_ends"] = ends;
    j["trunk"] = st.trunkEntries;
    j["layers"] = st.layers;
    j["reclaimed"] = st.reclaimed;
    writeFileAtomic(joinPath(out, kJournal), j.dump());
}

} // namespace waste::convert
