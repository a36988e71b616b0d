#include "format/manifest_writer.hpp"

#include "format/expert_record.hpp"
#include "format/manifest_keys.hpp"
#include "format/native_record.hpp"

namespace waste::format {

std::string bankFileName(int layer) { return "experts-L" + std::to_string(layer) + ".bin"; }

OrderedJson trunkEntryJson(const TrunkEntryOut &e)
{
    OrderedJson j;
    j[key::kName] = e.name;
    j[key::kFmt] = trunkFormatId(e.format);
    j[key::kOff] = e.off;
    j[key::kShape] = e.shape;
    if (isGrouped(e.format)) {
        j[key::kGroup] = e.group;
        j[key::kScaleOff] = e.scaleOff;
    }
    if (const char *enc = trunkEncodingName(e.format)) // fmt 1 alone means Q8G to the reference engine
        j[key::kEncoding] = enc;
    j[key::kBytes] = e.bytes;
    return j;
}

OrderedJson bankEntryJson(const BankEntry &b)
{
    return {{key::kFile, b.file}, {key::kExperts, b.experts}, {key::kBytes, b.bytes}, {key::kCodebookBase, b.codebookBase}};
}

OrderedJson expertQuantJson(const ExpertQuant &q)
{
    if (q.isNative()) // the format id says everything: no codebooks, the layout follows from the shape
        return {{key::kFmt, nativeFmtName(q.native)}};
    return {{key::kFmt, q.fmtName},
            {key::kStages, q.stages},
            {key::kVecDim, q.vecDim},
            {key::kEntries, q.entries},
            {key::kIndexBlock, kIndexBlockRows},
            {key::kIndexBits, q.indexBits},
            {key::kBitsPerWeight, q.stages * q.indexBits / q.vecDim}};
}

std::string manifestText(const ManifestOut &m)
{
    OrderedJson j;
    j[key::kFormatVersion] = 0;
    j[key::kArch] = m.arch;
    j[key::kTensorPrefix] = m.prefix;
    j[key::kConfig] = m.config;
    j[key::kExpertQuant] = expertQuantJson(m.quant);
    j[key::kLayers] = m.layers;
    j[key::kTrunk] = m.trunk;
    j[key::kConverter] = m.converter;
    return j.dump(1);
}

} // namespace waste::format
