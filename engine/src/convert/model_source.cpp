#include "convert/model_source.hpp"

#include "convert/file_io.hpp"

#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

namespace waste::convert {

namespace {

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

std::optional<std::string> HfDirectorySource::sideFile(const std::string &name) const {
    const std::string p = joinPath(m_dir, name);
    if (!fileExists(p)) return std::nullopt;
    return readWholeFile(p);
}

std::vector<std::string> HfDirectorySource::tensorNames() const {
    std::vector<std::string> names;
    for (const auto &[n, f] : m_weightMap) names.push_back(n);
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

std::string HfDirectorySource::shardOf(const std::string &name) const {
    auto it = m_weightMap.find(name);
    return it == m_weightMap.end() ? std::string() : it->second;
}

std::string HfDirectorySource::shardPath(const std::string &shardName) const { return joinPath(m_dir, shardName); }

SourceTensor HfDirectorySource::info(const std::string &name) const {
    const std::string file = shardOf(name);
    if (file.empty()) throw Error(ErrorCode::Format, m_dir + ": no tensor named '" + name + "'");
    const SafetensorsFile &sf = shard(file);
    const TensorInfo *t = sf.find(name);
    if (!t) throw Error(ErrorCode::Format, sf.path() + ": the index says it holds '" + name + "' but it does not");
    SourceTensor s;
    s.name = name;
    s.dtype = t->dtype;
    s.shape = t->shape;
    s.bytes = t->bytes;
    return s;
}

void HfDirectorySource::readRows(const SourceTensor &t, int64_t row0, int64_t rows, float *out) const {
    const SafetensorsFile &sf = shard(shardOf(t.name));
    const TensorInfo *ti = sf.find(t.name);
    if (!ti) throw Error(ErrorCode::Format, sf.path() + ": tensor '" + t.name + "' vanished");
    sf.readElements(*ti, row0 * t.rowLength(), rows * t.rowLength(), out);
}

} // namespace waste::convert
