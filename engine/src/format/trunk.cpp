#include "format/trunk.hpp"

#include "format/bytes.hpp"
#include "format/f16.hpp"
#include "waste/waste.hpp"

namespace waste::format {
namespace {

bool fits(int64_t off, int64_t count, int64_t unit, int64_t fileSize)
{
    if (off < 0 || count < 0 || unit <= 0 || off > fileSize)
        return false;
    if (count > (fileSize - off) / unit)
        return false;
    return count * unit <= fileSize - off;
}

} // namespace

int64_t Trunk::rowBytesOf(const TrunkEntry &e) { return trunkRowBytes(e.format, e.cols, e.group); }

int64_t Trunk::payloadBytes(const TrunkEntry &e) { return rowBytesOf(e) * e.rows; }

Trunk::Trunk(const std::string &path, const Manifest &manifest) : m_file(path), m_manifest(manifest)
{
    const int64_t size = m_file.size();
    for (const TrunkEntry &e : manifest.trunk) {
        const std::string where = path + ": tensor " + e.name.substr(0, 120);
        checkTrunkRow(e.format, e.cols, e.group, where);
        if (!fits(e.off, e.rows, rowBytesOf(e), size))
            throw Error(ErrorCode::Format, where + " lies outside trunk.bin (offset " + std::to_string(e.off) +
                                               ", file " + std::to_string(size) + " bytes); the trunk is truncated or the manifest is corrupt");
        if (isGrouped(e.format)) {
            if (!fits(e.scaleOff, e.rows, trunkScaleBytes(1, e.cols, e.group), size))
                throw Error(ErrorCode::Format, where + ": scales lie outside trunk.bin; the trunk is truncated or the manifest is corrupt");
        }
    }
}

std::shared_ptr<TrunkTensor> Trunk::load(const std::string &nameWithoutPrefix, bool resident) const
{
    const TrunkEntry *e = m_manifest.find(nameWithoutPrefix);
    if (!e)
        return nullptr;
    auto t = std::make_shared<TrunkTensor>();
    t->name = e->name;
    t->format = e->format;
    t->rows = e->rows;
    t->cols = e->cols;
    t->shape = e->shape;
    t->group = e->group;
    t->groups = trunkGroups(e->cols, e->group);
    t->rowBytes = rowBytesOf(*e);
    t->m_file = &m_file;
    t->m_off = e->off;
    t->m_scaleOff = e->scaleOff;
    const int64_t n = e->rows * e->cols;
    switch (e->format) {
    case TrunkFormat::F32: {
        std::vector<uint8_t> raw(static_cast<size_t>(n * 4));
        m_file.readAt(raw.data(), n * 4, e->off);
        t->f32.resize(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i)
            t->f32[static_cast<size_t>(i)] = loadF32(raw.data() + i * 4);
        return t;
    }
    case TrunkFormat::F16:
    case TrunkFormat::BF16: {
        std::vector<uint8_t> raw(static_cast<size_t>(n * 2));
        m_file.readAt(raw.data(), n * 2, e->off);
        t->f32.resize(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) {
            const uint16_t h = loadU16(raw.data() + i * 2);
            t->f32[static_cast<size_t>(i)] = e->format == TrunkFormat::F16 ? f16ToFloat(h) : bf16ToFloat(h);
        }
        return t;
    }
    default:
        break;
    }
    if (!resident) {
        t->onDisk = true;
        return t;
    }
    t->payload.resize(static_cast<size_t>(t->rows * t->rowBytes));
    m_file.readAt(t->payload.data(), t->rows * t->rowBytes, e->off);
    std::vector<uint8_t> raw(static_cast<size_t>(t->rows * t->groups * 2));
    m_file.readAt(raw.data(), static_cast<int64_t>(raw.size()), e->scaleOff);
    t->scales.resize(static_cast<size_t>(t->rows * t->groups));
    for (size_t i = 0; i < t->scales.size(); ++i)
        t->scales[i] = f16ToFloat(loadU16(raw.data() + i * 2));
    return t;
}

void TrunkTensor::readRow(int64_t r, float *out) const
{
    if (r < 0 || r >= rows)
        throw Error(ErrorCode::Argument, name + ": row " + std::to_string(r) + " out of range");
    if (!f32.empty()) {
        for (int64_t i = 0; i < cols; ++i)
            out[i] = f32[static_cast<size_t>(r * cols + i)];
        return;
    }
    const uint8_t *p;
    const float *sc;
    std::vector<uint8_t> rowBuf;
    std::vector<float> scaleBuf;
    if (onDisk) {
        rowBuf.resize(static_cast<size_t>(rowBytes));
        m_file->readAt(rowBuf.data(), rowBytes, m_off + r * rowBytes);
        std::vector<uint8_t> raw(static_cast<size_t>(groups * 2));
        m_file->readAt(raw.data(), groups * 2, m_scaleOff + r * groups * 2);
        scaleBuf.resize(static_cast<size_t>(groups));
        for (int64_t k = 0; k < groups; ++k)
            scaleBuf[static_cast<size_t>(k)] = f16ToFloat(loadU16(raw.data() + k * 2));
        p = rowBuf.data();
        sc = scaleBuf.data();
    } else {
        p = payload.data() + r * rowBytes;
        sc = scales.data() + r * groups;
    }
    for (int64_t i = 0; i < cols; ++i) {
        int q;
        if (format == TrunkFormat::Q4G) {
            const uint8_t b = p[i >> 1];
            q = ((i & 1) ? (b >> 4) : (b & 0x0f)) - 8;
        } else if (format == TrunkFormat::Q3G) {
            const int64_t bit = 3 * i;
            const unsigned w = static_cast<unsigned>(p[bit >> 3]) | (static_cast<unsigned>(p[(bit >> 3) + 1]) << 8);
            q = static_cast<int>((w >> (bit & 7)) & 7u) - 4;
        } else {
            q = static_cast<int8_t>(p[i]);
        }
        out[i] = static_cast<float>(q) * sc[i / group];
    }
}

} // namespace waste::format
