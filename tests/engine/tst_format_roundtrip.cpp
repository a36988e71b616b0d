// The container format written through format/'s writer side and read back through
// its reader side: every expert record format (VQ3R, VQ2R, VQ4P, and the native MXFP4,
// FP8B128, INT4G32, BF16 records with their manifest names), the codebook record, every
// trunk format (F32, Q8G, Q4G, Q3G, F16, BF16, the half formats through the manifest
// writer), and the one f16 rule (exponent 31 ordinary, subnormals, rounding) that both
// sides share.
#include "format/bytes.hpp"
#include "format/codebooks.hpp"
#include "format/crc32.hpp"
#include "format/expert_bank.hpp"
#include "format/expert_record.hpp"
#include "format/f16.hpp"
#include "format/manifest.hpp"
#include "format/manifest_writer.hpp"
#include "format/native_record.hpp"
#include "format/trunk.hpp"
#include "format/trunk_layout.hpp"

#include <waste/waste.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

using namespace waste::format;
namespace fs = std::filesystem;

namespace {

std::string outDir(const std::string &name)
{
    const std::string d = std::string(WASTE_TEST_OUTPUT_DIR) + "/format-roundtrip/" + name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

void writeFile(const std::string &path, const std::vector<uint8_t> &bytes)
{
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

struct RecordKind {
    uint8_t fmt;
    int stages, indexBits;
};

} // namespace

TEST(FormatF16, ExponentThirtyOneIsAnOrdinaryExponent)
{
    EXPECT_EQ(f16ToFloat(0x7c00u), 65536.0f);
    EXPECT_EQ(f16ToFloat(0x7fffu), 131008.0f);
    EXPECT_EQ(f16ToFloat(0xfc00u), -65536.0f);
    EXPECT_EQ(f16ToFloat(0x7e00u), 98304.0f); // an IEEE quiet NaN pattern is a number here
    EXPECT_EQ(floatToF16(65536.0f), 0x7c00u);
    EXPECT_EQ(floatToF16(131008.0f), 0x7fffu);
    EXPECT_EQ(floatToF16(131039.0f), 0x7fffu);  // below the rounding midpoint to 2^17
    EXPECT_EQ(floatToF16(131040.0f), 0x7fffu);  // would round to 2^17: saturates
    EXPECT_EQ(floatToF16(1e9f), 0x7fffu);
    EXPECT_EQ(floatToF16(-INFINITY), 0xffffu);
    EXPECT_EQ(floatToF16(NAN) & 0x7fffu, 0x7fffu);
    // Every half survives decode then encode, exponent 31 included.
    for (uint32_t h = 0; h < 0x10000; ++h)
        ASSERT_EQ(floatToF16(f16ToFloat(static_cast<uint16_t>(h))), h) << h;
}

TEST(FormatF16, SubnormalsAreKeptOrFlushed)
{
    EXPECT_EQ(f16ToFloat(0x0001u), std::ldexp(1.0f, -24));
    EXPECT_EQ(f16ToFloat(0x03ffu), std::ldexp(1023.0f, -24));
    EXPECT_EQ(f16ToFloat(0x8001u), -std::ldexp(1.0f, -24));
    EXPECT_EQ(f16ToFloatFlushSubnormal(0x03ffu), 0.0f);
    EXPECT_TRUE(std::signbit(f16ToFloatFlushSubnormal(0x8001u)));
    EXPECT_EQ(f16ToFloatFlushSubnormal(0x0400u), std::ldexp(1.0f, -14)); // the least normal stays
    EXPECT_EQ(floatToF16(std::ldexp(1.0f, -24)), 0x0001u);
    EXPECT_EQ(floatToF16(std::ldexp(1.0f, -25)), 0x0000u);          // tie to even: 0
    EXPECT_EQ(floatToF16(std::ldexp(1.5f, -25)), 0x0001u);          // above the tie
    EXPECT_EQ(floatToF16(std::ldexp(3.0f, -25)), 0x0002u);          // 1.5 ulp ties to even (2)
    EXPECT_EQ(floatToF16FlushSubnormal(std::ldexp(1.0f, -20)), 0x0000u);
    EXPECT_EQ(floatToF16FlushSubnormal(-std::ldexp(1.0f, -20)), 0x8000u);
}

TEST(FormatF16, RoundsToNearestEven)
{
    EXPECT_EQ(floatToF16(1.0f), 0x3c00u);
    EXPECT_EQ(floatToF16(1.0f + 1.0f / 2048), 0x3c00u);      // tie, even below
    EXPECT_EQ(floatToF16(1.0f + 3.0f / 2048), 0x3c02u);      // tie, even above
    EXPECT_EQ(floatToF16(1.0f + 1.0f / 2048 + 1e-6f), 0x3c01u);
    EXPECT_EQ(floatToF16(65504.0f), 0x7bffu);
    EXPECT_EQ(floatToF16(65519.0f), 0x7bffu);
    EXPECT_EQ(floatToF16(65520.0f), 0x7c00u); // carries into exponent 31
    EXPECT_EQ(floatToBf16(1.0f), 0x3f80u);
    EXPECT_EQ(floatToBf16(1.0f + 1.0f / 256), 0x3f80u); // tie, even below
    EXPECT_EQ(bf16ToFloat(0xc000u), -2.0f);
}

TEST(FormatRecords, EveryExpertRecordFormatRoundTrips)
{
    const RecordKind kinds[] = {{kFmtVQ3R, 3, 8}, {kFmtVQ2R, 2, 8}, {kFmtVQ4P, 4, 6}};
    const int inter = 72, width = 136; // not whole index blocks: exercises the padding
    std::mt19937 rng(7);
    for (const RecordKind &k : kinds) {
        const RecordLayout l = recordLayout(inter, width, k.stages, k.indexBits);
        EXPECT_EQ(l.gateOff, uint32_t(kRecordHeaderBytes));
        EXPECT_EQ(l.upOff - l.gateOff, indexBytes(inter, width, k.stages, k.indexBits));
        EXPECT_EQ(l.downOff - l.upOff, indexBytes(inter, width, k.stages, k.indexBits));
        EXPECT_EQ(l.scaleOff - l.downOff, indexBytes(width, inter, k.stages, k.indexBits));
        EXPECT_EQ(l.usedBytes, int64_t(l.scaleOff) + rowScaleBytes(inter, width));
        EXPECT_EQ(l.recordBytes % kRecordPageBytes, 0);
        EXPECT_GE(l.recordBytes, l.usedBytes);
        EXPECT_LT(l.recordBytes - l.usedBytes, kRecordPageBytes);

        std::vector<uint8_t> rec(static_cast<size_t>(l.recordBytes), 0);
        for (int64_t i = kRecordHeaderBytes; i < l.usedBytes; ++i)
            rec[static_cast<size_t>(i)] = static_cast<uint8_t>(rng());
        ExpertHeader h;
        h.magic = kExpertMagic;
        h.layer = 9;
        h.expertId = 300;
        h.fmt = k.fmt;
        h.flags = 0;
        h.codebookId = 27;
        h.lowrankId = 0;
        h.rec4kBlocks = static_cast<uint32_t>(l.recordBytes / kRecordPageBytes);
        h.gateOff = l.gateOff;
        h.upOff = l.upOff;
        h.downOff = l.downOff;
        h.scaleOff = l.scaleOff;
        h.crc32 = recordPayloadCrc(rec.data(), l.usedBytes);
        storeExpertHeader(h, rec.data());
        EXPECT_EQ(h.crc32, crc32(rec.data() + kRecordHeaderBytes, static_cast<size_t>(l.usedBytes - kRecordHeaderBytes)));
        EXPECT_EQ(loadU16(rec.data() + 14), 0); // reserved
        for (int i = 40; i < kRecordHeaderBytes; ++i)
            EXPECT_EQ(rec[static_cast<size_t>(i)], 0) << "reserved header byte " << i;

        const ExpertHeader r = parseExpertHeader(rec.data());
        EXPECT_EQ(r.magic, h.magic);
        EXPECT_EQ(r.layer, h.layer);
        EXPECT_EQ(r.expertId, h.expertId);
        EXPECT_EQ(r.fmt, h.fmt);
        EXPECT_EQ(r.flags, h.flags);
        EXPECT_EQ(r.codebookId, h.codebookId);
        EXPECT_EQ(r.lowrankId, h.lowrankId);
        EXPECT_EQ(r.rec4kBlocks, h.rec4kBlocks);
        EXPECT_EQ(r.gateOff, h.gateOff);
        EXPECT_EQ(r.upOff, h.upOff);
        EXPECT_EQ(r.downOff, h.downOff);
        EXPECT_EQ(r.scaleOff, h.scaleOff);
        EXPECT_EQ(r.crc32, h.crc32);

        RecordShape shape;
        shape.layer = 9;
        shape.recordBytes = l.recordBytes;
        shape.inter = inter;
        shape.width = width;
        shape.stages = k.stages;
        shape.indexBits = k.indexBits;
        shape.codebooks = 27 + 3 * k.stages;
        EXPECT_NO_THROW(checkExpertRecord(rec.data(), shape, 300, "bank", true)) << int(k.fmt);
        rec[static_cast<size_t>(l.usedBytes - 1)] ^= 1; // the last scale byte is covered by the crc
        EXPECT_THROW(checkExpertRecord(rec.data(), shape, 300, "bank", true), waste::Error) << int(k.fmt);
        EXPECT_NO_THROW(checkExpertRecord(rec.data(), shape, 300, "bank", false)) << int(k.fmt);
    }
}

TEST(FormatRecords, EveryNativeRecordFormatRoundTrips)
{
    // gate/up [inter, width], down [width, inter]; 200 rows and inputs: FP8's last block
    // of rows and of inputs is partial.
    const int inter = 96, width = 200;
    const uint8_t fmts[] = {kFmtMXFP4, kFmtFP8B128, kFmtINT4G32, kFmtBF16};
    const char *names[] = {"MXFP4", "FP8B128", "INT4G32", "BF16"};
    std::mt19937 rng(5);
    for (size_t k = 0; k < std::size(fmts); ++k) {
        const uint8_t fmt = fmts[k];
        SCOPED_TRACE(names[k]);
        EXPECT_TRUE(isNativeFmt(fmt));
        EXPECT_STREQ(nativeFmtName(fmt), names[k]);
        EXPECT_EQ(nativeFmtFromName(names[k]), fmt);
        if (fmt == kFmtMXFP4 || fmt == kFmtINT4G32) { // 200 inputs are not whole groups of 32
            EXPECT_THROW(nativeRecordLayout(fmt, inter, width), waste::Error);
            continue;
        }
        const NativeLayout l = nativeRecordLayout(fmt, inter, width);
        // The release's byte counts: payload and scales of each matrix.
        const int64_t rows[3] = {inter, inter, width}, cols[3] = {width, width, inter};
        for (int m = 0; m < 3; ++m) {
            const int64_t want = fmt == kFmtBF16 ? rows[m] * cols[m] * 2 : rows[m] * cols[m];
            EXPECT_EQ(l.payloadBytes[m], want);
            const int64_t blocks = ((rows[m] + 127) / 128) * ((cols[m] + 127) / 128);
            EXPECT_EQ(l.scaleBytes[m], fmt == kFmtFP8B128 ? 4 * blocks : 0);
            EXPECT_EQ(l.payloadOff[m] % kNativePartAlign, 0u);
            EXPECT_EQ(l.scaleOff[m] % kNativePartAlign, 0u);
        }
        EXPECT_GE(l.payloadOff[0], uint32_t(kRecordHeaderBytes));
        EXPECT_GE(l.payloadOff[1], l.payloadOff[0] + l.payloadBytes[0]);
        EXPECT_GE(l.payloadOff[2], l.payloadOff[1] + l.payloadBytes[1]);
        EXPECT_GE(l.scaleOff[0], l.payloadOff[2] + l.payloadBytes[2]);
        EXPECT_EQ(l.usedBytes, l.scaleOff[2] + l.scaleBytes[2]);
        EXPECT_EQ(l.recordBytes % kRecordPageBytes, 0);
        EXPECT_LT(l.recordBytes - l.usedBytes, kRecordPageBytes);
    }
    // Whole groups of 32: every format, written, read back from a bank file and checked.
    const int w32 = 160;
    const std::string dir = outDir("native");
    for (size_t k = 0; k < std::size(fmts); ++k) {
        const uint8_t fmt = fmts[k];
        SCOPED_TRACE(names[k]);
        const NativeLayout l = nativeRecordLayout(fmt, inter, w32);
        if (fmt == kFmtMXFP4) {
            EXPECT_EQ(l.payloadBytes[0], int64_t(inter) * w32 / 2);
            EXPECT_EQ(l.scaleBytes[0], int64_t(inter) * w32 / 32);
            EXPECT_EQ(l.scaleBytes[2], int64_t(w32) * inter / 32);
        }
        if (fmt == kFmtINT4G32) {
            EXPECT_EQ(l.payloadBytes[2], int64_t(w32) * inter / 2);
            EXPECT_EQ(l.scaleBytes[0], int64_t(inter) * w32 / 32 * 2); // bf16 per 32
        }
        const int experts = 3, layer = 2;
        std::vector<uint8_t> bank(static_cast<size_t>(l.recordBytes * experts), 0);
        for (int e = 0; e < experts; ++e) {
            uint8_t *rec = bank.data() + e * l.recordBytes;
            for (int m = 0; m < 3; ++m) {
                for (int64_t i = 0; i < l.payloadBytes[m]; ++i)
                    rec[l.payloadOff[m] + i] = static_cast<uint8_t>(rng());
                for (int64_t i = 0; i < l.scaleBytes[m]; ++i)
                    rec[l.scaleOff[m] + i] = static_cast<uint8_t>(rng());
            }
            ExpertHeader h = nativeHeader(fmt, l, layer, e);
            h.crc32 = recordPayloadCrc(rec, l.usedBytes);
            storeExpertHeader(h, rec);
        }
        writeFile(dir + "/" + bankFileName(layer), bank);

        // The manifest names the format; the writer and the parser agree on it.
        ManifestOut mo;
        mo.arch = "kimi-linear";
        mo.config = {{"num_hidden_layers", 3}, {"hidden_size", w32}, {"vocab_size", 8}, {"num_attention_heads", 1},
                     {"num_experts", experts}, {"num_experts_per_token", 1}, {"moe_intermediate_size", inter},
                     {"kv_lora_rank", 8}, {"v_head_dim", 8}, {"qk_nope_head_dim", 8}};
        mo.quant.native = fmt;
        mo.quant.fmtName = names[k];
        BankEntry be;
        be.file = bankFileName(layer);
        be.experts = experts;
        be.bytes = l.recordBytes * experts;
        mo.layers[std::to_string(layer)] = bankEntryJson(be);
        const std::string text = manifestText(mo);
        EXPECT_EQ(nlohmann::json::parse(text)["expert_quant"], nlohmann::json({{"fmt", names[k]}}));
        const Manifest m = parseManifest(text, "manifest.json");
        EXPECT_EQ(m.quant.native, fmt);
        EXPECT_TRUE(m.quant.isNative());
        ASSERT_EQ(m.banks.count(layer), 1u);
        EXPECT_EQ(m.banks.at(layer).recordBytes, l.recordBytes);

        RecordShape shape;
        shape.layer = layer;
        shape.recordBytes = l.recordBytes;
        shape.inter = inter;
        shape.width = w32;
        shape.native = fmt;
        ExpertBank b(dir, m.banks.at(layer), shape);
        std::vector<uint8_t> got(static_cast<size_t>(l.recordBytes));
        for (int e = 0; e < experts; ++e) {
            const ExpertHeader h = b.read(e, got.data(), true);
            EXPECT_EQ(h.fmt, fmt);
            EXPECT_EQ(h.codebookId, 0);
            EXPECT_EQ(std::memcmp(got.data(), bank.data() + e * l.recordBytes, static_cast<size_t>(l.recordBytes)), 0);
        }
        // A VQ reading of the same bank refuses it: the format ids do not overlap.
        RecordShape vq = shape;
        vq.native = 0;
        vq.codebooks = 9;
        const ExpertBank asVq(dir, m.banks.at(layer), vq);
        EXPECT_THROW(asVq.check(bank.data(), 0, false), waste::Error);
        // Another native format: its layout does not fit the stride (refused as the bank
        // opens), and a header naming another format is refused per record.
        RecordShape other = shape;
        other.native = fmt == kFmtBF16 ? kFmtFP8B128 : kFmtBF16;
        EXPECT_THROW(ExpertBank(dir, m.banks.at(layer), other), waste::Error);
        std::vector<uint8_t> bad(bank.begin(), bank.begin() + l.recordBytes);
        bad[8] = other.native; // the header's fmt byte
        EXPECT_THROW(b.check(bad.data(), 0, false), waste::Error);
        // A wrong expert, or a flipped byte in the last scales.
        EXPECT_THROW(b.check(bank.data(), 1, false), waste::Error);
        bad = std::vector<uint8_t>(bank.begin(), bank.begin() + l.recordBytes);
        bad[static_cast<size_t>(l.usedBytes - 1)] ^= 1;
        EXPECT_THROW(b.check(bad.data(), 0, true), waste::Error);
        EXPECT_NO_THROW(b.check(bad.data(), 0, false));
        bad = std::vector<uint8_t>(bank.begin(), bank.begin() + l.recordBytes);
        storeU32(bad.data() + 24, loadU32(bad.data() + 24) + 64); // up_off moved
        EXPECT_THROW(b.check(bad.data(), 0, false), waste::Error);
    }
}

TEST(FormatRecords, HalfTrunkEntriesKeepTheirEncodingThroughTheWriter)
{
    // fmt 1 alone is Q8G to the reference engine; the writer must add the encoding.
    for (TrunkFormat f : {TrunkFormat::F16, TrunkFormat::BF16, TrunkFormat::Q8G, TrunkFormat::F32}) {
        TrunkEntryOut e;
        e.name = "w";
        e.format = f;
        e.shape = {2, 4};
        e.bytes = 2 * trunkRowBytes(f, 4, kTrunkGroup);
        const nlohmann::json manifest = {
            {"format_version", 0},
            {"config", {{"num_hidden_layers", 1}, {"hidden_size", 8}, {"vocab_size", 8}, {"num_attention_heads", 1},
                        {"kv_lora_rank", 8}, {"v_head_dim", 8}, {"qk_nope_head_dim", 8}}},
            {"trunk", nlohmann::json::array({nlohmann::json::parse(trunkEntryJson(e).dump())})}};
        const Manifest m = parseManifest(manifest.dump(), "manifest.json");
        ASSERT_EQ(m.trunk.size(), 1u);
        EXPECT_EQ(m.trunk[0].format, f) << trunkFormatName(f);
    }
}

TEST(FormatRecords, CodebookRecordRoundTrips)
{
    const std::string dir = outDir("codebooks");
    ExpertQuant q; // VQ3R: 256 entries of 8
    const int64_t recBytes = codebookRecordBytes(q.entries, q.vecDim);
    EXPECT_EQ(recBytes, kCodebookHeaderBytes + 256 * 8 * 2);
    std::vector<uint8_t> file(static_cast<size_t>(2 * recBytes));
    std::vector<float> want;
    for (int b = 0; b < 2; ++b) {
        uint8_t *rec = file.data() + b * recBytes;
        storeCodebookHeader(rec, b + 5, kFmtVQ3R, q.vecDim, q.entries);
        EXPECT_EQ(loadU32(rec), kCodebookMagic);
        EXPECT_EQ(loadU16(rec + 4), b + 5);
        EXPECT_EQ(rec[6], kFmtVQ3R);
        EXPECT_EQ(rec[7], q.vecDim);
        EXPECT_EQ(loadU32(rec + 8), uint32_t(q.entries));
        EXPECT_EQ(loadU32(rec + 12), 0u);
        for (int i = 0; i < q.entries * q.vecDim; ++i) {
            // Includes subnormals (flushed by the reader) and exponent 31 (kept).
            const uint16_t h = static_cast<uint16_t>((i * 0x9e37u + b * 0x3141u) & 0xffffu);
            storeU16(rec + kCodebookHeaderBytes + i * 2, h);
            want.push_back(f16ToFloatFlushSubnormal(h));
        }
    }
    writeFile(dir + "/codebooks.bin", file);
    const Codebooks books(dir + "/codebooks.bin", q);
    ASSERT_EQ(books.count(), 2);
    for (int b = 0; b < 2; ++b)
        for (int c = 0; c < q.entries; ++c)
            for (int d = 0; d < q.vecDim; ++d) {
                const float w = want[static_cast<size_t>((b * q.entries + c) * q.vecDim + d)];
                const float g = books.entry(b, c)[d];
                ASSERT_EQ(std::signbit(g), std::signbit(w));
                ASSERT_EQ(g, w) << b << " " << c << " " << d;
            }
}

TEST(FormatRecords, EveryTrunkFormatRoundTrips)
{
    const std::string dir = outDir("trunk");
    const TrunkFormat formats[] = {TrunkFormat::F32, TrunkFormat::Q8G, TrunkFormat::Q4G,
                                   TrunkFormat::Q3G, TrunkFormat::F16, TrunkFormat::BF16};
    const int64_t rows = 3, cols = 200, group = 64; // 4 groups, the last one partial
    std::vector<uint8_t> bin;
    nlohmann::json entries = nlohmann::json::array();
    std::vector<std::vector<float>> want;
    std::mt19937 rng(11);
    for (TrunkFormat f : formats) {
        const int id = trunkFormatId(f);
        EXPECT_EQ(trunkFormatOf(id, f == TrunkFormat::F16 ? "f16" : f == TrunkFormat::BF16 ? "bf16" : ""), f);
        const int64_t rowBytes = trunkRowBytes(f, cols, group);
        const int64_t ng = trunkGroups(cols, group);
        nlohmann::json e = {{"name", std::string(trunkFormatName(f))}, {"fmt", id}, {"shape", {rows, cols}},
                            {"off", bin.size()}, {"group", group}};
        if (f == TrunkFormat::F16)
            e["encoding"] = "f16";
        if (f == TrunkFormat::BF16)
            e["encoding"] = "bf16";
        std::vector<uint8_t> payload(static_cast<size_t>(rows * rowBytes), 0);
        std::vector<uint16_t> scales(static_cast<size_t>(rows * ng));
        std::vector<float> values(static_cast<size_t>(rows * cols));
        for (auto &s : scales)
            s = floatToF16(std::ldexp(1.0f + float(rng() % 1024) / 1024.0f, int(rng() % 8) - 4));
        for (int64_t r = 0; r < rows; ++r) {
            uint8_t *p = payload.data() + r * rowBytes;
            for (int64_t i = 0; i < cols; ++i) {
                const float scale = isGrouped(f) ? f16ToFloat(scales[static_cast<size_t>(r * ng + i / group)]) : 0.0f;
                float v = 0.0f;
                switch (f) {
                case TrunkFormat::F32:
                    v = float(int(rng() % 2001) - 1000) / 64.0f;
                    std::memcpy(p + i * 4, &v, 4);
                    break;
                case TrunkFormat::F16: {
                    const uint16_t h = floatToF16(float(int(rng() % 2001) - 1000) / 64.0f);
                    storeU16(p + i * 2, h);
                    v = f16ToFloat(h);
                    break;
                }
                case TrunkFormat::BF16: {
                    const uint16_t h = floatToBf16(float(int(rng() % 2001) - 1000) / 64.0f);
                    storeU16(p + i * 2, h);
                    v = bf16ToFloat(h);
                    break;
                }
                case TrunkFormat::Q8G: {
                    const int q = int(rng() % 255) - 127;
                    p[i] = static_cast<uint8_t>(static_cast<int8_t>(q));
                    v = float(q) * scale;
                    break;
                }
                case TrunkFormat::Q4G: {
                    const int q = int(rng() % 16) - 8;
                    p[i / 2] = static_cast<uint8_t>(p[i / 2] | ((q + 8) << ((i & 1) * 4)));
                    v = float(q) * scale;
                    break;
                }
                case TrunkFormat::Q3G: {
                    const int q = int(rng() % 8) - 4;
                    const int64_t bit = 3 * i;
                    const unsigned w = unsigned(q + 4) << (bit & 7);
                    p[bit >> 3] = static_cast<uint8_t>(p[bit >> 3] | (w & 0xffu));
                    p[(bit >> 3) + 1] = static_cast<uint8_t>(p[(bit >> 3) + 1] | (w >> 8));
                    v = float(q) * scale;
                    break;
                }
                }
                values[static_cast<size_t>(r * cols + i)] = v;
            }
        }
        bin.insert(bin.end(), payload.begin(), payload.end());
        if (isGrouped(f)) {
            e["scale_off"] = bin.size();
            const size_t at = bin.size();
            bin.resize(at + static_cast<size_t>(trunkScaleBytes(rows, cols, group)));
            for (size_t i = 0; i < scales.size(); ++i)
                storeU16(bin.data() + at + i * 2, scales[i]);
        }
        entries.push_back(e);
        want.push_back(values);
    }
    writeFile(dir + "/trunk.bin", bin);
    const nlohmann::json manifest = {
        {"format_version", 0},
        {"config", {{"num_hidden_layers", 1}, {"hidden_size", 8}, {"vocab_size", 8}, {"num_attention_heads", 1},
                    {"kv_lora_rank", 8}, {"v_head_dim", 8}, {"qk_nope_head_dim", 8}}},
        {"trunk", entries}};
    const Manifest m = parseManifest(manifest.dump(), "manifest.json");
    const Trunk trunk(dir + "/trunk.bin", m);
    for (size_t k = 0; k < std::size(formats); ++k) {
        const TrunkFormat f = formats[k];
        const TrunkEntry *e = m.find(trunkFormatName(f));
        ASSERT_TRUE(e);
        EXPECT_EQ(e->format, f);
        EXPECT_EQ(e->rawFmt, trunkFormatId(f));
        EXPECT_EQ(Trunk::rowBytesOf(*e), trunkRowBytes(f, cols, group));
        for (bool resident : {true, false}) {
            const auto t = trunk.load(trunkFormatName(f), resident);
            ASSERT_TRUE(t);
            EXPECT_EQ(t->rows, rows);
            EXPECT_EQ(t->cols, cols);
            std::vector<float> row(static_cast<size_t>(cols));
            for (int64_t r = 0; r < rows; ++r) {
                t->readRow(r, row.data());
                for (int64_t i = 0; i < cols; ++i)
                    ASSERT_EQ(row[static_cast<size_t>(i)], want[k][static_cast<size_t>(r * cols + i)])
                        << trunkFormatName(f) << " row " << r << " col " << i;
            }
        }
    }
}

TEST(FormatRecords, OddQ4GRowsAreRefusedEverywhere)
{
    EXPECT_THROW(checkTrunkRow(TrunkFormat::Q4G, 3, 1, "t"), waste::Error);
    EXPECT_NO_THROW(checkTrunkRow(TrunkFormat::Q4G, 3, 2, "t"));
    EXPECT_NO_THROW(checkTrunkRow(TrunkFormat::Q8G, 3, 1, "t"));
    EXPECT_EQ(trunkRowBytes(TrunkFormat::Q4G, 130, kTrunkGroup), 128);
    EXPECT_EQ(trunkRowBytes(TrunkFormat::Q8G, 130, kTrunkGroup), 256);
    EXPECT_EQ(trunkRowBytes(TrunkFormat::Q3G, 130, kTrunkGroup), 97);
    EXPECT_EQ(trunkScaleBytes(5, 130, kTrunkGroup), 20);
}
