#include "format/expert_banks.hpp"

#include "format/expert_record.hpp"

#include <waste/waste.hpp>

namespace waste::format {

std::map<int, std::shared_ptr<ExpertBank>> openExpertBanks(const std::string &dir, const Manifest &manifest,
                                                           const Codebooks &books, const std::string &manifestPath)
{
    const ModelConfig &c = manifest.config;
    std::map<int, std::shared_ptr<ExpertBank>> banks;
    for (const auto &[layer, entry] : manifest.banks) {
        if (!c.moeLayer(layer))
            continue;
        RecordShape shape;
        shape.layer = layer;
        shape.recordBytes = entry.recordBytes;
        shape.inter = c.moeInter;
        shape.width = c.expertWidth();
        if (manifest.quant.isNative()) { // the bank checks its stride against the format's layout as it opens
            shape.native = manifest.quant.native;
            banks[layer] = std::make_shared<ExpertBank>(dir, entry, shape);
            continue;
        }
        if (entry.codebookBase + 3 * int64_t(manifest.quant.stages) > books.count())
            throw Error(ErrorCode::Format, manifestPath + ": layer " + std::to_string(layer) + " codebook_base " +
                                               std::to_string(entry.codebookBase) + " is beyond the " +
                                               std::to_string(books.count()) + " codebooks in codebooks.bin");
        shape.stages = manifest.quant.stages;
        shape.indexBits = manifest.quant.indexBits;
        shape.codebooks = books.count();
        const int64_t minBytes = kRecordHeaderBytes + 2 * indexBytes(shape.inter, shape.width, shape.stages, shape.indexBits) +
                                 indexBytes(shape.width, shape.inter, shape.stages, shape.indexBits) +
                                 2 * (2 * int64_t(shape.inter) + shape.width);
        if (entry.recordBytes < minBytes)
            throw Error(ErrorCode::Format, manifestPath + ": layer " + std::to_string(layer) + " records of " +
                                               std::to_string(entry.recordBytes) + " bytes cannot hold an expert of this shape");
        banks[layer] = std::make_shared<ExpertBank>(dir, entry, shape);
    }
    return banks;
}

} // namespace waste::format
