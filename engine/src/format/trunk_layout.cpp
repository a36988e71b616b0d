#include "format/trunk_layout.hpp"

#include "waste/waste.hpp"

namespace waste::format {

TrunkFormat storedTrunkFormat(const std::string &name, int64_t elements, size_t dims, int trunkBits)
{
    constexpr int64_t kSmallTensor = 65536; // fewer elements than this stay F32 (reference rule)
    const bool vision = name.starts_with("vision_tower.") || name.starts_with("mm_projector.");
    if (dims <= 1 || elements < kSmallTensor)
        return TrunkFormat::F32;
    if (name.ends_with("_bias") || name.ends_with(".bias"))
        return TrunkFormat::F32; // per-expert biases (gpt-oss): added, never multiplied; keep them exact
    // DSA's indexer head weights sign and scale each head's vote in the top-k choice, where a
    // coarse rounding flips near-tied keys (docs/architectures/dsa.md): kept exact, as the
    // releases keep them unquantised (64 x 7168 on DeepSeek-V3.2, 1.8 MB a layer).
    if (name.ends_with("indexer.weights_proj.weight"))
        return TrunkFormat::F32;
    // DeepSeek V4: the hyper-connection mixes feed a Sinkhorn normalisation and the streams'
    // weights, the compressors' position tables add to gates, tid2eid holds expert ids: F32
    // as released (the ids exactly).
    if (name.starts_with("hc_") || name.find(".hc_") != std::string::npos || name.ends_with(".ape") ||
        name.ends_with(".tid2eid"))
        return TrunkFormat::F32;
    if (vision || name.ends_with("embed_tokens.weight") || name.ends_with("lm_head.weight") || name == "embed.weight" ||
        name == "head.weight") // DeepSeek V4 names them without "model."
        return TrunkFormat::Q8G; // the tower is useless at 4 bits; embeddings and head are always 8
    return trunkBits == 8 ? TrunkFormat::Q8G : TrunkFormat::Q4G;
}

const char *trunkFormatName(TrunkFormat f)
{
    switch (f) {
    case TrunkFormat::F32: return "F32";
    case TrunkFormat::Q8G: return "Q8G";
    case TrunkFormat::Q4G: return "Q4G";
    case TrunkFormat::Q3G: return "Q3G";
    case TrunkFormat::F16: return "F16";
    case TrunkFormat::BF16: return "BF16";
    }
    return "?";
}

TrunkFormat trunkFormatOf(int fmtId, const std::string &encoding)
{
    switch (fmtId) {
    case kTrunkF32: return TrunkFormat::F32;
    case kTrunkQ4G: return TrunkFormat::Q4G;
    case kTrunkQ3G: return TrunkFormat::Q3G;
    case kTrunkHalf: // our extension: fmt 1 with "encoding" f16/bf16 is real half precision
        if (encoding == trunkEncodingName(TrunkFormat::F16))
            return TrunkFormat::F16;
        if (encoding == trunkEncodingName(TrunkFormat::BF16))
            return TrunkFormat::BF16;
        return TrunkFormat::Q8G;
    default: return TrunkFormat::Q8G; // WASTE v0 reads every other id as Q8G
    }
}

int trunkFormatId(TrunkFormat f)
{
    switch (f) {
    case TrunkFormat::F32: return kTrunkF32;
    case TrunkFormat::Q8G: return kTrunkQ8G;
    case TrunkFormat::Q4G: return kTrunkQ4G;
    case TrunkFormat::Q3G: return kTrunkQ3G;
    case TrunkFormat::F16:
    case TrunkFormat::BF16: return kTrunkHalf;
    }
    return kTrunkF32;
}

const char *trunkEncodingName(TrunkFormat f)
{
    if (f == TrunkFormat::F16)
        return "f16";
    if (f == TrunkFormat::BF16)
        return "bf16";
    return nullptr;
}

int64_t trunkRowBytes(TrunkFormat f, int64_t cols, int64_t group)
{
    const int64_t np = trunkGroups(cols, group) * group;
    switch (f) {
    case TrunkFormat::Q8G: return np;
    case TrunkFormat::Q4G: return np / 2;
    case TrunkFormat::Q3G: return (3 * np + 7) / 8 + 1;
    case TrunkFormat::F32: return cols * 4;
    case TrunkFormat::F16:
    case TrunkFormat::BF16: return cols * 2;
    }
    return 0;
}

void checkTrunkRow(TrunkFormat f, int64_t cols, int64_t group, const std::string &where)
{
    const int64_t np = trunkGroups(cols, group) * group;
    if (f == TrunkFormat::Q4G && np % 2 != 0)
        throw Error(ErrorCode::Format, where + ": Q4G row of odd padded length " + std::to_string(np));
}

} // namespace waste::format
