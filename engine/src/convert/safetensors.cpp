#include "convert/safetensors.hpp"

#include "format/f16.hpp"

#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <unistd.h>

namespace waste::convert {

const char *dtypeName(DType t) {
    switch (t) {
    case DType::F32: return "F32";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    case DType::U8: return "U8";
    case DType::F8E4M3: return "F8_E4M3";
    case DType::I32: return "I32";
    case DType::I64: return "I64";
    case DType::MXFP4: return "MXFP4";
    case DType::FP8B128: return "FP8B128";
    case DType::INT4G32: return "INT4G32";
    case DType::FP8Scaled: return "FP8 (scaled)";
    case DType::INT4Grouped: return "INT4 (grouped)";
    case DType::I8: return "I8";
    case DType::F8E8M0: return "F8_E8M0";
    default: return "?";
    }
}

int dtypeSize(DType t) {
    switch (t) {
    case DType::F32: return 4;
    case DType::F16:
    case DType::BF16: return 2;
    case DType::U8:
    case DType::I8:
    case DType::F8E8M0:
    case DType::F8E4M3: return 1;
    case DType::I32: return 4;
    case DType::I64: return 8;
    default: return 0;
    }
}

int64_t TensorInfo::elements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

namespace {

constexpr int64_t kMaxHeader = 100ll << 20; // safetensors' own limit
constexpr size_t kMaxDims = 8;

DType parseDtype(const std::string &s) {
    if (s == "F32") return DType::F32;
    if (s == "F16") return DType::F16;
    if (s == "BF16") return DType::BF16;
    if (s == "U8") return DType::U8;
    if (s == "F8_E4M3") return DType::F8E4M3;
    if (s == "I32") return DType::I32;
    if (s == "I64") return DType::I64;
    if (s == "I8") return DType::I8;
    if (s == "F8_E8M0") return DType::F8E8M0;
    return DType::Other;
}

int64_t otherDtypeSize(const std::string &s) {
    if (s == "F64" || s == "I64" || s == "U64") return 8;
    if (s == "I32" || s == "U32") return 4;
    if (s == "I16" || s == "U16") return 2;
    if (s == "I8" || s == "U8" || s == "BOOL" || s == "F8_E4M3" || s == "F8_E5M2" || s == "F8_E8M0") return 1;
    return 0;
}

} // namespace

SafetensorsFile::SafetensorsFile(const std::string &path) : m_file(path) {
    const auto bad = [&](const std::string &why) {
        return Error(ErrorCode::Format, path + ": not a valid safetensors file (" + why + "); re-download it");
    };
    if (m_file.size() < 8) throw bad("shorter than its 8-byte header length");
    uint8_t lenBytes[8];
    m_file.readAt(0, lenBytes, 8);
    uint64_t len = 0;
    for (int i = 7; i >= 0; --i) len = (len << 8) | lenBytes[i];
    if (len > static_cast<uint64_t>(kMaxHeader) || static_cast<int64_t>(len) > m_file.size() - 8)
        throw bad("header length " + std::to_string(len) + " exceeds the file or the 100 MB limit");
    std::string text(static_cast<size_t>(len), '\0');
    m_file.readAt(8, text.data(), static_cast<int64_t>(len));
    nlohmann::json header;
    try {
        header = nlohmann::json::parse(text);
    } catch (const std::exception &e) {
        throw bad(std::string("header JSON: ") + e.what());
    }
    if (!header.is_object()) throw bad("header is not a JSON object");
    const int64_t dataStart = 8 + static_cast<int64_t>(len);
    const int64_t dataSize = m_file.size() - dataStart;
    for (auto it = header.begin(); it != header.end(); ++it) {
        if (it.key() == "__metadata__") continue;
        const auto &v = it.value();
        if (!v.is_object() || !v.contains("dtype") || !v["dtype"].is_string() || !v.contains("shape") ||
            !v["shape"].is_array() || !v.contains("data_offsets") || !v["data_offsets"].is_array() ||
            v["data_offsets"].size() != 2)
            throw bad("entry '" + it.key() + "' lacks dtype/shape/data_offsets");
        TensorInfo t;
        t.name = it.key();
        t.dtypeText = v["dtype"].get<std::string>();
        t.dtype = parseDtype(t.dtypeText);
        if (v["shape"].size() > kMaxDims) throw bad("tensor '" + t.name + "' has too many dimensions");
        int64_t elems = 1;
        for (const auto &d : v["shape"]) {
            if (!d.is_number_unsigned()) throw bad("tensor '" + t.name + "' has a non-integer or negative dimension");
            const uint64_t dim = d.get<uint64_t>();
            if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
                (dim && elems > std::numeric_limits<int64_t>::max() / static_cast<int64_t>(dim)))
                throw bad("tensor '" + t.name + "' shape overflows");
            t.shape.push_back(static_cast<int64_t>(dim));
            elems *= static_cast<int64_t>(dim);
        }
        const auto &o = v["data_offsets"];
        if (!o[0].is_number_unsigned() || !o[1].is_number_unsigned()) throw bad("tensor '" + t.name + "' has bad data_offsets");
        const uint64_t b = o[0].get<uint64_t>(), e = o[1].get<uint64_t>();
        if (b > e || e > static_cast<uint64_t>(dataSize))
            throw bad("tensor '" + t.name + "' data_offsets [" + std::to_string(b) + ", " + std::to_string(e) +
                      "] fall outside the " + std::to_string(dataSize) + " data bytes");
        const int64_t esize = t.dtype == DType::Other ? otherDtypeSize(t.dtypeText) : dtypeSize(t.dtype);
        if (esize == 0) throw bad("tensor '" + t.name + "' has unknown dtype " + t.dtypeText);
        if (elems > std::numeric_limits<int64_t>::max() / esize || static_cast<uint64_t>(elems * esize) != e - b)
            throw bad("tensor '" + t.name + "' byte size does not match its shape and dtype");
        t.offset = dataStart + static_cast<int64_t>(b);
        t.bytes = static_cast<int64_t>(e - b);
        m_tensors.push_back(std::move(t));
    }
    // Tensors must not overlap (a hostile header could alias one buffer as two).
    std::vector<const TensorInfo *> order;
    for (const auto &t : m_tensors) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](auto *a, auto *b) { return a->offset < b->offset; });
    for (size_t i = 1; i < order.size(); ++i)
        if (order[i]->offset < order[i - 1]->offset + order[i - 1]->bytes)
            throw bad("tensors '" + order[i - 1]->name + "' and '" + order[i]->name + "' overlap");
    std::sort(m_tensors.begin(), m_tensors.end(), [](const TensorInfo &a, const TensorInfo &b) { return a.name < b.name; });
    for (size_t i = 0; i < m_tensors.size(); ++i) m_byName[m_tensors[i].name] = i;
}

