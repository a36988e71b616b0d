#!/usr/bin/env bash
# tst_aarch64_kernels: the engine's kernels and their tests built for aarch64 with Debian's
# cross compiler and run under qemu-aarch64, so the NEON kernels (quant/kernels_neon.cpp,
# quant/native_rows_neon.cpp) are checked on every CI run, not only on ARM machines:
#   tst_simd         NEON vs scalar (lutRow bit for bit);
#   tst_native_rows  every native code exact in every NEON lane, random rows vs float64;
#   tst_lut          the VQ table kernels against reconstructed weights;
#   tst_crc32        the ARMv8 CRC32 instructions against the tables, bit for bit;
#   tst_panel_gemm   the prompt pass's panel product and panel decoders (NEON) against scalar,
#                    bit for bit.
# The cross build lives in its own dir (argument 2) and holds only the kernel sources (quant,
# format, compute) and these tests (WASTE_KERNELS_ONLY): cross-building the whole engine
# for a whole eval under qemu cost minutes of every CI run, and the NEON code an eval reaches
# is the code these tests check bit for bit against scalar. ccache makes later runs mostly
# cache hits.
# Missing tools: prints why and exits 77, which ctest reports as skipped (SKIP_RETURN_CODE).
#   aarch64_kernels.sh SOURCE_DIR CROSS_BUILD_DIR
set -euo pipefail
src=$1 out=$2
tests=(tst_simd tst_native_rows tst_lut tst_crc32 tst_panel_gemm)

skip() {
  echo "tst_aarch64_kernels SKIPPED: $*; installer/install-deps.sh --with-tests installs it"
  exit 77
}
command -v aarch64-linux-gnu-g++ >/dev/null || skip "no aarch64 cross compiler (package g++-aarch64-linux-gnu)"
command -v qemu-aarch64 >/dev/null || command -v qemu-aarch64-static >/dev/null ||
  skip "no qemu-aarch64 (package qemu-user)"
[ -f /usr/src/googletest/CMakeLists.txt ] || skip "no GoogleTest sources in /usr/src/googletest (package libgtest-dev)"

start=$(date +%s)
opts=(-G Ninja -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchain-aarch64.cmake" -DCMAKE_BUILD_TYPE=RelWithDebInfo
      -DWASTE_BUILD_APP=OFF -DWASTE_BUILD_TESTS=ON -DWASTE_BUILD_BENCH=OFF -DWASTE_SANITIZE=
      -DWASTE_KERNELS_ONLY=ON)
command -v ccache >/dev/null && opts+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$src" -B "$out" "${opts[@]}" >/dev/null
cmake --build "$out" -j"$(nproc)" --target "${tests[@]}" | tail -n 3

# The programs really are aarch64 ones (a host build here would test nothing new).
file -L "$out/tests/engine/tst_native_rows" | grep -q "ARM aarch64" || {
  echo "tst_native_rows is not an aarch64 program: $(file -L "$out/tests/engine/tst_native_rows")"
  exit 1
}

# ctest runs them through qemu (CMAKE_CROSSCOMPILING_EMULATOR in the toolchain file); the
# whole output goes to a log so the level line can be checked, and is shown on failure.
regex="^($(IFS='|'; echo "${tests[*]}"))\$"
log="$out/aarch64-ctest.log"
if ! ctest --test-dir "$out" -R "$regex" --no-tests=error -V -j"$(nproc)" >"$log" 2>&1; then
  tail -n 200 "$log"
  echo "tst_aarch64_kernels: a test failed under qemu-aarch64 (whole log: $log)"
  exit 1
fi
grep -E "Test +#[0-9]+: |tests passed|native rows at: |crc32 way: " "$log" | sed 's/^[0-9]*: //'

# And the NEON level was the one under test, not a silent scalar fallback.
grep -q "native rows at: .*NEON" "$log" || { echo "the aarch64 run did not cover NEON"; exit 1; }
grep -q "crc32 way: armv8-crc" "$log" || { echo "the aarch64 run did not cover the ARMv8 crc32"; exit 1; }
echo "tst_aarch64_kernels: passed in $(( $(date +%s) - start )) s"
