#include "convert/model_source.hpp"

#include "convert/file_io.hpp"
#include "convert/mxfp4.hpp"

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
    pairMxfp4();
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

void HfDirectorySource::pairMxfp4() {
    for (const auto &[name, file] : m_weightMap) {
        if (!endsWith(name, "_packed")) continue;
        const std::string base = name.substr(0, name.size() - 7);
        const std::string scale = base + "_scale";
        if (!m_weightMap.count(scale))
            throw Error(ErrorCode::Format, m_dir + ": MXFP4 tensor '" + name + "' has no '" + scale +
                                               "' beside it; the checkpoint is incomplete, re-download it");
        if (m_weightMap.count(base))
            throw Error(ErrorCode::Format, m_dir + ": '" + base + "' exists both plain and as an MXFP4 pair");
        m_mxfp4[base] = {name, scale};
    }
}

std::optional<std::string> HfDirectorySource::sideFile(const std::string &name) const {
    const std::string p = joinPath(m_dir, name);
    if (!fileExists(p)) return std::nullopt;
    return readWholeFile(p);
}

std::vector<std::string> HfDirectorySource::tensorNames() const {
    std::vector<std::string> names;
    for (const auto &[n, f] : m_weightMap) {
        if (endsWith(n, "_packed") && m_mxfp4.count(n.substr(0, n.size() - 7))) continue;
        if (endsWith(n, "_scale") && m_mxfp4.count(n.substr(0, n.size() - 6))) continue;
        names.push_back(n);
    }
    for (const auto &[n, pair] : m_mxfp4) names.push_back(n);
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
    auto pair = m_mxfp4.find(name);
    for (const std::string &n : pair == m_mxfp4.end() ? std::vector<std::string>{name}
                                                        : std::vector<std::string>{pair->second.packed, pair->second.scale}) {
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

SourceTensor HfDirectorySource::info(const std::string &name) const {
    SourceTensor s;
    s.name = name;
    auto pair = m_mxfp4.find(name);
    if (pair == m_mxfp4.end()) {
        const TensorInfo &t = stored(name);
        s.dtype = t.dtype;
        s.shape = t.shape;
        s.bytes = t.bytes;
        return s;
    }
    const TensorInfo &p = stored(pair->second.packed), &sc = stored(pair->second.scale);
    if (p.dtype != DType::U8 || sc.dtype != DType::U8)
        throw Error(ErrorCode::Format, m_dir + ": MXFP4 tensors '" + p.name + "' and '" + sc.name + "' must be U8, not " +
                                           p.dtypeText + " and " + sc.dtypeText);
    if (p.shape.size() != 2 || sc.shape.size() != 2 || p.shape[0] != sc.shape[0] ||
        sc.shape[1] != (2 * p.shape[1] + int64_t(kMxfp4Block) - 1) / int64_t(kMxfp4Block))
        throw Error(ErrorCode::Format, m_dir + ": MXFP4 tensor '" + name +
                                           "': the _packed and _scale shapes do not fit together (expected [rows, cols/2] and [rows, cols/32])");
    s.dtype = DType::MXFP4;
    s.shape = {p.shape[0], 2 * p.shape[1]};
    s.bytes = p.bytes + sc.bytes;
    return s;
}

void HfDirectorySource::readRows(const SourceTensor &t, int64_t row0, int64_t rows, float *out) const {
    auto pair = m_mxfp4.find(t.name);
    if (pair == m_mxfp4.end()) {
        const TensorInfo &ti = stored(t.name);
        shard(m_weightMap.at(t.name)).readElements(ti, row0 * t.rowLength(), rows * t.rowLength(), out);
        return;
    }
    // Decoded exactly (every E2M1 value times a power of two is an f32) before anything
    // re-quantizes it.
    const TensorInfo &p = stored(pair->second.packed), &sc = stored(pair->second.scale);
    const int64_t pRow = p.shape[1], sRow = sc.shape[1];
    std::vector<uint8_t> packed(static_cast<size_t>(rows * pRow)), scales(static_cast<size_t>(rows * sRow));
    shard(m_weightMap.at(p.name)).readBytes(p, row0 * pRow, rows * pRow, packed.data());
    shard(m_weightMap.at(sc.name)).readBytes(sc, row0 * sRow, rows * sRow, scales.data());
    decodeMxfp4Matrix(packed.data(), scales.data(), static_cast<size_t>(rows), static_cast<size_t>(t.rowLength()), out, t.name);
}

} // namespace waste::convert
