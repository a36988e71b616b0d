// Encodes one routed expert into its experts-L{n}.bin record: the VQ3R indices and
// row scales of gate, up and down placed by format::recordLayout, the header written
// by format::storeExpertHeader. Also the codebooks.bin record of one fitted codebook.
#pragma once

#include "convert/vq.hpp"

#include <cstdint>
#include <vector>

namespace waste::convert {

struct ExpertShape {
    int64_t inter = 0;  // moe_intermediate_size: rows of gate/up, columns of down
    int64_t hidden = 0; // expert input width: columns of gate/up, rows of down
};

format::RecordLayout expertLayout(const ExpertShape &shape, const VqGeometry &geom);

// books: 3 kinds (gate, up, down) x stages. gate/up are [inter, hidden], down [hidden, inter].
// `record` holds expertLayout(shape, geom).recordBytes bytes.
void buildExpertRecord(int layer, int expertId, int codebookBase, const ExpertShape &shape, const VqGeometry &geom,
                       const float *gate, const float *up, const float *down,
                       const std::vector<std::vector<Codebook>> &books, uint8_t *record, VqScratch *scratch = nullptr);

// One codebooks.bin record: header + entries x dim f16 (format::codebookRecordBytes bytes).
void writeCodebookRecord(int id, const Codebook &book, const VqGeometry &geom, uint8_t *out);

} // namespace waste::convert
