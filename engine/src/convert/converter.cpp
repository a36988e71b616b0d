#include "convert/converter.hpp"

#include "convert/background_task.hpp"
#include "convert/container_manifest.hpp"
#include "convert/dir_lock.hpp"
#include "convert/expert_encoder.hpp"
#include "convert/file_io.hpp"
#include "convert/fused_experts_source.hpp"
#include "convert/language_model_source.hpp"
#include "convert/grouped_quant.hpp"
#include "convert/hf_names.hpp"
#include "convert/bank_writer.hpp"
#include "convert/native_experts.hpp"
#include "convert/output_file.hpp"
#include "convert/parallel.hpp"
#include "convert/random.hpp"
#include "convert/resume_journal.hpp"
#include "convert/side_files.hpp"
#include "convert/unit_plan.hpp"
#include "convert/vq.hpp"
#include "format/codebooks.hpp"
#include "format/f16.hpp"
#include "format/manifest_writer.hpp"

#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <unistd.h>

namespace waste::convert {

using ojson = nlohmann::ordered_json;

namespace {

constexpr int64_t kChunkElements = 1 << 22;
constexpr int64_t kMinCodebookSample = 65536;
constexpr int kRepackReaders = 8; // reads in flight during a native repack

std::string gib(int64_t b) {
    char buf[32];
    if (b >= (1ll << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (1ll << 30));
    else std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1 << 20));
    return buf;
}

class Converter {
public:
    Converter(const ModelSource &src, const std::string &out, const ConvertOptions &o, const ConvertProgressCallback &progress,
              const std::atomic<bool> *cancel)
        : m_src(src), m_out(out), m_o(o), m_progress(progress), m_cancel(cancel), m_layout(buildLayout(src)),
          m_experts(chooseExperts(src, m_layout, o.experts)),
          m_fingerprint(fingerprintOf(src, o, m_experts.native() ? m_experts.name() + (m_experts.encode ? "/q4" : "") : "")),
          m_threads(resolveThreads(o.jobs)) {
        m_budget.failAfter = o.failAfterBytes;
    }

    ConvertPlan plan(ResumeState *stateOut, std::vector<UnitPlan> *plansOut);
    ConvertResult run(bool allowReclaim);

private:
    void emit(ConvertProgress::Phase phase, int unit, const std::string &tensor);
    void checkCancel(int unit);
    void convertTrunkTensor(const TrunkPlan &p, int unit, OutputFile &trunk, ResumeState &st);
    void convertExperts(const Unit &u, const UnitPlan &p, int unitIndex, OutputFile &codebooks);
    void convertNativeExperts(const Unit &u, const UnitPlan &p, int unitIndex);
    void writeBank(const Unit &u, const UnitPlan &p, int unitIndex, const std::function<void(int, int, uint8_t *)> &buildBatch);
    void finish(ResumeState &st);
    // A bank whose records are all written, closed (fsync) and renamed by the unit's commit.
    struct PendingBank {
        std::unique_ptr<OutputFile> file;
        std::string partial, path;
    };
    void reclaimShards(int unitsDone, ResumeState &st, int *count);

