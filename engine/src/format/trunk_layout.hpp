// The trunk's formats (waste-engine.md §2.3): the numbers the manifest's "fmt" key
// holds, how a reader maps them to a decoding, and the byte arithmetic of one row
// and its scales. Readers (trunk.cpp, the vision loader) and the converter's writer
// share these, so a row is the same size wherever it is computed.
#pragma once

#include <cstdint>
#include <string>

namespace waste::format {

// How a trunk tensor's bytes are to be decoded. WASTE decodes every nonzero format id
// other than 3 and 7 as Q8G; real half precision needs our optional "encoding" key.
enum class TrunkFormat { F32, Q8G, Q4G, Q3G, F16, BF16 };

const char *trunkFormatName(TrunkFormat f);

// The manifest's "fmt" numbers.
enum TrunkFormatId : int { kTrunkF32 = 0, kTrunkHalf = 1, kTrunkQ8G = 2, kTrunkQ4G = 3, kTrunkQ3G = 7 };

inline constexpr int64_t kTrunkGroup = 128; // inputs per scale, the manifest's default "group"

// Reader: the decoding of a stored "fmt" (and "encoding", only read for fmt 1).
TrunkFormat trunkFormatOf(int fmtId, const std::string &encoding = {});
// Writer: the "fmt" number to store (F16 and BF16 share 1 and need "encoding").
int trunkFormatId(TrunkFormat f);
// The "encoding" value of F16 ("f16") and BF16 ("bf16"); nullptr for the other formats.
const char *trunkEncodingName(TrunkFormat f);

inline bool isGrouped(TrunkFormat f) { return f == TrunkFormat::Q8G || f == TrunkFormat::Q4G || f == TrunkFormat::Q3G; }

// The format the converter stores a trunk tensor in (the reference's rules): 1-D tensors and
// those under 65536 elements F32; the vision tower, embeddings and head Q8G; the rest Q4G,
// or Q8G with trunkBits 8. Shared by the converter and the planner that plans a release
// from its config before any weight exists.
TrunkFormat storedTrunkFormat(const std::string &name, int64_t elements, size_t dims, int trunkBits);

// Scale groups of a row of `cols` inputs.
inline int64_t trunkGroups(int64_t cols, int64_t group) { return (cols + group - 1) / group; }

// Payload bytes of one stored row: grouped formats pad the row to whole groups (Q3G adds
// one guard byte); F32/F16/BF16 rows are unpadded. Q4G needs an even padded length
// (checkTrunkRow refuses the rest).
int64_t trunkRowBytes(TrunkFormat f, int64_t cols, int64_t group);

// f16 scale bytes of a grouped [rows, cols] tensor (rows x groups, row-major).
inline int64_t trunkScaleBytes(int64_t rows, int64_t cols, int64_t group) { return rows * trunkGroups(cols, group) * 2; }

// Throws Error(Format), naming `where`, for a row no reader can decode (Q4G of odd padded length).
void checkTrunkRow(TrunkFormat f, int64_t cols, int64_t group, const std::string &where);

} // namespace waste::format
