#include "quant/vq_expert_workload.hpp"

#include "format/expert_record.hpp"
#include "format/f16.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

namespace waste::quant {

namespace {
constexpr int kStages = 3;
}

format::Codebooks randomCodebooks(int books, std::mt19937 &rng)
{
    namespace fs = std::filesystem;
    format::ExpertQuant q; // VQ3R defaults: 256 entries of 8
    const int64_t rec = format::codebookRecordBytes(q.entries, q.vecDim);
    std::vector<uint8_t> raw(size_t(books * rec), 0);
    for (int b = 0; b < books; ++b) {
        format::storeCodebookHeader(raw.data() + b * rec, b, 0, q.vecDim, q.entries);
        for (int64_t i = 0; i < int64_t(q.entries) * q.vecDim; ++i) {
            const uint16_t h = format::floatToF16(float(int(rng() % 200) - 100) * 0.01f);
            raw[size_t(b * rec + format::kCodebookHeaderBytes + 2 * i)] = uint8_t(h & 0xff);
            raw[size_t(b * rec + format::kCodebookHeaderBytes + 2 * i + 1)] = uint8_t(h >> 8);
        }
    }
    const fs::path path = fs::temp_directory_path() /
                          ("waste-calibration-" + std::to_string(std::random_device{}()) + ".bin");
    {
        std::ofstream f(path, std::ios::binary);
        f.write(reinterpret_cast<const char *>(raw.data()), std::streamsize(raw.size()));
        if (!f)
            throw Error(ErrorCode::Io, path.string() + ": cannot write the calibration's codebooks");
    }
    format::Codebooks cb(path.string(), q);
    std::error_code ec;
    fs::remove(path, ec);
    return cb;
}

int rotationCopies(int64_t bytes)
{
    return int(std::clamp<int64_t>((int64_t(64) << 20) / std::max<int64_t>(bytes, 1) + 1, 1, 512));
}

VqExpertWorkload::VqExpertWorkload(int64_t inter, int64_t width, const format::Codebooks &books, const float *x,
                                   compute::ThreadPool &pool, std::mt19937 &rng)
    : m_inter(inter), m_width(width), m_gateBytes(format::indexBytes(inter, width, kStages, 8)),
      m_downBytes(format::indexBytes(width, inter, kStages, 8)), m_copies(rotationCopies(recordBytes())),
      m_books(books), m_pool(pool), m_scales(size_t(format::rowScaleBytes(inter, width)), 0), m_g(size_t(inter)),
      m_u(size_t(inter)), m_out(size_t(width))
{
    const int64_t rec = recordBytes();
    m_indices.resize(size_t(rec * m_copies));
    for (int64_t i = 0; i < rec; ++i)
        m_indices[size_t(i)] = uint8_t(rng());
    for (int k = 1; k < m_copies; ++k)
        std::copy(m_indices.begin(), m_indices.begin() + rec, m_indices.begin() + k * rec);
    for (size_t i = 1; i < m_scales.size(); i += 2)
        m_scales[i] = 0x3c; // f16 1.0
    buildLut(m_gate, x, width, books, 0, kStages, false, &pool);
    buildLut(m_up, x, width, books, 3, kStages, false, &pool);
}

void VqExpertWorkload::runCold()
{
    run(m_indices.data() + (m_turn++ % m_copies) * recordBytes());
}

void VqExpertWorkload::run(const uint8_t *rec)
{
    applyLut8(m_gate, rec, m_scales.data(), m_inter, m_g.data(), &m_pool);
    applyLut8(m_up, rec + m_gateBytes, m_scales.data() + 2 * m_inter, m_inter, m_u.data(), &m_pool);
    for (int64_t i = 0; i < m_inter; ++i)
        m_g[size_t(i)] = m_g[size_t(i)] / (1.0f + std::exp(-m_g[size_t(i)])) * m_u[size_t(i)];
    buildLut(m_down, m_g.data(), m_inter, m_books, 6, kStages, false, &m_pool);
    applyLut8(m_down, rec + 2 * m_gateBytes, m_scales.data() + 4 * m_inter, m_width, m_out.data(), &m_pool);
}

} // namespace waste::quant
