// The quality side of a conversion benchmark: the relative reconstruction error of a
// VQ3R container's routed experts against the source they were made from,
//   sqrt(sum |w - decoded|^2 / sum |w|^2) over every expert matrix of every layer,
// decoded from the container's own bytes (records and codebooks.bin), so that a faster
// encoder can be compared with a slower one on the same source.
#pragma once

#include "convert/hf_names.hpp"
#include "convert/model_source.hpp"
#include "convert/vq.hpp"
#include "format/codebooks.hpp"
#include "format/expert_record.hpp"
#include "format/f16.hpp"
#include "format/manifest_writer.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace bench {

inline std::string slurpFile(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline double vq3rRelativeError(const std::string &hfDir, const std::string &container) {
    using namespace waste;
    const convert::HfDirectorySource src(hfDir);
    const convert::Layout layout = convert::buildLayout(src);
    const std::string cb = slurpFile(container + "/codebooks.bin");
    const convert::VqGeometry g;
    const int64_t cbRec = format::codebookRecordBytes(g.entries, g.dim);
    auto book = [&](int64_t id) {
        convert::Codebook b;
        b.half.resize(static_cast<size_t>(g.entries * g.dim));
        std::memcpy(b.half.data(), cb.data() + id * cbRec + format::kCodebookHeaderBytes, b.half.size() * 2);
        for (uint16_t h : b.half) b.value.push_back(format::f16ToFloat(h));
        return b;
    };
    double num = 0, den = 0;
    for (const convert::Unit &u : layout.units) {
        if (u.experts.empty()) continue;
        const std::string bank = slurpFile(container + "/" + format::bankFileName(u.layer));
        const int64_t recordBytes = static_cast<int64_t>(bank.size() / u.experts.size());
        std::vector<convert::Codebook> books[3];
        for (int k = 0; k < 3; ++k)
            for (int s = 0; s < g.stages; ++s) books[k].push_back(book(u.codebookBase + k * g.stages + s));
        for (size_t e = 0; e < u.experts.size(); ++e) {
            const auto *rec = reinterpret_cast<const uint8_t *>(bank.data()) + static_cast<int64_t>(e) * recordBytes;
            const format::ExpertHeader h = format::parseExpertHeader(rec);
            const uint32_t offs[3] = {h.gateOff, h.upOff, h.downOff};
            const auto *scales = reinterpret_cast<const uint16_t *>(rec + h.scaleOff);
            int64_t scaleRow = 0; // gate's rows, then up's, then down's
            for (int k = 0; k < 3; ++k) {
                const convert::SourceTensor t = src.info(u.experts[e].name[k]);
                std::vector<float> want(static_cast<size_t>(t.elements())), got(want.size());
                src.readRows(t, 0, t.rows(), want.data());
                convert::vqDecodeMatrix(rec + offs[k], scales + scaleRow, t.rows(), t.rowLength(), books[k], g, got.data());
                scaleRow += t.rows();
                for (size_t i = 0; i < want.size(); ++i) {
                    num += (double(want[i]) - got[i]) * (double(want[i]) - got[i]);
                    den += double(want[i]) * want[i];
                }
            }
        }
    }
    return den > 0 ? std::sqrt(num / den) : 0.0;
}

} // namespace bench
