#include "convert/model_source.hpp"

#include "convert/file_io.hpp"
#include "convert/fp8_blocks.hpp"
#include "convert/int4_groups.hpp"
#include "convert/mxfp4.hpp"
#include "convert/scaled_layouts.hpp"
#include "format/bytes.hpp"
#include "format/native_record.hpp"
#include "format/release_config.hpp"

#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

namespace waste::convert {

namespace {

bool endsWith(const std::string &s, const std::string &suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool safeShardName(const std::string &s) {
    return !s.empty() && s.find('/') == std::string::npos && s.find('\\') == std::string::npos && s != "." &&
           s != ".." && s.size() > 12 && s.compare(s.size() - 12, 12, ".safetensors") == 0;
}

} // namespace

std::string sourceIdentity(const std::string &config, int64_t tensorBytes, const std::vector<std::string> &names) {
    std::string id = "config:" + config + "\nbytes:" + std::to_string(tensorBytes) + "\n";
    for (const auto &n : names) id += n + "\n";
    return id;
}

HfDirectorySource::HfDirectorySource(const std::string &dir) : m_dir(dir) {
    const std::string configPath = joinPath(dir, "config.json");
    if (!fileExists(configPath))
        throw Error(ErrorCode::Argument, dir + " has no config.json: point the converter at a Hugging Face model folder");
    m_config = readWholeFile(configPath);
    if (const auto c = nlohmann::json::parse(m_config, nullptr, false); c.is_object()) {
        const format::ReleaseQuant q = format::readReleaseQuant(c);
        m_fp8BlockRows = q.fp8BlockRows;
        m_fp8BlockCols = q.fp8BlockCols;
        m_int4Group = q.int4Group;
    }
    const std::string indexPath = joinPath(dir, "model.safetensors.index.json");
    if (fileExists(indexPath)) {
        const std::string text = readWholeFile(indexPath);
        nlohmann::json index;
        try {
            index = nlohmann::json::parse(text);
        } catch (const std::exception &e) {
            throw Error(ErrorCode::Format, indexPath + ": invalid JSON (" + e.what() + ")");
        }
        if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
            throw Error(ErrorCode::Format, indexPath + ": no weight_map object");
        for (auto it = index["weight_map"].begin(); it != index["weight_map"].end(); ++it) {
            if (!it.value().is_string() || !safeShardName(it.value().get<std::string>()))
                throw Error(ErrorCode::Format, indexPath + ": tensor '" + it.key() + "' maps to an unsafe shard name");
            m_weightMap[it.key()] = it.value().get<std::string>();
        }
        if (index.contains("metadata") && index["metadata"].is_object() && index["metadata"].contains("total_size") &&
            index["metadata"]["total_size"].is_number_unsigned())
            m_totalBytes = index["metadata"]["total_size"].get<int64_t>();
    } else {
        std::vector<std::string> files;
        std::error_code ec;
        for (const auto &e : std::filesystem::directory_iterator(dir, ec)) {
            const std::string name = e.path().filename().string();
            if (e.is_regular_file() && safeShardName(name)) files.push_back(name);
        }
        std::sort(files.begin(), files.end());
        if (files.empty()) throw Error(ErrorCode::Argument, dir + " has no .safetensors files");
        for (const auto &f : files) {
            const SafetensorsFile &sf = shard(f);
            for (const auto &t : sf.tensors()) {
                if (m_weightMap.count(t.name))
                    throw Error(ErrorCode::Format, dir + ": tensor '" + t.name + "' appears in two shards");
                m_weightMap[t.name] = f;
                m_tensorBytes += t.bytes;
            }
        }
    }
    if (m_tensorBytes == 0) m_tensorBytes = m_totalBytes;
    groupQuantised();
    m_identity = sourceIdentity(m_config, m_tensorBytes, tensorNames());
    if (m_totalBytes == 0) {
        std::map<std::string, bool> seen;
        for (const auto &[name, file] : m_weightMap)
            if (!seen[file]) {
                seen[file] = true;
                m_totalBytes += std::max<int64_t>(0, fileSize(joinPath(dir, file)));
            }
    }
}

void ModelSource::readStoredRows(const SourceTensor &t, int64_t, int64_t, uint8_t *, uint8_t *) const {
    throw Error(ErrorCode::Unsupported, "'" + t.name + "' is " + dtypeName(t.dtype) + "; only MXFP4 tensors are read row by row as stored");
}

void HfDirectorySource::groupQuantised() {
    for (const auto &[name, file] : m_weightMap) {
        if (endsWith(name, "_blocks")) { // gpt-oss MXFP4: U8 [..., rows, cols/32, 16] and U8 [..., rows, cols/32]
            const std::string base = name.substr(0, name.size() - 7);
            if (!m_weightMap.count(base + "_scales"))
                throw Error(ErrorCode::Format, m_dir + ": MXFP4 blocks '" + name + "' have no '" + base +
                                                   "_scales' beside them; the checkpoint is incomplete, re-download it");
            m_groups[base] = {name, base + "_scales", {}, false};
            continue;
        }
        if (endsWith(name, "_packed")) { // MXFP4 (U8 words) or INT4 pack-quantized (I32 words)
            const std::string base = name.substr(0, name.size() - 7);
            const std::string scale = base + "_scale";
            if (!m_weightMap.count(scale))
                throw Error(ErrorCode::Format, m_dir + ": quantised tensor '" + name + "' has no '" + scale +
                                                   "' beside it; the checkpoint is incomplete, re-download it");
            if (m_weightMap.count(base))
                throw Error(ErrorCode::Format, m_dir + ": '" + base + "' exists both plain and packed");
            m_groups[base] = {name, scale, m_weightMap.count(base + "_shape") ? base + "_shape" : std::string(), false};
        } else if (endsWith(name, "_scale") && m_weightMap.count(name.substr(0, name.size() - 6)) &&
                   !m_weightMap.count(name.substr(0, name.size() - 6) + "_packed")) {
            // compressed-tensors' float-quantized FP8: the weight keeps its name, `_scale`
            // per tensor or per row beside it.
            const std::string base = name.substr(0, name.size() - 6);
            m_groups[base] = {base, name, {}, true};
        } else if (endsWith(name, ".scale") && m_weightMap.count(name.substr(0, name.size() - 6) + ".weight")) {
            // DeepSeek V4: `X.weight` (F8_E4M3, or I8 FP4 pairs) with F8_E8M0 `X.scale` beside it;
            // the logical tensor keeps the weight's name. Which of the two it is, info() reads
            // from the dtypes.
            const std::string base = name.substr(0, name.size() - 6) + ".weight";
            m_groups[base] = {base, name, {}, false, true};
        } else if (endsWith(name, "_scale_inv")) { // FP8 blocks: the weight keeps its own name
            const std::string base = name.substr(0, name.size() - 10);
            if (!m_weightMap.count(base))
                throw Error(ErrorCode::Format, m_dir + ": block scales '" + name + "' have no '" + base +
                                                   "' beside them; the checkpoint is incomplete, re-download it");
            m_groups[base] = {base, name, {}, true};
        }
    }
}

std::optional<std::string> HfDirectorySource::sideFile(const std::string &name) const {
    const std::string p = joinPath(m_dir, name);
    if (!fileExists(p)) return std::nullopt;
    return readWholeFile(p);
}

std::vector<std::string> HfDirectorySource::tensorNames() const {
    std::map<std::string, bool> member; // stored tensors shown only through their group
    for (const auto &[base, g] : m_groups)
        for (const std::string *n : {&g.payload, &g.scale, &g.shape})
            if (!n->empty() && *n != base) member[*n] = true;
    std::vector<std::string> names;
    for (const auto &[n, f] : m_weightMap)
        if (!member.count(n)) names.push_back(n);
    for (const auto &[n, g] : m_groups)
        if (!m_weightMap.count(n)) names.push_back(n);
    std::sort(names.begin(), names.end());
    return names;
}

const SafetensorsFile &HfDirectorySource::shard(const std::string &file) const {
    std::lock_guard lock(m_mutex);
    auto it = m_open.find(file);
    if (it != m_open.end()) return *it->second;
    const std::string p = joinPath(m_dir, file);
    if (!fileExists(p))
        throw Error(ErrorCode::Io, "source shard " + p + " is missing; restore it (it may have been deleted by --reclaim)");
    auto sf = std::make_unique<SafetensorsFile>(p);
    const SafetensorsFile &ref = *sf;
    m_open[file] = std::move(sf);
    return ref;
}

std::vector<std::string> HfDirectorySource::shardsOf(const std::string &name) const {
    std::vector<std::string> out;
    auto group = m_groups.find(name);
    std::vector<std::string> members{name};
    if (group != m_groups.end()) members = {group->second.payload, group->second.scale, group->second.shape};
    for (const std::string &n : members) {
        auto it = m_weightMap.find(n);
        if (it != m_weightMap.end() && std::find(out.begin(), out.end(), it->second) == out.end()) out.push_back(it->second);
    }
    return out;
}

const TensorInfo &HfDirectorySource::stored(const std::string &name) const {
    auto it = m_weightMap.find(name);
    if (it == m_weightMap.end()) throw Error(ErrorCode::Format, m_dir + ": no tensor named '" + name + "'");
    const SafetensorsFile &sf = shard(it->second);
    const TensorInfo *t = sf.find(name);
    if (!t) throw Error(ErrorCode::Format, sf.path() + ": the index says it holds '" + name + "' but it does not");
    return *t;
}

std::string HfDirectorySource::shardPath(const std::string &shardName) const { return joinPath(m_dir, shardName); }

void HfDirectorySource::readWhole(const std::string &name, uint8_t *out, bool uncached) const {
    const TensorInfo &t = stored(name);
    const SafetensorsFile &f = shard(m_weightMap.at(name));
    if (uncached) f.readBytesUncached(t, 0, t.bytes, out);
    else f.readBytes(t, 0, t.bytes, out);
}

SourceTensor HfDirectorySource::info(const std::string &name) const {
    SourceTensor s;
    s.name = name;
    auto group = m_groups.find(name);
    if (group == m_groups.end()) {
        const TensorInfo &t = stored(name);
        s.dtype = t.dtype;
        s.shape = t.shape;
        s.bytes = t.bytes;
        return s;
    }
    const Group &g = group->second;
    const TensorInfo &p = stored(g.payload), &sc = stored(g.scale);
    const auto bad = [&](const std::string &why) { return Error(ErrorCode::Format, m_dir + ": quantised tensor '" + name + "': " + why); };
    if (endsWith(g.payload, "_blocks")) { // gpt-oss: blocks of 32 nibble pairs, one E8M0 scale each
        const size_t d = p.shape.size();
        if (p.dtype != DType::U8 || sc.dtype != DType::U8) throw bad("MXFP4 blocks and scales must be U8");
        if (d < 3 || sc.shape.size() != d - 1 || p.shape[d - 1] != 16 ||
            !std::equal(sc.shape.begin(), sc.shape.end(), p.shape.begin()))
            throw bad("expected _blocks [..., rows, cols/32, 16] and _scales [..., rows, cols/32]");
        s.dtype = DType::MXFP4;
        s.shape.assign(p.shape.begin(), p.shape.end() - 2);
        s.shape.push_back(p.shape[d - 2] * 32);
        s.bytes = p.bytes + sc.bytes;
        return s;
    }
    if (g.dotScale && p.dtype == DType::F8E4M3) return fp8Info(name, g); // DeepSeek V4's FP8 trunk
    if (g.fp8) return fp8Info(name, g);
    if (p.shape.size() != 2 || sc.shape.size() != 2) throw bad("its tensors must be 2-D");
    if (p.dtype == DType::I32) return int4Info(name, g);
    // U8 pairs (compressed-tensors), or DeepSeek V4's I8 nibbles with F8_E8M0 scales: the same bytes.
    const bool v4 = g.dotScale && p.dtype == DType::I8 && sc.dtype == DType::F8E8M0;
    if (!v4 && (p.dtype != DType::U8 || sc.dtype != DType::U8))
        throw Error(ErrorCode::Format, m_dir + ": MXFP4 tensors '" + p.name + "' and '" + sc.name + "' must be U8 (or I8 and F8_E8M0), not " +
                                           p.dtypeText + " and " + sc.dtypeText);
    if (p.shape[0] != sc.shape[0] || sc.shape[1] != (2 * p.shape[1] + int64_t(kMxfp4Block) - 1) / int64_t(kMxfp4Block))
        throw Error(ErrorCode::Format, m_dir + ": MXFP4 tensor '" + name +
                                           "': the _packed and _scale shapes do not fit together (expected [rows, cols/2] and [rows, cols/32])");
    s.dtype = DType::MXFP4;
    s.shape = {p.shape[0], 2 * p.shape[1]};
    s.bytes = p.bytes + sc.bytes;
    return s;
}

SourceTensor HfDirectorySource::fp8Info(const std::string &name, const Group &g) const {
    const TensorInfo &p = stored(g.payload), &sc = stored(g.scale);
    const auto bad = [&](const std::string &why) { return Error(ErrorCode::Format, m_dir + ": FP8 tensor '" + name + "': " + why); };
    if (p.dtype != DType::F8E4M3 || p.shape.size() != 2)
        throw bad("'" + g.payload + "' must be a 2-D F8_E4M3 weight beside its scales '" + g.scale + "', not " + p.dtypeText);
    if (sc.dtype != DType::F32 && sc.dtype != DType::BF16 && sc.dtype != DType::F16 && sc.dtype != DType::F8E8M0)
        throw bad("its scales must be F32, BF16, F16 or F8_E8M0, not " + sc.dtypeText);
    SourceTensor s;
    s.name = name;
    s.shape = p.shape;
    s.bytes = p.bytes + sc.bytes;
    const int64_t rows = p.shape[0], cols = p.shape[1], B = format::kFp8Block;
    const int64_t n = sc.elements();
    const int64_t sr = sc.shape.size() == 2 ? sc.shape[0] : 1, scn = sc.shape.size() == 2 ? sc.shape[1] : 1;
    const auto fits = [&](int64_t br, int64_t bc) { return br > 0 && bc > 0 && blocksAlong(rows, br) == sr && blocksAlong(cols, bc) == scn; };
    if (n == 1 && sc.shape.size() <= 2) { // per tensor ([], [1] or [1, 1])
        s.blockRows = rows;
        s.blockCols = cols;
    } else if (sc.shape.size() != 2) {
        throw bad("its scales must be one per tensor, [rows, 1] or a 2-D grid of blocks");
    } else if (fits(m_fp8BlockRows, m_fp8BlockCols)) { // the config's weight_block_size
        s.blockRows = m_fp8BlockRows;
        s.blockCols = m_fp8BlockCols;
    } else if (fits(B, B)) {
        s.blockRows = s.blockCols = B;
    } else if (rows % sr == 0 && cols % scn == 0) { // the grid divides the matrix evenly
        s.blockRows = rows / sr;
        s.blockCols = cols / scn;
    } else {
        throw Error(ErrorCode::Unsupported, m_dir + ": the block size of FP8 tensor '" + name + "' cannot be told from its " +
                                                std::to_string(sr) + "x" + std::to_string(scn) +
                                                " scales, and config.json's quantization_config has no weight_block_size that fits");
    }
    // DeepSeek's own layout, whose bytes a FP8B128 record copies: f32 per 128x128 block.
    const bool same128 = (s.blockRows == B || (s.blockRows >= rows && rows <= B)) && (s.blockCols == B || (s.blockCols >= cols && cols <= B));
    s.dtype = sc.dtype == DType::F32 && sc.shape.size() == 2 && same128 ? DType::FP8B128 : DType::FP8Scaled;
    if (s.dtype == DType::FP8B128) s.blockRows = s.blockCols = 0;
    return s;
}

SourceTensor HfDirectorySource::int4Info(const std::string &name, const Group &g) const {
    const TensorInfo &p = stored(g.payload), &sc = stored(g.scale);
    const auto bad = [&](const std::string &why) { return Error(ErrorCode::Format, m_dir + ": quantised tensor '" + name + "': " + why); };
    if (sc.dtype != DType::BF16) throw bad("INT4 group scales must be BF16, not " + sc.dtypeText);
    if (m_weightMap.count(name + "_zero_point")) // asymmetric: read without its zero points it would decode wrongly
        throw Error(ErrorCode::Unsupported, m_dir + ": '" + name + "' is asymmetric INT4 (it has '" + name +
                                                "_zero_point'); only symmetric pack-quantized releases are supported");
    SourceTensor s;
    s.name = name;
    const int64_t rows = p.shape[0], cols = 8 * p.shape[1];
    s.bytes = p.bytes + sc.bytes;
    if (!g.shape.empty()) {
        const TensorInfo &sh = stored(g.shape);
        if ((sh.dtype != DType::I64 && sh.dtype != DType::I32) || sh.elements() != 2) throw bad("'" + g.shape + "' must be 2 integers");
        uint8_t raw[16] = {};
        readWhole(g.shape, raw);
        const auto dim = [&](int i) -> int64_t {
            if (sh.dtype == DType::I32) return int32_t(format::loadU32(raw + 4 * i));
            return int64_t(uint64_t(format::loadU32(raw + 8 * i)) | uint64_t(format::loadU32(raw + 8 * i + 4)) << 32);
        };
        const int64_t r = dim(0), c = dim(1);
        if (c == p.shape[1] && (r + 7) / 8 == rows) // eight rows to a word: not the record's order
            throw Error(ErrorCode::Unsupported, m_dir + ": '" + name + "' (" + std::to_string(r) + "x" + std::to_string(c) +
                                                    ") has its INT4 values packed down the columns (packed_dim 0); only "
                                                    "pack-quantized words along each row are supported");
        if (r != rows || c != cols)
            throw Error(ErrorCode::Unsupported, m_dir + ": '" + name + "' is " + std::to_string(r) + "x" + std::to_string(c) +
                                                    " packed into " + std::to_string(rows) + "x" + std::to_string(cols) +
                                                    "; padded INT4 rows are not supported");
        s.bytes += sh.bytes;
    }
    const int64_t groups = sc.shape[1];
    if (sc.shape[0] != rows || groups <= 0) throw bad("its scales must be [rows, groups]");
    int64_t G = 0; // inputs per scale: the config's group_size where it fits, else what the scales divide
    if (m_int4Group > 0 && blocksAlong(cols, m_int4Group) == groups) G = m_int4Group;
    else if (groups * format::kInt4Group == cols) G = format::kInt4Group;
    else if (cols % groups == 0) G = cols / groups;
    else
        throw Error(ErrorCode::Unsupported, m_dir + ": '" + name + "' has " + std::to_string(groups) + " scales per row of " +
                                                std::to_string(cols) + " and config.json names no group_size that fits");
    s.shape = {rows, cols};
    if (G == format::kInt4Group) {
        s.dtype = DType::INT4G32;
    } else {
        s.dtype = DType::INT4Grouped;
        s.blockRows = 1;
        s.blockCols = G;
    }
    return s;
}

std::vector<float> HfDirectorySource::fp8Scales(const SourceTensor &t, const Group &g) const {
    const TensorInfo &sc = stored(g.scale);
    std::vector<uint8_t> raw(static_cast<size_t>(sc.bytes));
    readWhole(sc.name, raw.data());
    std::vector<float> out(static_cast<size_t>(sc.elements()));
    scalesToF32(sc.dtype, raw.data(), sc.elements(), out.data());
    if (int64_t(out.size()) != blocksAlong(t.rows(), t.blockRows) * blocksAlong(t.rowLength(), t.blockCols))
        throw Error(ErrorCode::Format, m_dir + ": '" + sc.name + "' does not hold one scale per block of '" + t.name + "'");
    return out;
}

void HfDirectorySource::readRows(const SourceTensor &t, int64_t row0, int64_t rows, float *out) const {
    auto group = m_groups.find(t.name);
    if (group == m_groups.end()) {
        const TensorInfo &ti = stored(t.name);
        shard(m_weightMap.at(t.name)).readElements(ti, row0 * t.rowLength(), rows * t.rowLength(), out);
        return;
    }
    const Group &g = group->second;
    const TensorInfo &p = stored(g.payload), &sc = stored(g.scale);
    const int64_t cols = t.rowLength();
    if (t.dtype == DType::FP8Scaled) {
        std::vector<uint8_t> q(static_cast<size_t>(rows * cols));
        shard(m_weightMap.at(p.name)).readBytes(p, row0 * cols, rows * cols, q.data());
        decodeFp8ScaledRows(t, q.data(), fp8Scales(t, g).data(), row0, rows, out);
        return;
    }
    if (t.dtype == DType::INT4Grouped) {
        const int64_t pRow = cols / 2, sRow = blocksAlong(cols, t.blockCols) * 2;
        std::vector<uint8_t> packed(static_cast<size_t>(rows * pRow)), scales(static_cast<size_t>(rows * sRow));
        shard(m_weightMap.at(p.name)).readBytes(p, row0 * pRow, rows * pRow, packed.data());
        shard(m_weightMap.at(sc.name)).readBytes(sc, row0 * sRow, rows * sRow, scales.data());
        for (int64_t r = 0; r < rows; ++r)
            decodeInt4GroupedRow(packed.data() + r * pRow, scales.data() + r * sRow, cols, t.blockCols, out + r * cols);
        return;
    }
    if (t.dtype == DType::FP8B128) {
        std::vector<uint8_t> q(static_cast<size_t>(rows * cols)), scales(static_cast<size_t>(sc.bytes));
        shard(m_weightMap.at(p.name)).readBytes(p, row0 * cols, rows * cols, q.data());
        readWhole(sc.name, scales.data());
        decodeFp8Rows(q.data(), scales.data(), cols, row0, rows, out);
        return;
    }
    if (t.dtype == DType::INT4G32) {
        const int64_t pRow = cols / 2, sRow = cols / format::kInt4Group * 2;
        std::vector<uint8_t> packed(static_cast<size_t>(rows * pRow)), scales(static_cast<size_t>(rows * sRow));
        shard(m_weightMap.at(p.name)).readBytes(p, row0 * pRow, rows * pRow, packed.data());
        shard(m_weightMap.at(sc.name)).readBytes(sc, row0 * sRow, rows * sRow, scales.data());
        for (int64_t r = 0; r < rows; ++r) decodeInt4G32Row(packed.data() + r * pRow, scales.data() + r * sRow, cols, out + r * cols);
        return;
    }
    // MXFP4, decoded exactly (every E2M1 value times a power of two is an f32) before
    // anything re-quantizes it.
    const int64_t pRow = (cols + 1) / 2, sRow = (cols + int64_t(kMxfp4Block) - 1) / int64_t(kMxfp4Block);
    std::vector<uint8_t> packed(static_cast<size_t>(rows * pRow)), scales(static_cast<size_t>(rows * sRow));
    shard(m_weightMap.at(p.name)).readBytes(p, row0 * pRow, rows * pRow, packed.data());
    shard(m_weightMap.at(sc.name)).readBytes(sc, row0 * sRow, rows * sRow, scales.data());
    decodeMxfp4Matrix(packed.data(), scales.data(), static_cast<size_t>(rows), static_cast<size_t>(cols), out, t.name);
}

void HfDirectorySource::readStoredRows(const SourceTensor &t, int64_t row0, int64_t rows, uint8_t *payload,
                                       uint8_t *scales) const {
    auto group = m_groups.find(t.name);
    if (group == m_groups.end() || t.dtype != DType::MXFP4) ModelSource::readStoredRows(t, row0, rows, payload, scales);
    const TensorInfo &p = stored(group->second.payload), &sc = stored(group->second.scale);
    const int64_t cols = t.rowLength(), pRow = cols / 2, sRow = cols / int64_t(kMxfp4Block);
    shard(m_weightMap.at(p.name)).readBytes(p, row0 * pRow, rows * pRow, payload);
    shard(m_weightMap.at(sc.name)).readBytes(sc, row0 * sRow, rows * sRow, scales);
}

void HfDirectorySource::readStored(const SourceTensor &t, uint8_t *payload, uint8_t *scales) const {
    auto group = m_groups.find(t.name);
    if (group == m_groups.end()) {
        if (t.dtype != DType::BF16)
            throw Error(ErrorCode::Unsupported, m_dir + ": '" + t.name + "' is " + dtypeName(t.dtype) +
                                                    "; native expert records keep MXFP4, FP8 blocks, INT4 groups or BF16");
        readWhole(t.name, payload, true);
        return;
    }
    const Group &g = group->second;
    if (t.dtype == DType::FP8Scaled) { // e4m3 bytes as they are, scales repeated per 128x128 block
        fp8ScalesToBlock128(t, fp8Scales(t, g).data(), scales);
        readWhole(g.payload, payload, true);
        return;
    }
    if (t.dtype == DType::INT4Grouped) { // packed words as they are, scales repeated per 32
        const TensorInfo &sc = stored(g.scale);
        std::vector<uint8_t> raw(static_cast<size_t>(sc.bytes));
        readWhole(g.scale, raw.data());
        int4ScalesToGroup32(t, raw.data(), scales);
        readWhole(g.payload, payload, true);
        return;
    }
    readWhole(g.payload, payload, true);
    readWhole(g.scale, scales, true);
}

std::optional<ModelSource::StoredRanges> HfDirectorySource::storedRanges(const SourceTensor &t) const {
    const auto range = [&](const std::string &name) {
        const TensorInfo &ti = stored(name);
        return ByteRange{&shard(m_weightMap.at(name)).file(), ti.offset, ti.bytes, nullptr};
    };
    if (t.dtype == DType::FP8Scaled || t.dtype == DType::INT4Grouped) return std::nullopt; // re-laid, not copied
    auto group = m_groups.find(t.name);
    if (group == m_groups.end()) {
        if (t.dtype != DType::BF16) return std::nullopt; // readStored says why
        return StoredRanges{range(t.name), {}};
    }
    return StoredRanges{range(group->second.payload), range(group->second.scale)};
}

} // namespace waste::convert
