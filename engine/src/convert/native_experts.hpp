// Routed experts written as native records (format/native_record.hpp) instead of VQ
// codes: which record format a conversion uses (the person's --experts choice, or the
// release's own encoding by default), and the record of one expert, either repacked
// from the release's stored bytes (a copy: byte-identical to the shards) or, for q4,
// encoded as INT4G32 from the decoded weights.
#pragma once

#include "convert/expert_encoder.hpp"
#include "convert/hf_names.hpp"
#include "convert/model_source.hpp"
#include "convert/span_reader.hpp"

#include <waste/convert.hpp>

#include <cstdint>
#include <string>

namespace waste::convert {

// The native record format that keeps a logical dtype's bytes (MXFP4, FP8B128, INT4G32,
// BF16); 0 for dtypes no record keeps as they are (F16, F32).
uint8_t nativeFormatOf(DType d);
// The native record format that holds a tensor's values exactly: its dtype's for the four
// copied layouts, FP8B128 / INT4G32 for scaled layouts whose scales re-lay exactly
// (scaled_layouts.hpp), else 0 with the reason (naming the layout) in *why.
uint8_t nativeFormatOf(const SourceTensor &t, std::string *why = nullptr);

// What a conversion writes for routed experts: format::kFmtVQ3R, or a native format id
// with `encode` false for a repack and true for q4's INT4G32 encoding.
struct ExpertChoice {
    uint8_t fmt = 0;
    bool encode = false;
    bool native() const;
    std::string name() const; // "VQ3R", "MXFP4", ... (the manifest's expert_quant.fmt)
};

// Resolves the person's choice against the release: Auto is native when the experts are
// already quantised in a layout a record holds exactly (MXFP4, FP8 blocks, INT4 groups,
// repacked or with their scales re-laid) and VQ3R otherwise; Native on F16 or F32 experts,
// or on scaled layouts no record holds exactly, is refused with a one-line reason that
// names the tensor, its layout and what to use instead. A source without routed experts
// gets VQ3R.
ExpertChoice chooseExperts(const ModelSource &src, const Layout &layout, ExpertEncoding e);

// Fills `record` (nativeRecordLayout(choice.fmt, shape.inter, shape.hidden).recordBytes
// bytes) with expert `expert` of `layer`: header, gate/up/down payloads and scales, crc.
void buildNativeRecord(const ModelSource &src, const ExpertNames &names, const ExpertChoice &choice,
                       const ExpertShape &shape, int layer, int expert, uint8_t *record);

// The same records for experts [first, first + count) of a repack (choice.encode false),
// one after another from `records`: the bytes of all their tensors read through `reader`
// in a few large reads, then checksummed on `threads`. Byte-identical to buildNativeRecord.
// Returns false, having read nothing, where the source cannot say where its bytes lie
// (ModelSource::storedRanges); the caller then builds record by record.
bool repackNativeBatch(const ModelSource &src, const std::vector<ExpertNames> &experts, const ExpertChoice &choice,
                       const ExpertShape &shape, int layer, int first, int count, uint8_t *records, SpanReader &reader,
                       int threads);

} // namespace waste::convert