    const ModelSource &m_src;
    std::string m_out;
    ConvertOptions m_o;
    ConvertProgressCallback m_progress;
    const std::atomic<bool> *m_cancel;
    Layout m_layout;
    ExpertChoice m_experts; // VQ3R or a native record format
    std::string m_fingerprint;
    int m_threads;
    OutputBudget m_budget;
    BankBuffers m_bankBuffers; // reused by every bank
    // Kept from tensor to tensor and expert to expert: fresh buffers cost a zero fill and a
    // page fault per 4 KiB each time, a tenth of a VQ3R conversion's CPU time.
    struct ExpertScratch {
        std::vector<float> m[3]; // gate, up, down as f32
        VqScratch vq;
    };
    std::vector<ExpertScratch> m_expertScratch{size_t(m_threads)}; // one per worker
    std::vector<float> m_trunkRows;
    std::vector<uint8_t> m_trunkPayload;
    std::shared_ptr<PendingBank> m_pendingBank; // the current unit's bank, until its commit
    SpanReader m_spanReader{{.threads = kRepackReaders}}; // a repack's reads, its staging reused by every batch
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
    plan.note = m_layout.note;
    plan.layers = m_layout.layers;
    plan.moeLayers = m_layout.moeLayers;
    plan.experts = m_layout.experts;
    plan.sourceBytes = m_src.totalBytes();
    plan.unitsTotal = static_cast<int>(m_layout.units.size());
    if (m_layout.moeLayers > 0) plan.expertFormat = m_experts.name();
    plan.freeBytes = freeBytes(fileExists(m_out) ? m_out : std::filesystem::path(m_out).parent_path().string().empty()
                                                               ? std::string(".")
                                                               : std::filesystem::path(m_out).parent_path().string());
    // A finished container from the same source and options?
    const std::string mp = joinPath(m_out, "manifest.json");
    if (fileExists(mp) && !fileExists(joinPath(m_out, kJournal))) {
        if (manifestFingerprint(m_out) == m_fingerprint) {
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
        plans[u] = planUnit(m_src, m_layout.units[u], m_o, m_experts);
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
    format::TrunkEntryOut entry;
    entry.name = p.name;
    entry.format = p.fmt;
    entry.off = trunk.size();
    entry.shape = p.shape;
    const int64_t srcRowLen = t.rowLength();
    const int64_t total = t.elements();
    if (p.fmt == format::TrunkFormat::F32) {
        std::vector<float> buf(static_cast<size_t>(std::min<int64_t>(total, std::max<int64_t>(kChunkElements, srcRowLen))));
        const int64_t rowsPerChunk = std::max<int64_t>(1, static_cast<int64_t>(buf.size()) / std::max<int64_t>(1, srcRowLen));
        for (int64_t r = 0; r < t.rows(); r += rowsPerChunk) {
            const int64_t n = std::min(rowsPerChunk, t.rows() - r);
            m_src.readRows(t, r, n, buf.data());
            trunk.append(buf.data(), n * srcRowLen * 4);
        }
    } else if (!format::isGrouped(p.fmt)) {
        // F16/BF16 at --trunk-bits 16: the source's own precision, so rounding the decoded
        // f32 back gives the stored bits exactly.
        std::vector<float> buf(static_cast<size_t>(std::min<int64_t>(total, std::max<int64_t>(kChunkElements, srcRowLen))));
        std::vector<uint16_t> half(buf.size());
        const int64_t rowsPerChunk = std::max<int64_t>(1, static_cast<int64_t>(buf.size()) / std::max<int64_t>(1, srcRowLen));
        for (int64_t r = 0; r < t.rows(); r += rowsPerChunk) {
            const int64_t n = std::min(rowsPerChunk, t.rows() - r);
            m_src.readRows(t, r, n, buf.data());
            for (int64_t i = 0; i < n * srcRowLen; ++i)
                half[static_cast<size_t>(i)] = p.fmt == format::TrunkFormat::BF16 ? format::floatToBf16(buf[static_cast<size_t>(i)])
                                                                                  : format::floatToF16(buf[static_cast<size_t>(i)]);
            trunk.append(half.data(), n * srcRowLen * 2);
        }
    } else {
        // Source rows and stored rows may differ (flattened kernels); read by stored rows,
        // which are whole multiples of source rows.
        const int64_t perStored = p.n / srcRowLen; // source rows per stored row (>= 1)
        const int64_t rowsPerChunk = std::max<int64_t>(1, kChunkElements / p.n);
        std::vector<float> &buf = m_trunkRows;
        std::vector<uint8_t> &payload = m_trunkPayload;
        buf.resize(std::max(buf.size(), static_cast<size_t>(std::min(rowsPerChunk, p.rows) * p.n)));
        payload.resize(std::max(payload.size(), static_cast<size_t>(format::trunkRowBytes(p.fmt, p.n, format::kTrunkGroup) * std::min(rowsPerChunk, p.rows))));
        std::vector<uint16_t> scales(static_cast<size_t>(p.rows * format::trunkGroups(p.n, format::kTrunkGroup)));
        const int64_t rowBytes = format::trunkRowBytes(p.fmt, p.n, format::kTrunkGroup);
        const int64_t groups = format::trunkGroups(p.n, format::kTrunkGroup);
        for (int64_t r = 0; r < p.rows; r += rowsPerChunk) {
            const int64_t n = std::min(rowsPerChunk, p.rows - r);
            // Rows are read and quantized on every worker (each row is its own bytes and
            // scales, so the result is the same whatever the split); this was serial.
            const int64_t pieceRows = std::max<int64_t>(1, (n + 4 * m_threads - 1) / (4 * m_threads));
            parallelFor(size_t((n + pieceRows - 1) / pieceRows), m_threads, [&](size_t k) {
                const int64_t a = int64_t(k) * pieceRows, m = std::min(pieceRows, n - a);
                float *rows = buf.data() + a * p.n;
                m_src.readRows(t, (r + a) * perStored, m * perStored, rows);
                quantizeGrouped(p.fmt, rows, m, p.n, payload.data() + a * rowBytes, scales.data() + (r + a) * groups);
            });
            trunk.append(payload.data(), n * rowBytes);
        }
        entry.group = format::kTrunkGroup;
        entry.scaleOff = trunk.size();
        trunk.append(scales.data(), static_cast<int64_t>(scales.size()) * 2);
    }
    entry.bytes = p.bytes();
    ojson journalEntry = format::trunkEntryJson(entry);
    journalEntry["unit"] = unit;
    st.trunkEntries.push_back(journalEntry);
    m_event.sourceBytesDone += t.bytes;
    emit(ConvertProgress::Phase::Trunk, unit, p.name);
}

void Converter::convertExperts(const Unit &u, const UnitPlan &p, int unitIndex, OutputFile &codebooks) {
    if (m_experts.native()) {
        convertNativeExperts(u, p, unitIndex);
        return;
    }
    const VqGeometry geom;
    const ExpertShape shape = p.expert;
    const int E = static_cast<int>(u.experts.size());
    // 1. Codebooks for gate, up, down, fitted on vectors sampled from evenly spaced experts.
    emit(ConvertProgress::Phase::Codebooks, unitIndex, "codebooks");
    const int nSample = std::max(1, std::min(E, m_o.codebookExperts));
    // The three kinds' samples are drawn at once, one worker each (each has its own seeded
    // picks, so the vectors do not depend on the split); each fit then uses every worker.
    std::vector<std::vector<float>> samples(3);
    std::vector<uint64_t> seeds(3);
    checkCancel(unitIndex);
    parallelFor(3, m_threads, [&](size_t k) {
        const int kind = int(k);
        const int64_t rows = kind < 2 ? shape.inter : shape.hidden;
        const int64_t cols = kind < 2 ? shape.hidden : shape.inter;
        const int64_t nv = cols / geom.dim;
        const int64_t available = static_cast<int64_t>(nSample) * rows * nv;
        // k-means is fitted on a sample: a quarter of the layer's vectors of this kind,
        // at least 65536 (256 per entry) and at most codebookVectors. On a small layer its
        // passes then cost about 1.5 times the layer's encoding (they cost 10 times when
        // the sample was the whole layer); on a large one the cap keeps them far below.
        const int64_t layerVectors = static_cast<int64_t>(E) * rows * nv;
        const int64_t want = std::min<int64_t>({available, std::max(1, m_o.codebookVectors), std::max<int64_t>(kMinCodebookSample, layerVectors / 4)});
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
                const float scale = format::f16ToFloat(rowScaleHalf(row, cols));
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
        samples[k] = std::move(vectors);
        seeds[k] = kindSeed;
    });
    std::vector<std::vector<Codebook>> books(3);
    for (size_t kind = 0; kind < 3; ++kind) {
        checkCancel(unitIndex);
        KMeansOptions ko;
        ko.iterations = m_o.kmeansIterations;
        ko.threads = m_threads;
        ko.seed = seeds[kind];
        books[kind] = fitResidualCodebooks(samples[kind], geom, ko);
        samples[kind] = {};
    }
    std::vector<uint8_t> cbRec(static_cast<size_t>(format::codebookRecordBytes(geom.entries, geom.dim)));
    for (int kind = 0; kind < 3; ++kind)
        for (int s = 0; s < geom.stages; ++s) {
            writeCodebookRecord(u.codebookBase + kind * geom.stages + s, books[static_cast<size_t>(kind)][static_cast<size_t>(s)], geom, cbRec.data());
            codebooks.append(cbRec.data(), static_cast<int64_t>(cbRec.size()));
        }
    // 2. The bank: experts encoded in parallel batches, written in id order.
    writeBank(u, p, unitIndex, [&](int e0, int n, uint8_t *records) {
        parallelForWorkers(size_t(n), m_threads, [&](size_t i, int worker) {
            const int e = e0 + int(i);
            ExpertScratch &scratch = m_expertScratch[size_t(worker)];
            std::vector<float> *m = scratch.m;
            for (int kind = 0; kind < 3; ++kind) {
                const SourceTensor t = m_src.info(u.experts[static_cast<size_t>(e)].name[kind]);
                const int64_t rows = kind < 2 ? shape.inter : shape.hidden;
                const int64_t cols = kind < 2 ? shape.hidden : shape.inter;
                if (t.shape != std::vector<int64_t>{rows, cols}) throw Error(ErrorCode::Format, t.name + " has an unexpected shape");
                if (m[kind].size() < static_cast<size_t>(rows * cols)) m[kind].resize(static_cast<size_t>(rows * cols));
                m_src.readRows(t, 0, rows, m[kind].data());
            }
            buildExpertRecord(u.layer, e, u.codebookBase, shape, geom, m[0].data(), m[1].data(), m[2].data(), books,
                              records + int64_t(i) * p.recordBytes, &scratch.vq);
        });
    });
}

// Native records: each expert's tensors copied (or, for q4, encoded) into its record, like
// the VQ bank above but with no codebooks. A repack reads a whole batch's bytes at once
// where the source says where they lie; otherwise, and for q4, record by record (a repack
// with more workers than jobs, to keep more reads in flight: its CPU work is small).
void Converter::convertNativeExperts(const Unit &u, const UnitPlan &p, int unitIndex) {
    const bool repack = !m_experts.encode;
    writeBank(u, p, unitIndex, [&](int e0, int n, uint8_t *records) {
        if (repack && repackNativeBatch(m_src, u.experts, m_experts, p.expert, u.layer, e0, n, records, m_spanReader, m_threads)) return;
        parallelFor(size_t(n), repack ? std::max(m_threads, kRepackReaders) : m_threads, [&](size_t i) {
            buildNativeRecord(m_src, u.experts[size_t(e0) + i], m_experts, p.expert, u.layer, e0 + int(i), records + int64_t(i) * p.recordBytes);
        });
    });
}

// A unit's bank: records built on the worker threads and written in id order, the write of
// one batch overlapping the building of the next (bank_writer.hpp); progress and cancel
// between batches. The bank appears under its name only once complete and durable: the
// unit's commit closes and renames it (run()).
void Converter::writeBank(const Unit &u, const UnitPlan &p, int unitIndex, const std::function<void(int, int, uint8_t *)> &buildBatch) {
    const int E = static_cast<int>(u.experts.size());
    const int64_t perExpertSource = expertSourceBytes(m_src, u);
    const std::string bankPath = joinPath(m_out, format::bankFileName(u.layer));
    const std::string partial = bankPath + ".partial";
    auto bankFile = std::make_unique<OutputFile>(partial, 0, &m_budget, true);
    OutputFile &bank = *bankFile;
    {
        int reported = 0;
        checkCancel(unitIndex);
        // A repack's batches are smaller: each buffer's first touch costs a page fault per 4 KiB
        // (10 ms per MiB in this VM), and its reads and writes run at the disk's rate anyway.
        const bool repack = m_experts.native() && !m_experts.encode;
        writeBankBatches(bank, {E, p.recordBytes, m_threads, int64_t(repack ? 16 : 32) << 20}, m_bankBuffers, buildBatch, [&](int built) {
            m_event.sourceBytesDone += perExpertSource * (built - reported);
            reported = built;
            emit(ConvertProgress::Phase::Experts, unitIndex, "experts " + std::to_string(built) + "/" + std::to_string(E));
            checkCancel(unitIndex);
        });
    }
    m_pendingBank = std::make_shared<PendingBank>(PendingBank{std::move(bankFile), partial, bankPath});
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
    writeSideFiles(m_src, m_out, m_layout.config);

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
    if (m_experts.native()) // no codebooks.bin: the reference engine's loader then refuses the container
        ::unlink(joinPath(m_out, kCodebooksPartial).c_str());
    else
        publish(kCodebooksPartial, "codebooks.bin", cbBytes);

    writeManifest(m_out, m_layout, st, m_o, m_experts, m_fingerprint);
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
    // Each unit is made durable (bank closed and renamed, trunk and codebooks synced, then
    // the journal) on `commit` while the next unit converts; a crash before its journal is
    // written only means the unit is converted again on resume.
    std::atomic<int> durableUnits{st.unitsDone};
    BackgroundTask commit; // after trunk and codebooks: it uses them, so it must end first
    const auto unitsSaved = [&] {
        try {
            commit.wait();
        } catch (const std::exception &) { // the unit's own error is the one to report
        }
        return durableUnits.load();
    };
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
                format::BankEntry bank;
                bank.layer = u.layer;
                bank.file = format::bankFileName(u.layer);
                bank.experts = static_cast<int>(u.experts.size());
                bank.bytes = plans[ui].recordBytes * static_cast<int64_t>(u.experts.size());
                bank.codebookBase = m_experts.native() ? 0 : u.codebookBase;
                st.layers[std::to_string(u.layer)] = format::bankEntryJson(bank);
            }
            st.unitsDone = unitIndex + 1;
            st.ends.push_back({trunk.size(), codebooks.size()});
            commit.start([this, &trunk, &codebooks, &durableUnits, bank = std::move(m_pendingBank), snapshot = st] {
                if (bank) {
                    bank->file->close();
                    renameDurable(bank->partial, bank->path);
                }
                trunk.sync();
                codebooks.sync();
                saveJournal(m_out, m_fingerprint, m_layout, snapshot);
                durableUnits = snapshot.unitsDone;
            });
            if (m_o.reclaim) commit.wait(); // shards go only once the journal says their units are done
        } catch (const Error &e) {
            if (e.code() != ErrorCode::Io) throw;
            // Drop what this unit wrote; the journal still ends at the last unit committed.
            throw Error(ErrorCode::Io, std::string(e.what()) + "; " + std::to_string(unitsSaved()) + " of " +
                                           std::to_string(m_layout.units.size()) +
                                           " units are saved: free space and run the same command again to resume");
        }
        if (m_o.reclaim) reclaimShards(st.unitsDone, st, &result.shardsReclaimed);
    }
    commit.wait();
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
    const LanguageModelSource text(src); // Qwen3.5: the text model out of the multimodal wrapper
    const FusedExpertsSource fused(text); // gpt-oss, Qwen3.5: per-expert tensors out of the fused ones
    Converter c(fused.fused() ? static_cast<const ModelSource &>(fused) : text, outDir, options, {}, nullptr);
    return c.plan(nullptr, nullptr);
}

ConvertResult convertSource(const ModelSource &src, const std::string &outDir, const ConvertOptions &options,
                            const ConvertProgressCallback &progress, const std::atomic<bool> *cancel, bool allowReclaim) {
    if (options.trunkBits != 4 && options.trunkBits != 8 && options.trunkBits != 16)
        throw Error(ErrorCode::Argument, "--trunk-bits must be 4, 8 or 16");
    const LanguageModelSource text(src);
    const FusedExpertsSource fused(text);
    Converter c(fused.fused() ? static_cast<const ModelSource &>(fused) : text, outDir, options, progress, cancel);
    return c.run(allowReclaim);
}

} // namespace waste::convert