const TensorInfo *SafetensorsFile::find(const std::string &name) const {
    auto it = m_byName.find(name);
    return it == m_byName.end() ? nullptr : &m_tensors[it->second];
}

void SafetensorsFile::readElements(const TensorInfo &t, int64_t first, int64_t count, float *out) const {
    const bool ints = t.dtype == DType::I64 || t.dtype == DType::I32; // index tables (DeepSeek V4's tid2eid)
    if (t.dtype != DType::F32 && t.dtype != DType::F16 && t.dtype != DType::BF16 && !ints)
        throw Error(ErrorCode::Unsupported, path() + ": tensor '" + t.name + "' has dtype " + t.dtypeText +
                                                 "; only BF16, F16 and F32 tensors (and MXFP4, FP8-block and INT4 pack-quantized groups) can be converted");
    if (first < 0 || count < 0 || first + count > t.elements())
        throw Error(ErrorCode::Argument, path() + ": element range outside tensor '" + t.name + "'");
    const int es = dtypeSize(t.dtype);
    constexpr int64_t kChunkElems = 1 << 20;
    std::vector<uint8_t> buf(static_cast<size_t>(std::min(count, kChunkElems) * es));
    while (count > 0) {
        const int64_t n = std::min(count, kChunkElems);
        m_file.readAt(t.offset + first * es, buf.data(), n * es);
        if (t.dtype == DType::F32) {
            std::memcpy(out, buf.data(), static_cast<size_t>(n) * 4);
        } else if (ints) { // exact below 2^24, which every id table of a release is
            for (int64_t i = 0; i < n; ++i) {
                int64_t v = 0;
                if (t.dtype == DType::I64) {
                    std::memcpy(&v, buf.data() + i * 8, 8);
                } else {
                    int32_t w = 0;
                    std::memcpy(&w, buf.data() + i * 4, 4);
                    v = w;
                }
                if (v < -(int64_t(1) << 24) || v > (int64_t(1) << 24))
                    throw Error(ErrorCode::Unsupported, path() + ": tensor '" + t.name + "' holds " + std::to_string(v) +
                                                             ", beyond the integers an f32 trunk keeps exactly");
                out[i] = float(v);
            }
        } else {
            for (int64_t i = 0; i < n; ++i) {
                uint16_t h;
                std::memcpy(&h, buf.data() + i * 2, 2);
                out[i] = t.dtype == DType::BF16 ? format::bf16ToFloat(h) : format::f16ToFloat(h);
            }
        }
        out += n;
        first += n;
        count -= n;
    }
}

