#include "convert/converter.hpp"

#include "convert/expert_record.hpp"
#include "convert/file_io.hpp"
#include "convert/grouped_quant.hpp"
#include "convert/half.hpp"
#include "convert/output_file.hpp"
#include "convert/parallel.hpp"
#include "convert/random.hpp"
#include "convert/vq.hpp"

#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <set>
#include <sys/file.h>
#include <unistd.h>

namespace waste::convert {

using ojson = nlohmann::ordered_json;

namespace {

constexpr const char *kJournal = ".waste-convert.json";
constexpr const char *kLock = ".waste-convert.lock";
constexpr const char *kTrunkPartial = "trunk.bin.partial";
constexpr const char *kCodebooksPartial = "codebooks.bin.partial";
constexpr int64_t kSmallTensor = 65536; // fewer elements than this stay F32 (reference rule)
constexpr int64_t kChunkElements = 1 << 22;

bool endsWith(const std::string &s, const std::string &suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool startsWith(const std::string &s, const std::string &prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

std::string hex64(uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

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
    ojson config;      // as the manifest stores it (text_config hoisted)
    std::string prefix;
    std::string arch;
    int layers = 0;
    std::vector<Unit> units;
    std::map<std::string, int> unitOf; // every tensor -> its unit
    int moeLayers = 0;
    int experts = 0;
};

// Parses "<prefix>model.layers.<L>.<rest>"; returns L or -1.
int parseLayer(const std::string &name, const std::string &prefix, std::string *rest) {
    const std::string head = prefix + "model.layers.";
    if (!startsWith(name, head)) return -1;
    size_t i = head.size(), j = i;
    while (j < name.size() && j - i < 6 && name[j] >= '0' && name[j] <= '9') ++j;
    if (j == i || j >= name.size() || name[j] != '.') return -1;
    if (rest) *rest = name.substr(j + 1);
    return std::stoi(name.substr(i, j - i));
}

// "block_sparse_moe.experts.<e>.w{1,2,3}.weight" (or .{gate,up,down}_proj.weight) -> e and
// kind (0 gate, 1 up, 2 down). MXFP4 experts arrive here already paired (model_source.hpp).
bool parseExpert(const std::string &rest, int *expert, int *kind) {
    const std::string head = "block_sparse_moe.experts.";
    if (!startsWith(rest, head)) return false;
    size_t i = head.size(), j = i;
    while (j < rest.size() && j - i < 6 && rest[j] >= '0' && rest[j] <= '9') ++j;
    if (j == i) return false;
    const std::string tail = rest.substr(j);
    if (tail == ".w1.weight" || tail == ".gate_proj.weight") *kind = 0;
    else if (tail == ".w3.weight" || tail == ".up_proj.weight") *kind = 1;
    else if (tail == ".w2.weight" || tail == ".down_proj.weight") *kind = 2;
    else return false;
    *expert = std::stoi(rest.substr(i, j - i));
    return true;
}

Layout buildLayout(const ModelSource &src) {
    Layout L;
    ojson config;
    try {
        config = ojson::parse(src.configText());
    } catch (const std::exception &e) {
        throw Error(ErrorCode::Format, "config.json is not valid JSON (" + std::string(e.what()) + ")");
    }
    if (!config.is_object()) throw Error(ErrorCode::Format, "config.json is not a JSON object");
    ojson cfg = config;
    if (config.contains("text_config") && config["text_config"].is_object()) {
        // Multimodal wrapper (K3): the text config is hoisted and the wrapper kept under _outer.
        cfg = config["text_config"];
        ojson outer = config;
        outer.erase("text_config");
        cfg["_outer"] = outer;
        L.prefix = "language_model.";
    }
    L.config = cfg;
    // The wrapper's model type names a multimodal release (kimi_k3); the text config's
    // own says only which trunk it reuses.
    L.arch = cfg.contains("_outer") ? cfg["_outer"].value("model_type", std::string("kimi_k3"))
                                    : cfg.value("model_type", std::string("kimi_linear"));
    if (!cfg.contains("num_hidden_layers") || !cfg["num_hidden_layers"].is_number_integer())
        throw Error(ErrorCode::Format, "config.json lacks num_hidden_layers");
    L.layers = cfg["num_hidden_layers"].get<int>();
    if (L.layers < 1 || L.layers > 1024) throw Error(ErrorCode::Format, "config.json num_hidden_layers out of range");

    L.units.resize(static_cast<size_t>(L.layers) + 1);
    for (int i = 0; i < L.layers; ++i) L.units[static_cast<size_t>(i) + 1].layer = i;
    std::vector<std::map<int, ExpertNames>> experts(static_cast<size_t>(L.layers));
    for (const std::string &name : src.tensorNames()) {
        std::string rest;
        const int layer = parseLayer(name, L.prefix, &rest);
        if (layer < 0 || layer >= L.layers) {
            L.units[0].trunk.push_back(name);
            L.unitOf[name] = 0;
            continue;
        }
        L.unitOf[name] = layer + 1;
        int e = 0, kind = 0;
        if (parseExpert(rest, &e, &kind)) experts[static_cast<size_t>(layer)][e].name[kind] = name;
        else L.units[static_cast<size_t>(layer) + 1].trunk.push_back(name);
    }
    const int cfgExperts = cfg.value("num_experts", cfg.value("n_routed_experts", 0));
    const int stages = VqGeometry{}.stages;
    for (int layer = 0; layer < L.layers; ++layer) {
        auto &m = experts[static_cast<size_t>(layer)];
        if (m.empty()) continue;
        const int E = static_cast<int>(m.size());
        if (m.begin()->first != 0 || m.rbegin()->first != E - 1)
            throw Error(ErrorCode::Format, "layer " + std::to_string(layer) + ": expert ids are not 0.." + std::to_string(E - 1));
        if (cfgExperts > 0 && E != cfgExperts)
            throw Error(ErrorCode::Format, "layer " + std::to_string(layer) + " has " + std::to_string(E) +
                                               " experts but config.json says num_experts " + std::to_string(cfgExperts));
        if (E > 65535) throw Error(ErrorCode::Unsupported, "more than 65535 experts per layer");
        Unit &u = L.units[static_cast<size_t>(layer) + 1];
        for (auto &[id, names] : m) {
            for (int k = 0; k < 3; ++k)
                if (names.name[k].empty())
                    throw Error(ErrorCode::Format, "layer " + std::to_string(layer) + " expert " + std::to_string(id) +
                                                       " lacks its w1/w2/w3 tensor");
            u.experts.push_back(names);
        }
        u.codebookBase = L.moeLayers * 3 * stages;
        ++L.moeLayers;
        L.experts = E;
    }
    if (L.units[0].trunk.empty() && L.moeLayers == 0) throw Error(ErrorCode::Format, "the source has no tensors");
    for (auto &u : L.units) std::sort(u.trunk.begin(), u.trunk.end());
    return L;
}

struct TrunkPlan {
    std::string name;
    TrunkFmt fmt = TrunkFmt::F32;
    std::vector<int64_t> shape; // as stored (vision conv kernels flattened to 2-D)
    int64_t rows = 0, n = 0;
    int64_t payload = 0, scales = 0;
    int64_t bytes() const { return payload + scales; }
};

TrunkPlan planTrunkTensor(const SourceTensor &t, int trunkBits) {
    TrunkPlan p;
    p.name = t.name;
    p.shape = t.shape;
    const int64_t numel = t.elements();
    const bool vision = startsWith(t.name, "vision_tower.") || startsWith(t.name, "mm_projector.");
    if (t.shape.size() <= 1 || numel < kSmallTensor) {
        p.fmt = TrunkFmt::F32;
    } else if (vision || endsWith(t.name, "embed_tokens.weight") || endsWith(t.name, "lm_head.weight")) {
        p.fmt = TrunkFmt::Q8G; // the tower is useless at 4 bits; embeddings and head are always 8
    } else {
        p.fmt = trunkBits == 8 ? TrunkFmt::Q8G : TrunkFmt::Q4G;
    }
    if (p.fmt != TrunkFmt::F32 && vision && t.shape.size() > 2) {
        // Readers take the last stored dimension as the input width: conv kernels become
        // [out, in*kh*kw], grids [h*w, d].
        if (t.shape.size() == 4) p.shape = {t.shape[0], numel / t.shape[0]};
        else p.shape = {numel / t.shape.back(), t.shape.back()};
    }
    p.n = p.shape.empty() ? 1 : p.shape.back();
    p.rows = p.n ? numel / p.n : 0;
    if (p.fmt == TrunkFmt::F32) {
        p.payload = numel * 4;
    } else {
        p.payload = groupedPayloadBytes(p.fmt, p.rows, p.n);
        p.scales = groupedScaleBytes(p.rows, p.n);
    }
    return p;
}

ExpertShape expertShapeOf(const ModelSource &src, const Unit &u) {
    const SourceTensor g = src.info(u.experts[0].name[0]);
    const SourceTensor d = src.info(u.experts[0].name[2]);
    if (g.shape.size() != 2 || d.shape.size() != 2 || d.shape[0] != g.shape[1] || d.shape[1] != g.shape[0])
        throw Error(ErrorCode::Format, "layer " + std::to_string(u.layer) + ": expert gate/down shapes do not fit together");
    ExpertShape s;
    s.inter = g.shape[0];
    s.hidden = g.shape[1];
    const VqGeometry geom;
    if (s.hidden % geom.dim || s.inter % geom.dim)
        throw Error(ErrorCode::Unsupported, "layer " + std::to_string(u.layer) + ": expert widths must be multiples of 8");
    return s;
}

// Source bytes of one expert (bf16, or MXFP4 packed + scales), taken from expert 0.
int64_t expertSourceBytes(const ModelSource &src, const Unit &u) {
    int64_t b = 0;
    for (const auto &n : u.experts[0].name) b += src.info(n).bytes;
    return b;
}

std::string fingerprintOf(const ModelSource &src, const ConvertOptions &o) {
    std::string text = "waste-convert/1|" + src.identity() + "|bits=" + std::to_string(o.trunkBits) +
                       "|seed=" + std::to_string(o.seed) + "|cbx=" + std::to_string(o.codebookExperts) +
                       "|cbv=" + std::to_string(o.codebookVectors) + "|it=" + std::to_string(o.kmeansIterations);
    return hex64(hashString(text)) + hex64(hashString(text, 0x84222325cbf29ce4ull));
}

struct UnitEnd {
    int64_t trunk = 0, codebooks = 0;
};

struct ResumeState {
    int unitsDone = 0;
    std::vector<UnitEnd> ends;  // one per done unit
    ojson trunkEntries = ojson::array(); // each with a "unit" key
    ojson layers = ojson::object();
    std::vector<std::string> reclaimed;
};

std::string bankName(int layer) { return "experts-L" + std::to_string(layer) + ".bin"; }

// Reads the journal and returns how much of it is still intact on disk.
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
        if (!layers.contains(key) || fileSize(joinPath(out, bankName(unit.layer))) != layers[key].value("bytes", int64_t(-1))) {
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

// Everything the plan needs for units not yet done.
struct UnitPlan {
    std::vector<TrunkPlan> trunk;
    ExpertShape expert;
    int64_t recordBytes = 0;
    int64_t outputBytes = 0;
    int64_t sourceBytes = 0;
};

UnitPlan planUnit(const ModelSource &src, const Unit &u, const ConvertOptions &o) {
    UnitPlan p;
    for (const auto &name : u.trunk) {
        const SourceTensor t = src.info(name);
        p.trunk.push_back(planTrunkTensor(t, o.trunkBits));
        p.outputBytes += p.trunk.back().bytes();
        p.sourceBytes += t.bytes;
    }
    if (!u.experts.empty()) {
        const VqGeometry geom;
        p.expert = expertShapeOf(src, u);
        p.recordBytes = expertLayout(p.expert, geom).recordBytes;
        p.outputBytes += p.recordBytes * static_cast<int64_t>(u.experts.size()) + 3 * geom.stages * codebookRecordBytes(geom);
        p.sourceBytes += expertSourceBytes(src, u) * static_cast<int64_t>(u.experts.size());
    }
    return p;
}

class DirLock {
public:
    explicit DirLock(const std::string &out) {
        const std::string p = joinPath(out, kLock);
        m_fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (m_fd < 0) throw Error(ErrorCode::Io, "cannot create " + p);
        if (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
            ::close(m_fd);
            throw Error(ErrorCode::Io, "another conversion is writing to " + out + "; wait for it or cancel it");
        }
        m_path = p;
    }
    ~DirLock() {
        if (m_fd >= 0) {
            ::unlink(m_path.c_str());
            ::close(m_fd);
        }
    }

private:
    int m_fd = -1;
    std::string m_path;
};

std::string gib(int64_t b) {
    char buf[32];
    if (b >= (1ll << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (1ll << 30));
    else std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1 << 20));
    return buf;
}

ojson specialsFrom(const std::optional<std::string> &tokenizerConfig) {
    ojson list = ojson::array();
    if (!tokenizerConfig) return list;
    nlohmann::json tc;
    try {
        tc = nlohmann::json::parse(*tokenizerConfig);
    } catch (const std::exception &e) {
        throw Error(ErrorCode::Format, "tokenizer_config.json is not valid JSON (" + std::string(e.what()) + ")");
    }
    if (!tc.is_object() || !tc.contains("added_tokens_decoder") || !tc["added_tokens_decoder"].is_object()) return list;
    std::map<long long, std::string> byId;
    for (auto it = tc["added_tokens_decoder"].begin(); it != tc["added_tokens_decoder"].end(); ++it) {
        char *end = nullptr;
        const long long id = std::strtoll(it.key().c_str(), &end, 10);
        if (!end || *end || id < 0 || !it.value().is_object() || !it.value().contains("content") || !it.value()["content"].is_string())
            continue;
        byId[id] = it.value()["content"].get<std::string>();
    }
    for (const auto &[id, text] : byId) list.push_back({{"id", id}, {"text", text}});
    return list;
}

// vision.json from the source's vision_config (K3 style) and preprocessor_config.json.
std::optional<std::string> visionJsonFrom(const ModelSource &src, const ojson &config) {
    const ojson *outer = config.contains("_outer") ? &config["_outer"] : &config;
    if (!outer->contains("vision_config") || !(*outer)["vision_config"].is_object()) return std::nullopt;
    ojson v = (*outer)["vision_config"];
    if (!v.contains("text_hidden_size")) v["text_hidden_size"] = config.value("hidden_size", 0);
    if (outer->contains("media_placeholder_token_id")) v["media_placeholder_token_id"] = (*outer)["media_placeholder_token_id"];
    if (auto pre = src.sideFile("preprocessor_config.json")) {
        try {
            const ojson p = ojson::parse(*pre);
            const ojson &m = p.contains("media_proc_cfg") ? p["media_proc_cfg"] : p;
            if (m.contains("image_mean")) v["image_mean"] = m["image_mean"];
            if (m.contains("image_std")) v["image_std"] = m["image_std"];
        } catch (const std::exception &e) {
            throw Error(ErrorCode::Format, "preprocessor_config.json is not valid JSON (" + std::string(e.what()) + ")");
        }
    }
    return v.dump(1);
}

class Converter {
public:
    Converter(const ModelSource &src, const std::string &out, const ConvertOptions &o, const ConvertProgressCallback &progress,
              const std::atomic<bool> *cancel)
        : m_src(src), m_out(out), m_o(o), m_progress(progress), m_cancel(cancel), m_layout(buildLayout(src)),
          m_fingerprint(fingerprintOf(src, o)), m_threads(resolveThreads(o.jobs)) {
        m_budget.failAfter = o.failAfterBytes;
    }

    ConvertPlan plan(ResumeState *stateOut, std::vector<UnitPlan> *plansOut);
    ConvertResult run(bool allowReclaim);

private:
    void emit(ConvertProgress::Phase phase, int unit, const std::string &tensor);
    void checkCancel(int unit);
    void convertTrunkTensor(const TrunkPlan &p, int unit, OutputFile &trunk, ResumeState &st);
    void convertExperts(const Unit &u, const UnitPlan &p, int unitIndex, OutputFile &codebooks);
    void finish(ResumeState &st);
    void reclaimShards(int unitsDone, ResumeState &st, int *count);

    const ModelSource &m_src;
    std::string m_out;
    ConvertOptions m_o;
    ConvertProgressCallback m_progress;
    const std::atomic<bool> *m_cancel;
    Layout m_layout;
    std::string m_fingerprint;
    int m_threads;
    OutputBudget m_budget;
    ConvertProgress m_event;
    std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
};

void Converter::emit(ConvertProgress::Phase phase, int unit, const std::string &tensor) {
    if (!m_progress) return;
    m_event.phase = phase;
    m_event.unit = unit;
    m_event.units = static_cast<int>(m_layout.units.size());
    m_event.layer = unit > 0 ? unit - 1 : -1;
    m_event.tensor = tensor;
    m_event.outputBytes = m_budget.written;
    m_event.elapsedSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    const double rate = m_event.elapsedSeconds > 0 ? static_cast<double>(m_event.sourceBytesDone) / m_event.elapsedSeconds : 0;
    m_event.etaSeconds = (rate > 0 && m_event.sourceBytesDone > 0)
                             ? static_cast<double>(m_event.sourceBytesTotal - m_event.sourceBytesDone) / rate
                             : -1.0;
    m_progress(m_event);
}

void Converter::checkCancel(int unit) {
    if (m_cancel && m_cancel->load(std::memory_order_relaxed))
        throw Error(ErrorCode::Cancelled, "conversion cancelled in " +
                                              (unit == 0 ? std::string("the embeddings/head unit") : "layer " + std::to_string(unit - 1)) +
                                              "; run the same command again to resume");
}

ConvertPlan Converter::plan(ResumeState *stateOut, std::vector<UnitPlan> *plansOut) {
    ConvertPlan plan;
    plan.arch = m_layout.arch;
    plan.layers = m_layout.layers;
    plan.moeLayers = m_layout.moeLayers;
    plan.experts = m_layout.experts;
    plan.sourceBytes = m_src.totalBytes();
    plan.unitsTotal = static_cast<int>(m_layout.units.size());
    plan.freeBytes = freeBytes(fileExists(m_out) ? m_out : std::filesystem::path(m_out).parent_path().string().empty()
                                                               ? std::string(".")
                                                               : std::filesystem::path(m_out).parent_path().string());
    // A finished container from the same source and options?
    const std::string mp = joinPath(m_out, "manifest.json");
    if (fileExists(mp) && !fileExists(joinPath(m_out, kJournal))) {
        ojson m;
        try {
            m = ojson::parse(readWholeFile(mp));
        } catch (...) {
        }
        if (m.is_object() && m.contains("converter") && m["converter"].value("fingerprint", std::string()) == m_fingerprint) {
            plan.alreadyComplete = true;
            plan.unitsDone = plan.unitsTotal;
            return plan;
        }
        throw Error(ErrorCode::Argument, m_out + " already holds a container made from another source or with other options; "
                                                 "choose an empty folder or delete it");
    }
    ResumeState st = loadResume(m_out, m_fingerprint, m_layout);
    plan.unitsDone = st.unitsDone;
    int64_t doneBytes = st.ends.empty() ? 0 : st.ends.back().trunk + st.ends.back().codebooks;
    for (auto it = st.layers.begin(); it != st.layers.end(); ++it) doneBytes += it.value().value("bytes", int64_t(0));
    int64_t remaining = 0;
    std::vector<UnitPlan> plans(m_layout.units.size());
    for (size_t u = static_cast<size_t>(st.unitsDone); u < m_layout.units.size(); ++u) {
        plans[u] = planUnit(m_src, m_layout.units[u], m_o);
        remaining += plans[u].outputBytes;
        if (plans[u].recordBytes) plan.recordBytes = plans[u].recordBytes;
    }
    plan.remainingOutputBytes = remaining;
    plan.outputBytes = doneBytes + remaining;
    if (stateOut) *stateOut = std::move(st);
    if (plansOut) *plansOut = std::move(plans);
    return plan;
}

void Converter::convertTrunkTensor(const TrunkPlan &p, int unit, OutputFile &trunk, ResumeState &st) {
    const SourceTensor t = m_src.info(p.name);
    ojson entry;
    entry["name"] = p.name;
    entry["fmt"] = static_cast<int>(p.fmt);
    entry["off"] = trunk.size();
    entry["shape"] = p.shape;
    const int64_t srcRowLen = t.rowLength();
    const int64_t total = t.elements();
    if (p.fmt == TrunkFmt::F32) {
        std::vector<float> buf(static_cast<size_t>(std::min<int64_t>(total, std::max<int64_t>(kChunkElements, srcRowLen))));
        const int64_t rowsPerChunk = std::max<int64_t>(1, static_cast<int64_t>(buf.size()) / std::max<int64_t>(1, srcRowLen));
        for (int64_t r = 0; r < t.rows(); r += rowsPerChunk) {
            const int64_t n = std::min(rowsPerChunk, t.rows() - r);
            m_src.readRows(t, r, n, buf.data());
            trunk.append(buf.data(), n * srcRowLen * 4);
        }
    } else {
        // Source rows and stored rows may differ (flattened kernels); read by stored rows,
        // which are whole multiples of source rows.
        const int64_t perStored = p.n / srcRowLen; // source rows per stored row (>= 1)
        const int64_t rowsPerChunk = std::max<int64_t>(1, kChunkElements / p.n);
        std::vector<float> buf(static_cast<size_t>(std::min(rowsPerChunk, p.rows) * p.n));
        std::vector<uint8_t> payload(static_cast<size_t>(groupedRowBytes(p.fmt, p.n) * std::min(rowsPerChunk, p.rows)));
        std::vector<uint16_t> scales(static_cast<size_t>(p.rows * groupsPerRow(p.n)));
        for (int64_t r = 0; r < p.rows; r += rowsPerChunk) {
            const int64_t n = std::min(rowsPerChunk, p.rows - r);
            m_src.readRows(t, r * perStored, n * perStored, buf.data());
            quantizeGrouped(p.fmt, buf.data(), n, p.n, payload.data(), scales.data() + r * groupsPerRow(p.n));
            trunk.append(payload.data(), n * groupedRowBytes(p.fmt, p.n));
        }
        entry["group"] = kGroup;
        entry["scale_off"] = trunk.size();
        trunk.append(scales.data(), static_cast<int64_t>(scales.size()) * 2);
    }
    entry["bytes"] = p.bytes();
    entry["unit"] = unit;
    st.trunkEntries.push_back(entry);
    m_event.sourceBytesDone += t.bytes;
    emit(ConvertProgress::Phase::Trunk, unit, p.name);
}

void Converter::convertExperts(const Unit &u, const UnitPlan &p, int unitIndex, OutputFile &codebooks) {
    const VqGeometry geom;
    const ExpertShape shape = p.expert;
    const int E = static_cast<int>(u.experts.size());
    const int64_t perExpertSource = expertSourceBytes(m_src, u);
    // 1. Codebooks for gate, up, down, fitted on vectors sampled from evenly spaced experts.
    emit(ConvertProgress::Phase::Codebooks, unitIndex, "codebooks");
    const int nSample = std::max(1, std::min(E, m_o.codebookExperts));
    std::vector<std::vector<Codebook>> books(3);
    for (int kind = 0; kind < 3; ++kind) {
        checkCancel(unitIndex);
        const int64_t rows = kind < 2 ? shape.inter : shape.hidden;
        const int64_t cols = kind < 2 ? shape.hidden : shape.inter;
        const int64_t nv = cols / geom.dim;
        const int64_t available = static_cast<int64_t>(nSample) * rows * nv;
        const int64_t want = std::min<int64_t>(available, std::max(1, m_o.codebookVectors));
        const uint64_t kindSeed = mix64(m_o.seed ^ mix64(static_cast<uint64_t>(u.layer) * 16 + static_cast<uint64_t>(kind)));
        Rng pick(kindSeed);
        std::vector<float> vectors;
        vectors.reserve(static_cast<size_t>(want * geom.dim));
        std::vector<float> w(static_cast<size_t>(rows * cols));
        int64_t seen = 0, taken = 0;
        for (int i = 0; i < nSample; ++i) {
            const int e = static_cast<int>(static_cast<int64_t>(i) * E / nSample);
            const SourceTensor t = m_src.info(u.experts[static_cast<size_t>(e)].name[kind]);
            if (t.shape != std::vector<int64_t>{rows, cols})
                throw Error(ErrorCode::Format, t.name + " has an unexpected shape");
            m_src.readRows(t, 0, rows, w.data());
            for (int64_t r = 0; r < rows; ++r) {
                const float *row = &w[static_cast<size_t>(r * cols)];
                const float scale = halfToFloat(rowScaleHalf(row, cols));
                const float inv = scale > 0 ? 1.0f / scale : 0.0f;
                for (int64_t v = 0; v < nv; ++v, ++seen) {
                    // Selection sampling: each of the `available` vectors is kept with the
                    // probability that leaves exactly `want` in the end.
                    if (static_cast<int64_t>(pick.below(static_cast<uint64_t>(available - seen))) >= want - taken) continue;
                    for (int d = 0; d < geom.dim; ++d) vectors.push_back(row[v * geom.dim + d] * inv);
                    ++taken;
                }
            }
        }
        KMeansOptions ko;
        ko.iterations = m_o.kmeansIterations;
        ko.threads = m_threads;
        ko.seed = kindSeed;
        books[static_cast<size_t>(kind)] = fitResidualCodebooks(vectors, geom, ko);
    }
    std::vector<uint8_t> cbRec(static_cast<size_t>(codebookRecordBytes(geom)));
    for (int kind = 0; kind < 3; ++kind)
        for (int s = 0; s < geom.stages; ++s) {
            writeCodebookRecord(u.codebookBase + kind * geom.stages + s, books[static_cast<size_t>(kind)][static_cast<size_t>(s)], geom, cbRec.data());
            codebooks.append(cbRec.data(), static_cast<int64_t>(cbRec.size()));
        }
    // 2. The bank: experts encoded in parallel batches, written in id order.
    const std::string bankPath = joinPath(m_out, bankName(u.layer));
    const std::string partial = bankPath + ".partial";
    {
        OutputFile bank(partial, 0, &m_budget);
        const int batch = std::max(1, m_threads);
        std::vector<std::vector<uint8_t>> recs(static_cast<size_t>(batch), std::vector<uint8_t>(static_cast<size_t>(p.recordBytes)));
        for (int e0 = 0; e0 < E; e0 += batch) {
            checkCancel(unitIndex);
            const int n = std::min(batch, E - e0);
            parallelFor(static_cast<size_t>(n), m_threads, [&](size_t i) {
                const int e = e0 + static_cast<int>(i);
                std::vector<float> m[3];
                for (int kind = 0; kind < 3; ++kind) {
                    const SourceTensor t = m_src.info(u.experts[static_cast<size_t>(e)].name[kind]);
                    const int64_t rows = kind < 2 ? shape.inter : shape.hidden;
                    const int64_t cols = kind < 2 ? shape.hidden : shape.inter;
                    if (t.shape != std::vector<int64_t>{rows, cols}) throw Error(ErrorCode::Format, t.name + " has an unexpected shape");
                    m[kind].resize(static_cast<size_t>(rows * cols));
                    m_src.readRows(t, 0, rows, m[kind].data());
                }
                buildExpertRecord(u.layer, e, u.codebookBase, shape, geom, m[0].data(), m[1].data(), m[2].data(), books, recs[i].data());
            });
            for (int i = 0; i < n; ++i) bank.append(recs[static_cast<size_t>(i)].data(), p.recordBytes);
            m_event.sourceBytesDone += perExpertSource * n;
            emit(ConvertProgress::Phase::Experts, unitIndex, "experts " + std::to_string(e0 + n) + "/" + std::to_string(E));
        }
        bank.close();
    }
    renameDurable(partial, bankPath);
}

void Converter::reclaimShards(int unitsDone, ResumeState &st, int *count) {
    // A shard may go once every tensor in it belongs to a finished unit.
    std::map<std::string, int> lastUnit;
    for (const auto &[name, unit] : m_layout.unitOf)
        for (const std::string &shard : m_src.shardsOf(name))
            lastUnit[shard] = std::max(lastUnit.count(shard) ? lastUnit[shard] : 0, unit);
    std::vector<std::string> ready;
    for (const auto &[shard, last] : lastUnit)
        if (last < unitsDone && std::find(st.reclaimed.begin(), st.reclaimed.end(), shard) == st.reclaimed.end())
            ready.push_back(shard);
    if (ready.empty()) return;
    // Ledger first, then unlink: a crash in between leaves a shard that is merely not deleted.
    for (const auto &s : ready) st.reclaimed.push_back(s);
    saveJournal(m_out, m_fingerprint, m_layout, st);
    for (const auto &s : ready) {
        if (::unlink(m_src.shardPath(s).c_str()) == 0) ++*count;
    }
}

void Converter::finish(ResumeState &st) {
    emit(ConvertProgress::Phase::Finishing, static_cast<int>(m_layout.units.size()) - 1, "manifest");
    if (auto tok = m_src.sideFile("tiktoken.model")) writeFileAtomic(joinPath(m_out, "tokenizer.model"), *tok);
    else if (auto tok2 = m_src.sideFile("tokenizer.model")) writeFileAtomic(joinPath(m_out, "tokenizer.model"), *tok2);
    const auto tokenizerConfig = m_src.sideFile("tokenizer_config.json");
    writeFileAtomic(joinPath(m_out, "specials.json"), specialsFrom(tokenizerConfig).dump(1));
    if (auto tpl = m_src.sideFile("chat_template.jinja")) {
        writeFileAtomic(joinPath(m_out, "chat_template.jinja"), *tpl);
    } else if (tokenizerConfig) {
        try {
            const auto tc = nlohmann::json::parse(*tokenizerConfig);
            if (tc.is_object() && tc.contains("chat_template") && tc["chat_template"].is_string())
                writeFileAtomic(joinPath(m_out, "chat_template.jinja"), tc["chat_template"].get<std::string>());
        } catch (const nlohmann::json::exception &) {
        }
    }
    if (auto vj = visionJsonFrom(m_src, m_layout.config)) writeFileAtomic(joinPath(m_out, "vision.json"), *vj);

    const int64_t trunkBytes = st.ends.empty() ? 0 : st.ends.back().trunk;
    const int64_t cbBytes = st.ends.empty() ? 0 : st.ends.back().codebooks;
    const auto publish = [&](const char *partial, const char *final, int64_t bytes) {
        const std::string pp = joinPath(m_out, partial), fp = joinPath(m_out, final);
        if (fileExists(pp)) {
            OutputFile f(pp, bytes, nullptr); // drop anything past the last committed unit
            f.close();
            renameDurable(pp, fp);
        }
        if (fileSize(fp) != bytes) throw Error(ErrorCode::Io, fp + " has the wrong size; delete the folder and convert again");
    };
    publish(kTrunkPartial, "trunk.bin", trunkBytes);
    publish(kCodebooksPartial, "codebooks.bin", cbBytes);

    ojson m;
    m["format_version"] = 0;
    m["arch"] = m_layout.arch;
    m["tensor_prefix"] = m_layout.prefix;
    m["config"] = m_layout.config;
    const VqGeometry geom;
    m["expert_quant"] = {{"fmt", "VQ3R"}, {"stages", geom.stages}, {"vec_dim", geom.dim}, {"entries", geom.entries},
                         {"index_block", geom.block}, {"index_bits", 8}, {"bits_per_weight", 3}};
    ojson layers = ojson::object();
    for (const auto &u : m_layout.units)
        if (!u.experts.empty()) layers[std::to_string(u.layer)] = st.layers[std::to_string(u.layer)];
    m["layers"] = layers;
    ojson trunk = ojson::array();
    for (auto e : st.trunkEntries) {
        e.erase("unit");
        trunk.push_back(e);
    }
    m["trunk"] = trunk;
    m["converter"] = {{"name", "WASTE Studio"}, {"version", kVersion}, {"fingerprint", m_fingerprint},
                      {"trunk_bits", m_o.trunkBits}, {"seed", m_o.seed}};
    writeFileAtomic(joinPath(m_out, "manifest.json"), m.dump(1));
    ::unlink(joinPath(m_out, kJournal).c_str());
    fsyncDirectory(m_out);
}

ConvertResult Converter::run(bool allowReclaim) {
    ConvertResult result;
    makeDirectories(m_out);
    DirLock lock(m_out);
    ResumeState st;
    std::vector<UnitPlan> plans;
    result.plan = plan(&st, &plans);
    if (result.plan.alreadyComplete) {
        emit(ConvertProgress::Phase::Done, result.plan.unitsTotal - 1, "already complete");
        return result;
    }
    const int64_t need = result.plan.remainingOutputBytes + (1 << 20);
    if (m_o.checkFreeSpace && result.plan.freeBytes < need)
        throw Error(ErrorCode::Io, "not enough free space in " + m_out + ": the container needs " + gib(need) + " more, " +
                                       gib(result.plan.freeBytes) + " is free; free some space or choose another folder");
    if (m_o.reclaim && !allowReclaim) throw Error(ErrorCode::Argument, "--reclaim needs a source folder of shards");
    result.unitsResumed = st.unitsDone;
    m_event.resumed = st.unitsDone > 0;
    for (size_t u = static_cast<size_t>(st.unitsDone); u < plans.size(); ++u) m_event.sourceBytesTotal += plans[u].sourceBytes;
    emit(ConvertProgress::Phase::Planning, st.unitsDone, st.unitsDone ? "resuming" : "starting");

    const UnitEnd start = st.ends.empty() ? UnitEnd{} : st.ends.back();
    // A previous run may have published trunk/codebooks already (crash while finishing).
    for (auto [partial, final] : {std::pair{kTrunkPartial, "trunk.bin"}, std::pair{kCodebooksPartial, "codebooks.bin"}}) {
        const std::string pp = joinPath(m_out, partial), fp = joinPath(m_out, final);
        if (!fileExists(pp) && fileExists(fp)) renameDurable(fp, pp);
    }
    OutputFile trunk(joinPath(m_out, kTrunkPartial), start.trunk, &m_budget);
    OutputFile codebooks(joinPath(m_out, kCodebooksPartial), start.codebooks, &m_budget);
    if (m_o.reclaim) reclaimShards(st.unitsDone, st, &result.shardsReclaimed);
    for (size_t ui = static_cast<size_t>(st.unitsDone); ui < m_layout.units.size(); ++ui) {
        const Unit &u = m_layout.units[ui];
        const int unitIndex = static_cast<int>(ui);
        try {
            for (const auto &tp : plans[ui].trunk) {
                checkCancel(unitIndex);
                convertTrunkTensor(tp, unitIndex, trunk, st);
            }
            if (!u.experts.empty()) {
                convertExperts(u, plans[ui], unitIndex, codebooks);
                st.layers[std::to_string(u.layer)] = {{"file", bankName(u.layer)},
                                                     {"experts", static_cast<int>(u.experts.size())},
                                                     {"bytes", plans[ui].recordBytes * static_cast<int64_t>(u.experts.size())},
                                                     {"codebook_base", u.codebookBase}};
            }
            trunk.sync();
            codebooks.sync();
            st.unitsDone = unitIndex + 1;
            st.ends.push_back({trunk.size(), codebooks.size()});
            saveJournal(m_out, m_fingerprint, m_layout, st);
        } catch (const Error &e) {
            if (e.code() != ErrorCode::Io) throw;
            // Drop what this unit wrote; the journal still ends at the previous unit.
            throw Error(ErrorCode::Io, std::string(e.what()) + "; " + std::to_string(st.unitsDone) + " of " +
                                           std::to_string(m_layout.units.size()) +
                                           " units are saved: free space and run the same command again to resume");
        }
        if (m_o.reclaim) reclaimShards(st.unitsDone, st, &result.shardsReclaimed);
    }
    trunk.close();
    codebooks.close();
    finish(st);
    result.sourceBytesRead = m_event.sourceBytesDone;
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    emit(ConvertProgress::Phase::Done, static_cast<int>(m_layout.units.size()) - 1, "done");
    return result;
}

} // namespace

ConvertPlan planSource(const ModelSource &src, const std::string &outDir, const ConvertOptions &options) {
    Converter c(src, outDir, options, {}, nullptr);
    return c.plan(nullptr, nullptr);
}

ConvertResult convertSource(const ModelSource &src, const std::string &outDir, const ConvertOptions &options,
                            const ConvertProgressCallback &progress, const std::atomic<bool> *cancel, bool allowReclaim) {
    if (options.trunkBits != 4 && options.trunkBits != 8)
        throw Error(ErrorCode::Argument, "--trunk-bits must be 4 or 8");
    Converter c(src, outDir, options, progress, cancel);
    return c.run(allowReclaim);
}

} // namespace waste::convert
