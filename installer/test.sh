#!/usr/bin/env bash
# Sets everything up (Debian packages, build) and runs every test with ctest.
# Extra arguments go to ctest (e.g. -R engine). WASTE_SANITIZE=address,undefined builds
# with sanitizers into build-sanitize/; ctest then hands every test tests/sanitize/lsan.supp
# (Qt's own leaks) through LSAN_OPTIONS (tests/sanitize/ctest_env.cmake.in).
#
# A run that executes no test fails, and so does a whole-suite run (no extra arguments)
# that executes fewer tests than tests/expected-test-count says the suite has.
set -euo pipefail
cd "$(dirname "$0")/.."
bash installer/install-deps.sh --with-tests
dir=build
opts=(-DWASTE_BUILD_APP=ON -DWASTE_BUILD_TESTS=ON -DWASTE_BUILD_BENCH=ON -DWASTE_SANITIZE=)
if [ -n "${WASTE_SANITIZE:-}" ]; then
  dir=build-sanitize
  opts=(-DWASTE_BUILD_APP=ON -DWASTE_BUILD_TESTS=ON -DWASTE_BUILD_BENCH=OFF -DWASTE_SANITIZE="$WASTE_SANITIZE")
fi
# Every option is stated: build/ is shared with installer/run.sh, which turns the tests off,
# and CMake keeps cached options unless a command names them.
# ccache, when installed, makes rebuilds after a pull or a second clone fast.
command -v ccache >/dev/null && opts+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${opts[@]}" >/dev/null
bash installer/build.sh "$dir"
mkdir -p -m 700 "$PWD/$dir/test-output/xdg"
export XDG_RUNTIME_DIR="$PWD/$dir/test-output/xdg" QT_QPA_PLATFORM=offscreen
log="$PWD/$dir/test-output/ctest-summary.log"
ctest --test-dir "$dir" --no-tests=error --output-on-failure -j"$(nproc)" "$@" | tee "$log"
ran=$(sed -n 's/.*tests failed out of \([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)
ran=${ran:-0}
echo "test.sh: ctest ran $ran tests"
if [ $# -eq 0 ]; then
  expected=$(tr -dc '0-9' < tests/expected-test-count)
  if [ "$ran" -lt "$expected" ]; then
    echo "test.sh: the whole suite should run $expected tests (tests/expected-test-count);" \
         "only $ran ran. Was a test folder or option left out of the build?" >&2
    exit 1
  fi
fi
