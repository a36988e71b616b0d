#include "model/vision_weights.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "format/f16.hpp"
#include "format/file.hpp"
#include "format/manifest.hpp"
#include "format/trunk_layout.hpp"
#include "image/image_preprocess.hpp"
#include "waste/waste.hpp"

namespace waste::vision {

int64_t TensorInfo::elements() const
{
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

namespace {

// The tower's tensors of a trunk index (format/manifest's parser) over trunk.bin: either
// an open container's (borrowed) or one opened here for the tower alone (owned).
class ManifestTensors final : public TensorSource {
public:
    ManifestTensors(const std::vector<format::TrunkEntry> &trunkIndex, int hidden, int vocab, const format::File &trunk,
                    const std::string &dir, std::unique_ptr<format::File> owned = nullptr)
        : m_owned(std::move(owned)), m_trunk(m_owned ? *m_owned : trunk), m_dir(dir), m_hidden(hidden), m_vocab(vocab)
    {
        // Vision names are absolute (never prefixed): index the entries by their full name.
        for (const format::TrunkEntry &e : trunkIndex) {
            if (e.name.rfind("vision_tower.", 0) != 0 && e.name.rfind("mm_projector.", 0) != 0) continue;
            TensorInfo t;
            t.name = e.name;
            t.fmt = e.rawFmt;
            t.halfEncoding = e.format == format::TrunkFormat::F16 ? 1 : e.format == format::TrunkFormat::BF16 ? 2 : 0;
            t.shape = e.shape;
            t.group = e.group;
            t.off = e.off;
            t.scaleOff = e.scaleOff;
            t.bytes = e.bytes;
            m_index[t.name] = std::move(t);
        }
    }
    const TensorInfo *find(const std::string &name) const override
    {
        auto it = m_index.find(name);
        return it == m_index.end() ? nullptr : &it->second;
    }
    void read(int64_t offset, int64_t size, void *dst) const override
    {
        if (offset < 0 || size < 0 || offset > m_trunk.size() || size > m_trunk.size() - offset)
            throw Error(ErrorCode::Format, m_trunk.path() + ": tensor data at " + std::to_string(offset) +
                                               " lies outside the file");
        m_trunk.readAt(dst, size, offset);
    }
    int64_t trunkBytes() const override { return m_trunk.size(); }
    int textHidden() const override { return m_hidden; }
    int vocabSize() const override { return m_vocab; }
    const std::string &containerDir() const override { return m_dir; }

private:
    std::unique_ptr<format::File> m_owned;
    const format::File &m_trunk;
    std::string m_dir;
    std::map<std::string, TensorInfo> m_index;
    int m_hidden = 0, m_vocab = 0;
};

[[noreturn]] void badTensor(const TensorSource &src, const std::string &name, const std::string &what)
{
    throw Error(ErrorCode::Format, src.containerDir() + ": vision tensor " + name + " " + what +
                                       " (the vision tower is malformed; re-convert it)");
}

// Refuses a tensor whose data would not lie inside trunk.bin, before anything is allocated.
void needBytes(const TensorSource &src, const std::string &name, int64_t offset, int64_t size)
{
    if (offset < 0 || size < 0 || offset > src.trunkBytes() || size > src.trunkBytes() - offset)
        badTensor(src, name, "lies outside trunk.bin");
}

const TensorInfo &need(const TensorSource &src, const std::string &name)
{
    const TensorInfo *t = src.find(name);
    if (!t) badTensor(src, name, "is missing");
    return *t;
}

} // namespace

std::unique_ptr<TensorSource> openContainerTensors(const std::string &containerDir)
{
    namespace fs = std::filesystem;
    const fs::path manifestPath = fs::path(containerDir) / "manifest.json";
    std::ifstream in(manifestPath, std::ios::binary);
    if (!in) throw Error(ErrorCode::Io, manifestPath.string() + ": cannot open the container manifest");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const format::TrunkIndex index = format::parseTrunkIndex(text, manifestPath.string());
    auto trunk = std::make_unique<format::File>((fs::path(containerDir) / "trunk.bin").string());
    const format::File &file = *trunk;
    return std::make_unique<ManifestTensors>(index.trunk, index.hidden, index.vocab, file, containerDir, std::move(trunk));
}

std::unique_ptr<TensorSource> manifestTensors(const format::Manifest &manifest, const format::File &trunk,
                                              const std::string &containerDir)
{
    return std::make_unique<ManifestTensors>(manifest.trunk, manifest.config.hidden, manifest.config.vocab, trunk,
                                             containerDir);
}

float f16ToF32(uint16_t h) { return format::f16ToFloat(h); }

WeightMatrix WeightMatrix::load(const TensorSource &src, const std::string &name, int rows, int cols,
                                bool anyShapeF32)
{
    const TensorInfo &t = need(src, name);
    WeightMatrix w;
    w.rows = rows;
    w.cols = cols;
    const int64_t n = int64_t(rows) * cols;
    const std::string want = "[" + std::to_string(rows) + ", " + std::to_string(cols) + "]";
    if (t.shape.empty()) badTensor(src, name, "has no shape");
    if (t.halfEncoding != 0) { // real half precision (our manifest extension): widened to f32 once
        const bool ok = anyShapeF32 ? t.elements() == n : (t.shape.back() == cols && t.elements() == n);
        if (!ok) badTensor(src, name, "has the wrong shape (want " + want + ")");
        needBytes(src, name, t.off, n * 2);
        std::vector<uint16_t> half(static_cast<size_t>(n));
        src.read(t.off, n * 2, half.data());
        w.m_fmt = 0;
        w.m_f32.resize(static_cast<size_t>(n));
        for (size_t i = 0; i < half.size(); ++i)
            w.m_f32[i] = t.halfEncoding == 1 ? format::f16ToFloat(half[i]) : format::bf16ToFloat(half[i]);
        return w;
    }
    if (t.fmt == 0) {
        const bool ok = anyShapeF32 ? t.elements() == n
                                    : (t.shape.back() == cols && t.elements() == n);
        if (!ok) badTensor(src, name, "has the wrong shape (want " + want + ")");
        w.m_fmt = 0;
        needBytes(src, name, t.off, n * 4);
        w.m_f32.resize(size_t(n));
        src.read(t.off, n * 4, w.m_f32.data());
        return w;
    }
    // Grouped integer formats: the stored last dimension must be the input width.
    if (t.shape.size() != 2 || t.shape[0] != rows || t.shape[1] != cols)
        badTensor(src, name, "has the wrong shape for a quantized matrix (want " + want + ")");
    if (t.group < 1 || t.group > (int64_t(1) << 20)) badTensor(src, name, "has a bad group size");
    const format::TrunkFormat fmt = format::trunkFormatOf(t.fmt); // Q8G, Q4G or Q3G (half handled above)
    format::checkTrunkRow(fmt, cols, t.group, src.containerDir() + ": vision tensor " + name);
    w.m_fmt = format::trunkFormatId(fmt);
    w.m_group = int(t.group);
    w.m_groupsPerRow = int(format::trunkGroups(cols, t.group));
    w.m_rowBytes = format::trunkRowBytes(fmt, cols, t.group);
    needBytes(src, name, t.off, w.m_rowBytes * rows);
    needBytes(src, name, t.scaleOff, int64_t(rows) * w.m_groupsPerRow * 2);
    w.m_q.resize(size_t(w.m_rowBytes * rows));
    src.read(t.off, w.m_rowBytes * rows, w.m_q.data());
    w.m_scales.resize(size_t(int64_t(rows) * w.m_groupsPerRow));
    src.read(t.scaleOff, int64_t(w.m_scales.size()) * 2, w.m_scales.data());
    return w;
}

std::vector<float> WeightMatrix::loadF32Vector(const TensorSource &src, const std::string &name, int n)
{
    const TensorInfo &t = need(src, name);
    if (t.fmt != 0 || t.halfEncoding != 0) badTensor(src, name, "must be stored F32");
    if (t.elements() != n) badTensor(src, name, "must have " + std::to_string(n) + " elements");
    needBytes(src, name, t.off, int64_t(n) * 4);
    std::vector<float> v(static_cast<size_t>(n));
    src.read(t.off, int64_t(n) * 4, v.data());
    return v;
}

void WeightMatrix::row(int r, float *out) const
{
    if (m_fmt == 0) {
        std::memcpy(out, &m_f32[size_t(r) * size_t(cols)], size_t(cols) * 4);
        return;
    }
    const uint8_t *q = &m_q[size_t(r) * size_t(m_rowBytes)];
    const uint16_t *sc = &m_scales[size_t(r) * size_t(m_groupsPerRow)];
    for (int g = 0; g < m_groupsPerRow; ++g) {
        const float s = f16ToF32(sc[g]);
        const int begin = g * m_group, end = std::min(cols, begin + m_group);
        for (int i = begin; i < end; ++i) {
            int v;
            if (m_fmt == 2) {
                v = int(int8_t(q[i]));
            } else if (m_fmt == 3) {
                v = int((q[i >> 1] >> ((i & 1) * 4)) & 15) - 8;
            } else { // Q3G: 3-bit field at bit 3i, LSB first, may straddle bytes
                const size_t bit = size_t(i) * 3;
                const unsigned two = unsigned(q[bit >> 3]) | unsigned(q[(bit >> 3) + 1]) << 8;
                v = int((two >> (bit & 7)) & 7) - 4;
            }
            out[i] = float(v) * s;
        }
    }
}

int64_t VisionWeights::residentBytes() const
{
    int64_t b = patchEmbed.residentBytes() + int64_t(posGrid.size() + finalNorm.size() + postNorm.size()) * 4 +
                proj0.residentBytes() + proj2.residentBytes();
    for (const auto &bl : blocks)
        b += int64_t(bl.norm0.size() + bl.norm1.size()) * 4 + bl.wqkv.residentBytes() + bl.wo.residentBytes() +
             bl.fc0.residentBytes() + bl.fc1.residentBytes();
    return b;
}

std::unique_ptr<VisionWeights> loadVisionWeights(const TensorSource &src, const VisionConfig &cfg)
{
    auto w = std::make_unique<VisionWeights>();
    w->cfg = cfg;
    const int D = cfg.hidden, Q = cfg.qkv, I = cfg.intermediate, T = cfg.textHidden;
    w->patchEmbed = WeightMatrix::load(src, "vision_tower.patch_embed.proj.weight", D, image::kPatchValues, true);

    // The position grid: F32 of at least PH*PW*D values in [y][x][d] order, or quantized rows of D.
    const std::string posName = "vision_tower.patch_embed.pos_emb.weight";
    const TensorInfo &pos = need(src, posName);
    const int64_t cells = int64_t(cfg.posHeight) * cfg.posWidth;
    if (cells * D > (int64_t(1) << 31)) badTensor(src, posName, "is too large");
    if (pos.fmt == 0 && pos.halfEncoding == 0) {
        if (pos.elements() < cells * D) badTensor(src, posName, "has fewer than PH*PW*D values");
        needBytes(src, posName, pos.off, cells * D * 4);
        w->posGrid.resize(size_t(cells * D));
        src.read(pos.off, cells * D * 4, w->posGrid.data());
    } else {
        const WeightMatrix g = WeightMatrix::load(src, posName, int(cells), D);
        w->posGrid.resize(size_t(cells * D));
        for (int64_t r = 0; r < cells; ++r) g.row(int(r), &w->posGrid[size_t(r * D)]);
    }

    w->blocks.resize(size_t(cfg.layers));
    for (int b = 0; b < cfg.layers; ++b) {
        const std::string p = "vision_tower.encoder.blocks." + std::to_string(b) + ".";
        VisionBlockWeights &bl = w->blocks[size_t(b)];
        bl.norm0 = WeightMatrix::loadF32Vector(src, p + "norm0.weight", D);
        bl.wqkv = WeightMatrix::load(src, p + "wqkv.weight", 3 * Q, D);
        bl.wo = WeightMatrix::load(src, p + "wo.weight", D, Q);
        bl.norm1 = WeightMatrix::loadF32Vector(src, p + "norm1.weight", D);
        bl.fc0 = WeightMatrix::load(src, p + "mlp.fc0.weight", I, D);
        bl.fc1 = WeightMatrix::load(src, p + "mlp.fc1.weight", D, I);
    }
    w->finalNorm = WeightMatrix::loadF32Vector(src, "vision_tower.encoder.final_layernorm.weight", D);
    w->proj0 = WeightMatrix::load(src, "mm_projector.proj.0.weight", 4 * D, 4 * D);
    w->proj2 = WeightMatrix::load(src, "mm_projector.proj.2.weight", T, 4 * D);
    w->postNorm = WeightMatrix::loadF32Vector(src, "mm_projector.post_norm.weight", T);
    return w;
}

} // namespace waste::vision