void SafetensorsFile::readBytes(const TensorInfo &t, int64_t first, int64_t count, uint8_t *out) const {
    if (first < 0 || count < 0 || first + count > t.bytes)
        throw Error(ErrorCode::Argument, path() + ": byte range outside tensor '" + t.name + "'");
    m_file.readAt(t.offset + first, out, count);
}

void SafetensorsFile::readBytesUncached(const TensorInfo &t, int64_t first, int64_t count, uint8_t *out) const {
    if (first < 0 || count < 0 || first + count > t.bytes)
        throw Error(ErrorCode::Argument, path() + ": byte range outside tensor '" + t.name + "'");
    m_file.readAtUncached(t.offset + first, out, count);
}

SafetensorsWriter::SafetensorsWriter(const std::string &path, const std::vector<TensorSpec> &specs)
    : m_path(path), m_tmp(path + ".tmp") {
    nlohmann::ordered_json header;
    header["__metadata__"] = {{"format", "pt"}};
    int64_t off = 0;
    for (const auto &s : specs) {
        int64_t n = 1;
        for (int64_t d : s.shape) n *= d;
        const int64_t bytes = n * dtypeSize(s.dtype);
        header[s.name] = {{"dtype", dtypeName(s.dtype)}, {"shape", s.shape}, {"data_offsets", {off, off + bytes}}};
        off += bytes;
    }
    m_total = off;
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' '); // keep the data 8-byte aligned
    m_fd = ::open(m_tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (m_fd < 0) throw Error(ErrorCode::Io, "cannot create " + m_tmp + ": " + std::strerror(errno));
    uint8_t len[8];
    uint64_t l = text.size();
    for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(l >> (8 * i));
    writeRaw(len, 8);
    writeRaw(text.data(), text.size());
}

SafetensorsWriter::~SafetensorsWriter() {
    if (m_fd >= 0) {
        ::close(m_fd);
        ::unlink(m_tmp.c_str());
    }
}

void SafetensorsWriter::writeRaw(const void *data, size_t bytes) {
    const auto *p = static_cast<const char *>(data);
    while (bytes > 0) {
        const ssize_t n = ::write(m_fd, p, bytes);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw Error(ErrorCode::Io, "cannot write " + m_tmp + ": " + std::strerror(errno));
        }
        p += n;
        bytes -= static_cast<size_t>(n);
    }
}

void SafetensorsWriter::append(const void *data, int64_t bytes) {
    if (m_written + bytes > m_total) throw Error(ErrorCode::Argument, m_path + ": more tensor data than the header declares");
    writeRaw(data, static_cast<size_t>(bytes));
    m_written += bytes;
}

void SafetensorsWriter::finish() {
    if (m_written != m_total) throw Error(ErrorCode::Argument, m_path + ": less tensor data than the header declares");
    if (::fsync(m_fd) != 0) throw Error(ErrorCode::Io, "cannot flush " + m_tmp + ": " + std::strerror(errno));
    ::close(m_fd);
    m_fd = -1;
    renameDurable(m_tmp, m_path);
}

} // namespace waste::convert
