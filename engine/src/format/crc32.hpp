// zlib crc32 (reflected polynomial 0xEDB88320): the expert records' payload checksum,
// written by the converter and checked by `verifyRecords` / --verify.
//
// crc32() picks the fastest way this CPU has, once: carry-less multiplication folding
// (PCLMULQDQ) on x86-64, the ARMv8 CRC32 instructions on aarch64, else slice-by-8 tables.
// Every way gives the same bits (tst_crc32). WASTE_CRC32=scalar forces the tables (to
// measure what the faster ways bring).
#pragma once

#include <cstddef>
#include <cstdint>

namespace waste::format {

uint32_t crc32(const void *data, size_t size, uint32_t crc = 0);

// The ways, for tests and benchmarks. Each is null where this build or CPU lacks it.
using Crc32Fn = uint32_t (*)(const void *data, size_t size, uint32_t crc);
Crc32Fn crc32Scalar();    // slice-by-8 tables, everywhere
Crc32Fn crc32Pclmul();    // x86-64 with SSE4.1 and PCLMULQDQ
Crc32Fn crc32Armv8();     // aarch64 with the CRC32 extension
const char *crc32Name();  // the way crc32() uses: "pclmul", "armv8-crc", "scalar"
// Benchmarks: crc32() uses the tables while on (as WASTE_CRC32=scalar does from the start).
void forceCrc32Scalar(bool on);

} // namespace waste::format
